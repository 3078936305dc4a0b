"""The house rules, read from every import with ``ast``: the core never imports Streamlit or plotly, figures live in
explorer/plots/, widgets in explorer/ui/, no layer imports one above it, and no modules import each other in a
circle. The checker runs on this repository and, to show that it can fail, on small broken trees."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from guards import write_tree

ROOT = Path(__file__).resolve().parents[2]
# Layers from the bottom up; a module may import its own layer or lower ones only.
LAYERS = {"core": 0, "plots": 1, "ui": 2, "pages": 3}
# The core's own floors, bottom up: a core module may import its own package and the packages of lower floors,
# never a package on its floor or above (so no two packages import each other). "root" is the core's root modules
# (maths.py, examples.py: what every floor shares).
CORE_FLOORS = (("words",), ("root",), ("serving", "access", "classroom", "learning"), ("model", "web"), ("labs",),
               ("attention", "sitemap", "jobs"), ("heads_do", "sentences", "geometry"),
               ("generation", "attribution", "atlas", "patching"), ("lessons",))
CORE_FLOOR = {package: floor for floor, packages in enumerate(CORE_FLOORS) for package in packages}
# Third-party packages that only some layers may import.
ONLY_IN = {"streamlit": {"ui", "pages"}, "plotly": {"plots", "ui", "pages"}}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] in {"pages", "app"}:
        return "pages"
    return {"plots": "plots", "ui": "ui"}.get(parts[1] if len(parts) > 1 else "", "core")


def core_package(module: str, modules: dict[str, Path]) -> str | None:
    """The core package a module of the core belongs to ("root" for a module at explorer/'s root), or None for
    the ``explorer`` package itself and for modules of the upper layers."""
    parts = module.split(".")
    if parts[0] != "explorer" or len(parts) < 2 or layer_of(module) != "core":
        return None
    return parts[1] if modules.get(f"explorer.{parts[1]}", Path()).name == "__init__.py" else "root"


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, module: str) -> set[str]:
    """Every module ``path`` imports, anywhere in it (functions included), relative imports made absolute."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}   # `from explorer import maths`
    # a module's own parent packages ran before it (`from . import errors` adds no dependency on the package)
    return {dep for dep in found if not module.startswith(f"{dep}.")}


def check_tree(root: Path) -> list[str]:
    """Every broken rule in the tree at ``root`` (its explorer/, pages/ and app.py), one sentence each."""
    files = [*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), *root.glob("app.py")]
    modules = {module_name(f, root): f for f in files}
    graph: dict[str, set[str]] = {}
    problems = []
    for module, path in modules.items():
        layer = layer_of(module)
        deps = imports_of(path, module)
        for dep in deps:
            top = dep.split(".")[0]
            if top in ONLY_IN and layer not in ONLY_IN[top]:
                problems.append(f"{module} ({layer}) imports {top}, which only {sorted(ONLY_IN[top])} may")
        local = {d for d in deps if d in modules and d != module}
        for dep in local:
            if LAYERS[layer_of(dep)] > LAYERS[layer]:
                problems.append(f"{module} ({layer}) imports {dep} ({layer_of(dep)}), a higher layer")
        problems += core_floor_problems(module, local, modules)
        graph[module] = local
    problems += [f"import circle: {' -> '.join(c)}" for c in circles(graph)]
    return sorted(set(problems))


