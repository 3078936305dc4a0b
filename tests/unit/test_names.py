"""One meaning per name: no two classes of explorer/ share a name (two ``Shown`` classes, one a number in a refusal
and one the run a page shows, were a newcomer's puzzle), and no module imports, from the app's own code, a function or
class named as the module itself (``following`` once imported the function ``following``; ``views/bertviz.py``
importing the module ``plots/bertviz.py`` is one idea on two floors). Each check also runs on a small
tree that breaks it, to show that it can fail."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from guards import write_tree

ROOT = Path(__file__).resolve().parents[2]
# classes that share a name for now, and why
SHARED_CLASS_NAMES = {
    "Term": "words/terms.py's row of the term table and words/glossary.py's glossary entry: noticed with issue 57, "
            "left for the words' own issue",
}


def _modules(root: Path):
    for path in sorted((root / "explorer").rglob("*.py")):
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def classes_sharing_a_name(root: Path) -> dict[str, list[str]]:
    found = defaultdict(list)
    for rel, tree in _modules(root):
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found[node.name].append(rel)
    return {name: files for name, files in found.items() if len(files) > 1 and name not in SHARED_CLASS_NAMES}


def modules_importing_their_own_name(root: Path) -> list[str]:
    found = []
    for rel, tree in _modules(root):
        stem = Path(rel).stem
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("explorer"):
                package = root / node.module.replace(".", "/")
                found += [f"{rel}: {alias.name}" for alias in node.names if (alias.asname or alias.name) == stem
                          and not (package / f"{alias.name}.py").exists()]   # a module of another floor is fine
    return found


def test_no_two_classes_share_a_name():
    assert classes_sharing_a_name(ROOT) == {}


def test_no_module_imports_a_name_of_its_own_module_name():
    assert modules_importing_their_own_name(ROOT) == []


def test_each_shared_name_is_still_shared():
    found = defaultdict(list)
    for rel, tree in _modules(ROOT):
        found.update({n.name: found[n.name] + [rel] for n in tree.body if isinstance(n, ast.ClassDef)})
    assert all(len(found[name]) > 1 for name in SHARED_CLASS_NAMES)


def test_the_checks_fail_on_a_tree_that_breaks_them(tmp_path):
    write_tree(tmp_path, {
        "explorer/a/config.py": "class Shown:\n    pass\n",
        "explorer/b/view.py": "class Shown:\n    pass\n",
        "explorer/c/following.py": "from explorer.c.membership import following\n",
        "explorer/c/membership.py": "def following():\n    return True\n",
    })
    assert classes_sharing_a_name(tmp_path) == {"Shown": ["explorer/a/config.py", "explorer/b/view.py"]}
    assert modules_importing_their_own_name(tmp_path) == ["explorer/c/following.py: following"]
