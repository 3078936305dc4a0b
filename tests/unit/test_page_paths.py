"""Every page path lives in the table of pages: read with ``ast``, no module of explorer/, pages/ or app.py but
explorer/sitemap/table.py writes a page's path ("pages/heatmaps.py", or "heatmaps.py" for a file of pages/) as a
string; a module that links to a page takes its row by name (``table.HEATMAPS.file``). A path typed elsewhere is how
a renamed page leaves a dead link behind. Docstrings may name paths (tests/unit/test_named_paths.py checks that
those exist). The check runs on this repository and, to show that it can fail, on small sources."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = "explorer/sitemap/table.py"
# named exceptions, each with its reason
EXCEPTIONS: dict[str, str] = {}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are a module's, class's or function's docstring."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def page_paths(source: str, page_files: set[str]) -> list[tuple[int, str]]:
    """(line, path) of every page path written in a string of ``source`` (docstrings aside): ``pages/<name>.py``
    or ``<name>.py`` where ``<name>.py`` is one of ``page_files``."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for match in re.finditer(r"(?:pages/)?(\w+\.py)\b", node.value):
                if match.group(1) in page_files:
                    found.append((node.lineno, match.group(0)))
    return sorted(found)


def typed_paths(root: Path) -> list[str]:
    """Every page path typed outside the table in the tree at ``root``, as ``file:line: path``."""
    page_files = {p.name for p in (root / "pages").glob("*.py")}
    files = [*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), *root.glob("app.py")]
    problems = []
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        if rel == TABLE or rel in EXCEPTIONS:
            continue
        problems += [f"{rel}:{line}: {found}" for line, found in page_paths(path.read_text(), page_files)]
    return problems


def test_no_page_path_is_typed_outside_the_table():
    assert typed_paths(ROOT) == []


def test_every_exception_is_still_needed():
    page_files = {p.name for p in (ROOT / "pages").glob("*.py")}
    for rel, reason in EXCEPTIONS.items():
        assert reason and page_paths((ROOT / rel).read_text(), page_files), f"{rel} no longer types a page path"


@pytest.mark.parametrize("source, caught", [
    ('PAGE = "pages/heatmaps.py"\n', ["pages/heatmaps.py"]),
    ('st.switch_page("heatmaps.py")\n', ["heatmaps.py"]),
    ('NEEDS = {"pages/flip.py": 1, "other.py": 2}\n', ["pages/flip.py"]),
    ('x = f"see {a} on pages/flip.py"\n', ["pages/flip.py"]),
])
def test_a_typed_page_path_is_caught(source, caught):
    assert [p for _, p in page_paths(source, {"heatmaps.py", "flip.py"})] == caught


def test_docstrings_and_other_files_are_left_alone():
    source = '"""Opens pages/heatmaps.py."""\ndef f():\n    """Links to heatmaps.py."""\n    return "notes.py"\n'
    assert page_paths(source, {"heatmaps.py"}) == []


def test_the_check_fails_on_a_small_tree(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "heatmaps.py").write_text("")
    (tmp_path / "explorer" / "ui").mkdir(parents=True)
    (tmp_path / "explorer" / "ui" / "link.py").write_text('PAGE = "pages/heatmaps.py"\n')
    (tmp_path / "explorer" / "sitemap").mkdir()
    (tmp_path / TABLE).write_text('ROW = "pages/heatmaps.py"\n')
    assert typed_paths(tmp_path) == ["explorer/ui/link.py:1: pages/heatmaps.py"]
