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


def floor_of(rel: Path) -> str:
    """Where one idea may have a module of its own name: ``plots`` (its figures), ``views`` (its page's drawing in
    ui/views/) or ``core`` (every other package of the core); ui/'s root and ui/live/ are ``ui``."""
    parts = rel.parts
    if parts[0] == "plots":
        return "plots"
    if parts[0] == "ui":
        return "views" if parts[1:2] == ("views",) else "ui"
    return "core"


# a name used by two modules for now, with the reason (a newcomer reads this list before wondering)
REPEATED: dict[str, str] = {}


def repeated_names(root: Path, allowed: dict[str, str] = REPEATED) -> list[str]:
    """Module names that mean two things: a name used twice on one floor, or a name of ui/'s root or ui/live/ used
    anywhere else. One idea may keep its name across floors (``attention/heads.py``, ``plots/heads.py``)."""
    seen: dict[str, list[Path]] = {}
    for path in sorted((root / "explorer").rglob("*.py")):
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(path.relative_to(root / "explorer"))
    found = []
    for name, places in seen.items():
        floors = [floor_of(p) for p in places]
        if len(places) > 1 and (len(set(floors)) < len(floors) or "ui" in floors) and name not in allowed:
            found.append(f"{name}: {', '.join(p.as_posix() for p in places)}")
    return sorted(found)


def test_each_module_name_means_one_thing():
    assert repeated_names(ROOT) == []


def test_the_name_check_finds_two_meanings(tmp_path):
    for rel in ("lessons/pages.py", "words/pages.py", "labs/quiz.py", "ui/quiz.py", "heads_do/x.py", "plots/x.py",
                "ui/views/x.py"):
        (tmp_path / "explorer" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "explorer" / rel).write_text("")
    assert repeated_names(tmp_path, {}) == ["pages.py: lessons/pages.py, words/pages.py",
                                            "quiz.py: labs/quiz.py, ui/quiz.py"]
