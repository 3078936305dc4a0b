"""docs/architecture.md names every module of explorer/: each ``.py`` file but ``__init__.py`` is written in
backticks (``knockout.py``) in the table row of its package (``heads_do/``; ``root`` for the core's root), where a
few plain words say what it holds. A module added without a line in the map fails here; the check is shown to fail
on a map that leaves one out."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\|\s*(?P<package>[^|]+?)\s*\|(?P<text>.*)\|\s*$", re.M)


def rows(doc: str) -> dict[str, str]:
    """``{package: row text}`` for every table row of ``doc``: ``model/``, ``ui/live/``, ``""`` for ``root``."""
    out: dict[str, str] = {}
    for m in ROW.finditer(doc):
        package = m["package"].strip("`")
        out[package if package != "root" else ""] = out.get(package, "") + m["text"]
    return out


def unnamed_modules(root: Path) -> list[str]:
    """Every module of ``root``/explorer/ that docs/architecture.md does not name in its package's row."""
    table = rows((root / "docs" / "architecture.md").read_text())
    missing = []
    for path in sorted((root / "explorer").rglob("*.py")):
        if path.name == "__init__.py":
            continue
        rel = path.relative_to(root / "explorer")
        package = "".join(f"{part}/" for part in rel.parts[:-1])
        if f"`{path.name}`" not in table.get(package, ""):
            missing.append(rel.as_posix())
    return missing


def test_docs_architecture_names_every_module():
    assert unnamed_modules(ROOT) == []


def test_the_check_finds_a_module_the_map_leaves_out(tmp_path):
    for name in ("explorer/maths.py", "explorer/model/families.py", "explorer/ui/live/push.py",
                 "explorer/model/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "docs").mkdir()
    doc = ("| package | modules |\n|---|---|\n| root | `maths.py`: the one softmax |\n"
           "| `model/` | `families.py`: the table |\n| `ui/live/` | `push.py`: reruns |\n")
    (tmp_path / "docs" / "architecture.md").write_text(doc)
    assert unnamed_modules(tmp_path) == []
    (tmp_path / "docs" / "architecture.md").write_text(doc.replace("`push.py`: reruns", "reruns"))
    assert unnamed_modules(tmp_path) == ["ui/live/push.py"]
    (tmp_path / "docs" / "architecture.md").write_text(doc.replace("| `model/` |", "| `models/` |"))
    assert unnamed_modules(tmp_path) == ["model/families.py"]   # named, but in another package's row
