"""Every model rule is a field of ``Family``: read with ``ast``, no module of explorer/, bench/, tools/ or deploy/
but explorer/model/families.py tells models apart by their type or class name. A rule that depends on the family (how
position enters, how a fused projection splits, a logit scale) is a field set once per family in the table, and the
code reads the field; a test of ``config.model_type == "falcon"`` elsewhere is how a second, silent copy of a rule
starts. The check runs on this repository and, to show that it can fail, on small broken sources."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {"explorer/model/families.py"}
# attributes whose value names a model's type: its config's model_type, a result's family, the hub's architectures
TYPE_ATTRIBUTES = {"model_type", "architectures", "family"}


def names_a_type(node: ast.AST) -> bool:
    """Whether ``node`` reads a model's type or class name: ``x.model_type``, ``x.architectures``, ``x.family``,
    ``getattr(x, "model_type")``, ``x.__class__.__name__``, ``type(x).__name__`` (anywhere inside it, as in
    ``" ".join(config.architectures)``)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in TYPE_ATTRIBUTES:
            return True
        if isinstance(inner, ast.Attribute) and inner.attr == "__name__" and (
                isinstance(inner.value, ast.Attribute) and inner.value.attr == "__class__"
                or isinstance(inner.value, ast.Call) and getattr(inner.value.func, "id", None) == "type"):
            return True
        if isinstance(inner, ast.Call) and getattr(inner.func, "id", None) == "getattr" and len(inner.args) > 1 \
                and isinstance(inner.args[1], ast.Constant) and inner.args[1].value in TYPE_ATTRIBUTES:
            return True
    return False


def holds_a_string(node: ast.AST) -> bool:
    """A string constant, or a tuple, list, set or dict of them (``{"bert", "roberta"}``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(holds_a_string(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(k is not None and holds_a_string(k) for k in node.keys)
    return False


def type_tests(source: str, where: str = "<source>") -> list[str]:
    """``where:line`` and the code of every comparison of a model's type or class name with a string in
    ``source``: ``==``/``!=``/``in``/``not in`` against a string or a collection of strings, ``startswith`` and
    ``endswith``, and a regular expression matched against it (``re.search(r"ForCausalLM", archs)``)."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(names_a_type(o) for o in operands) and any(holds_a_string(o) for o in operands):
                found.append(node)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in {"startswith", "endswith"} \
                    and names_a_type(func.value):
                found.append(node)
            elif isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "re" \
                    and any(names_a_type(a) for a in node.args):
                found.append(node)
    return [f"{where}:{n.lineno}: {ast.unparse(n)}" for n in sorted(found, key=lambda n: n.lineno)]


FOLDERS = ("explorer", "bench", "tools", "deploy")   # the package and the scripts that load or describe models


def type_tests_in(root: Path) -> list[str]:
    out = []
    for path in sorted(p for folder in FOLDERS for p in root.glob(f"{folder}/**/*.py")):
        where = path.relative_to(root).as_posix()
        if where not in ALLOWED:
            out += type_tests(path.read_text(), where)
    return out


def test_no_module_but_the_family_table_tells_models_apart_by_name():
    assert type_tests_in(ROOT) == []


@pytest.mark.parametrize("source", [
    'def f(c):\n    return c.model_type == "falcon"\n',
    'def f(config):\n    return config.model_type not in {"bert", "roberta"}\n',
    'def f(c):\n    return "llama" in c.model_type\n',
    'def f(c):\n    return getattr(c, "model_type", None) in ("t5",)\n',
    'def f(c):\n    return c.model_type.startswith("gemma")\n',
    'def f(model):\n    return type(model).__name__ == "GPT2Model"\n',
    'def f(model):\n    return model.__class__.__name__ in ["BertModel"]\n',
    'import re\ndef f(c):\n    return re.search(r"ForCausalLM", " ".join(c.architectures))\n',
    'def f(result):\n    return result.facts.family == "t5"\n',
])
def test_the_guard_finds_a_type_test(source):
    assert len(type_tests(source)) == 1


@pytest.mark.parametrize("source", [
    'def f(fam):\n    return fam.positions == "alibi"\n',             # a field of the family: the way to do it
    'def f(c):\n    return FAMILIES.get(c.model_type)\n',               # looking the family up
    'def f(c):\n    return f"{c.model_type!r} is unknown"\n',           # naming it in a sentence
    'def f(c):\n    return getattr(c, "model_type", None) in FAMILIES\n',
    'def f(result):\n    return refusal(result.facts.family, "scores")\n',   # handing it to the table
    'if __name__ == "__main__":\n    pass\n',
])
def test_the_guard_lets_the_family_table_be_read(source):
    assert type_tests(source) == []


def test_the_guard_fails_on_a_broken_tree(tmp_path):
    (tmp_path / "explorer" / "attention").mkdir(parents=True)
    (tmp_path / "explorer" / "model").mkdir()
    (tmp_path / "explorer" / "attention" / "result.py").write_text(
        'def position(c):\n    return "rope" if c.model_type == "falcon" else "learned"\n')
    (tmp_path / "explorer" / "model" / "families.py").write_text('FALCON = lambda c: c.model_type == "falcon"\n')
    assert type_tests_in(tmp_path) == [
        'explorer/attention/result.py:2: c.model_type == \'falcon\'']


@pytest.mark.parametrize("where", ["bench/effects.py", "tools/models_table.py", "deploy/cluster.py"])
def test_the_guard_reads_the_scripts_too(tmp_path, where):
    (tmp_path / where).parent.mkdir(parents=True)
    (tmp_path / where).write_text('def slow(loaded):\n    return loaded.model.config.model_type in ("llama",)\n')
    assert type_tests_in(tmp_path) == [f"{where}:2: loaded.model.config.model_type in ('llama',)"]