def core_floor_problems(module: str, deps: set[str], modules: dict[str, Path]) -> list[str]:
    """One sentence per import of the core module ``module`` that reaches a core package on its own floor or above
    (``CORE_FLOORS``), and one for a core package the floors do not name."""
    package = core_package(module, modules)
    if package is None:
        return []
    if package not in CORE_FLOOR:
        return [f"{module}: its package {package} is on no floor of CORE_FLOORS"]
    found = []
    for dep in deps:
        other = core_package(dep, modules)
        if other is not None and other != package and CORE_FLOOR.get(other, -1) >= CORE_FLOOR[package]:
            found.append(f"{module} ({package}, floor {CORE_FLOOR[package]}) imports {dep} ({other}, floor "
                         f"{CORE_FLOOR.get(other)}), not a lower floor")
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected group of modules that import each other (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_this_repository_keeps_the_rules():
    assert check_tree(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    return write_tree(tmp_path, {"explorer/__init__.py": "", **files})


@pytest.mark.parametrize("files, expected", [
    ({"explorer/maths.py": "import streamlit as st\n"}, "explorer.maths (core) imports streamlit"),
    ({"explorer/maths.py": "def f():\n    import plotly.graph_objects as go\n"},
     "explorer.maths (core) imports plotly"),
    ({"explorer/ui/__init__.py": "", "explorer/ui/w.py": "import plotly.express\n"}, None),
    ({"explorer/plots/__init__.py": "", "explorer/plots/p.py": "from explorer.ui import w\n",
      "explorer/ui/__init__.py": "", "explorer/ui/w.py": ""}, "explorer.plots.p (plots) imports explorer.ui.w (ui)"),
    ({"explorer/labs/__init__.py": "", "explorer/labs/lab.py": "from explorer.plots import p\n",
      "explorer/plots/__init__.py": "", "explorer/plots/p.py": ""},
     "explorer.labs.lab (core) imports explorer.plots.p"),
    ({"explorer/model/__init__.py": "", "explorer/model/m.py": "from explorer.labs import lab\n",
      "explorer/labs/__init__.py": "", "explorer/labs/lab.py": ""},
     "explorer.model.m (model, floor 3) imports explorer.labs.lab (labs, floor 4), not a lower floor"),
    ({"explorer/serving/__init__.py": "", "explorer/serving/s.py": "from explorer.classroom import c\n",
      "explorer/classroom/__init__.py": "", "explorer/classroom/c.py": ""},
     "explorer.serving.s (serving, floor 2) imports explorer.classroom.c (classroom, floor 2)"),
    ({"explorer/labs/__init__.py": "", "explorer/labs/lab.py": "from explorer.model import m\nfrom explorer import "
      "maths\n", "explorer/model/__init__.py": "", "explorer/model/m.py": "", "explorer/maths.py": ""}, None),
    ({"explorer/newthing/__init__.py": "", "explorer/newthing/n.py": ""},
     "explorer.newthing.n: its package newthing is on no floor"),
    ({"explorer/a.py": "from . import b\n", "explorer/b.py": "from explorer.c import x\n",
      "explorer/c.py": "def g():\n    from explorer.a import y\n"},
     "import circle: explorer.a -> explorer.b -> explorer.c"),
])
def test_the_checker_finds_each_kind_of_break(tmp_path, files, expected):
    problems = check_tree(_tree(tmp_path, files))
    if expected is None:
        assert problems == []
    else:
        assert any(p.startswith(expected) for p in problems), problems


# ---------------------------------------------------------------------------------------------- private names

def _private(name: str) -> bool:
    """A ``_name`` (not a dunder, and not ``_`` itself: gettext's public name for "translate", explorer.words.i18n)."""
    return name.startswith("_") and name != "_" and not (name.startswith("__") and name.endswith("__"))


def private_imports(root: Path) -> list[str]:
    """Every ``_private`` name one module of the project takes from another (``from m import _x``, ``m._x`` on an
    imported project module, or a ``_module`` imported by name), one sentence each. A helper another module needs
    is public and documented; a name only its own module uses stays private."""
    files = [*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), *root.glob("app.py")]
    modules = {module_name(f, root) for f in files}
    found = []
    for path in files:
        module = module_name(path, root)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        bound = set()   # local names of imported project modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                if base not in modules and base.split(".")[0] not in {"explorer", "pages"}:
                    continue
                for alias in node.names:
                    if _private(alias.name) or any(_private(p) for p in base.split(".")):
                        found.append(f"{module} imports {alias.name} from {base}")
                    if f"{base}.{alias.name}" in modules:
                        bound.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules or alias.name.split(".")[0] == "explorer":
                        if any(_private(p) for p in alias.name.split(".")):
                            found.append(f"{module} imports {alias.name}")
                        bound.add(alias.asname or alias.name.split(".")[0])
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                target = node.value
                while isinstance(target, ast.Attribute):
                    target = target.value
                if isinstance(target, ast.Name) and target.id in bound:
                    found.append(f"{module} uses {ast.unparse(node)}")
    return sorted(set(found))


def test_no_module_takes_a_private_name_from_another():
    assert private_imports(ROOT) == []


@pytest.mark.parametrize("files, expected", [
    ({"explorer/a.py": "def _h():\n    pass\n", "explorer/b.py": "from explorer.a import _h\n"},
     "explorer.b imports _h from explorer.a"),
    ({"explorer/p/__init__.py": "", "explorer/p/a.py": "_X = 1\n", "explorer/p/b.py": "from .a import _X\n"},
     "explorer.p.b imports _X from explorer.p.a"),
    ({"explorer/a.py": "_X = 1\n", "explorer/b.py": "from explorer import a\nY = a._X\n"},
     "explorer.b uses a._X"),
    ({"explorer/a.py": "_X = 1\n", "pages/p.py": "import explorer.a as m\nm._X\n"}, "pages.p uses m._X"),
    ({"explorer/a.py": "def _h():\n    pass\n\n\ndef g():\n    return _h()\n",
      "explorer/b.py": "from explorer.a import g\nfrom os import _exit\nclass C:\n    _x = 1\n    def f(self):\n"
                       "        return self._x\n"}, None),
])
def test_the_private_name_check_finds_each_kind(tmp_path, files, expected):
    problems = private_imports(_tree(tmp_path, files))
    assert problems == ([] if expected is None else [expected])
