"""Every file path and every ``explorer.…`` module that the docs (docs/*.md, the README files) and the code's docstrings
and comments (explorer/) name exists: a module moved or a test file renamed leaves no stale name behind.

A path counts when it starts at a top folder of the repository (``tests/unit/test_lru.py``, ``docs/x.md``) or is a
test file's bare name (``test_security.py``, found anywhere under tests/); a pattern with ``*`` must match a file.
A dotted name ``explorer.a.b.c`` must be a module, or a module followed by a name it defines (``def``, ``class``,
an assignment or an import)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("explorer", "tests", "docs", "pages", "bench", "tools", "deploy", "assets", ".github", ".streamlit")
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w.*/-]*[\w*]|test_[\w*]+\.py|app\.py|dev\.sh)" %
                  "|".join(re.escape(t) for t in TOPS))
MODULE = re.compile(r"(?<![\w./])explorer(?:\.\w+)+")
HOSTS = {"example", "com", "org", "net", "edu", "local", "lan"}   # explorer.school.example is a host name


def sources(root: Path) -> list[Path]:
    readmes = [p for p in root.glob("**/README.md") if not ({".venv", "node_modules", ".git"} & set(p.parts))]
    return sorted({*root.glob("docs/*.md"), *readmes, *root.glob("explorer/**/*.py")})


def path_exists(root: Path, name: str) -> bool:
    name = name.rstrip(".")
    if "/" not in name:   # a bare test file's name (or app.py, dev.sh at the root)
        return any(root.glob(name)) or any((root / "tests").rglob(name))
    return any(root.glob(name)) if "*" in name else (root / name).exists()


def defines(path: Path, name: str) -> bool:
    text = path.read_text()
    return re.search(rf"^\s*(?:async def|def|class)\s+{name}\b|^\s*{name}\s*[:=]|^{name}\s*,|import[^\n]*\b{name}\b",
                     text, re.M) is not None


def module_exists(root: Path, dotted: str) -> bool:
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:n])
        for found in (base.with_suffix(".py"), base / "__init__.py"):
            if found.exists():
                rest = parts[n:]
                return not rest or defines(found, rest[0])
    return False


def stale_names(root: Path) -> list[str]:
    """``file: name`` for every named path or module that does not exist."""
    out = []
    for source in sources(root):
        text = source.read_text()
        where = source.relative_to(root)
        placeholders = {m.group() for m in PATH.finditer(text) if text[m.end():m.end() + 1] in {"<", "{"}}
        for name in sorted(set(PATH.findall(text)) - placeholders):   # pages/lab_<name>.py names a kind of file
            if not path_exists(root, name):
                out.append(f"{where}: {name}")
        for name in sorted(set(MODULE.findall(text))):
            if name.rsplit(".", 1)[1] not in HOSTS and not module_exists(root, name):
                out.append(f"{where}: {name}")
    return out


def test_every_named_path_and_module_exists():
    assert stale_names(ROOT) == []


def test_the_check_finds_a_stale_path_a_stale_module_and_a_pattern_that_matches_nothing(tmp_path):
    (tmp_path / "explorer" / "plots").mkdir(parents=True)
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "explorer" / "__init__.py").write_text("")
    (tmp_path / "explorer" / "plots" / "__init__.py").write_text("")
    (tmp_path / "explorer" / "plots" / "heads.py").write_text("def head_map():\n    pass\n")
    (tmp_path / "tests" / "unit" / "test_heads.py").write_text("")
    (tmp_path / "README.md").write_text("See `explorer.plots.heads.head_map` and tests/unit/test_heads.py "
                                        "(test_heads.py), `tests/unit/test_*.py`.\n")
    (tmp_path / "docs" / "a.md").write_text("Old: `explorer.quiz`, tests/test_plots.py, `tests/test_*.py`, "
                                            "explorer.plots.heads.head_grid. Not names: pages/lab_<lab>.py, "
                                            "explorer.school.example.\n")
    assert stale_names(tmp_path) == ["docs/a.md: tests/test_*.py", "docs/a.md: tests/test_plots.py",
                                     "docs/a.md: explorer.plots.heads.head_grid", "docs/a.md: explorer.quiz"]
