"""Every table a student reads writes its numbers the session's way (``numbers.table``), and no printf or format-spec
number ("%.3f", ``f"{x:.3f}"``, ``f"{n:,}"``) reaches a page: the guards below read the code with ``ast`` and fail on
a table shown without ``numbers.table`` or a number formatted outside explorer/words/numbers.py."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.words import numbers

ROOT = Path(__file__).resolve().parents[2]
NBSP = "\xa0"

# where a format spec is no number a student reads, and why
ALLOWED_SPECS = {
    "explorer/labs/notation.py": "rounds to test a precision (float(f'{p:.{d}f}')); numbers.number writes it",
    "explorer/model/prepare.py": "the command-line set-up step's log line, for the deployer's terminal",
}
NUMBER_SPEC = re.compile(r"[,.%eEfFgG{]")   # a decimal, grouping, percent or exponent spec ("02d", "b" are not), or
#                                              one the code holds in a variable
PRINTF = re.compile(r"%[-+ 0#]*\d*(?:\.\d+)?[fFeEgG%]|%,")


def _sources(*folders: str):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _specs(tree: ast.AST):
    """(line, spec) of every f-string field's format spec and every ``format(x, "spec")`` call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{…}"
                                       for v in node.format_spec.values)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "format" \
                and len(node.args) == 2:   # a spec held in a variable ("fmt") may be any: numbers.formatted
            spec = node.args[1]
            yield node.lineno, str(spec.value) if isinstance(spec, ast.Constant) else "{" + ast.unparse(spec) + "}"


def _shown_tables(tree: ast.AST):
    """Every ``st.dataframe(…)``, ``st.table(…)`` and ``st.data_editor(…)`` call (also on a column: ``col.table``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("dataframe", "table", "data_editor") \
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("numbers", "pd")):
            yield node


def _through_numbers(call: ast.Call) -> bool:
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "data"), None)
    return isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "table" \
        and isinstance(first.func.value, ast.Name) and first.func.value.id == "numbers"


def test_every_table_on_a_page_goes_through_numbers_table():
    found = [f"{rel}:{call.lineno}" for rel, tree in _sources("explorer/ui", "pages")
             for call in _shown_tables(tree) if not _through_numbers(call)]
    assert not found, f"tables shown without numbers.table (numbers written the English way): {found}"


def test_no_printf_column_format_or_styler_precision_outside_numbers():
    found = []
    for rel, tree in _sources("explorer", "pages"):
        if rel == "explorer/words/numbers.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "format" and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str) and PRINTF.search(node.value.value):
                found.append(f"{rel}:{node.value.lineno}: format={node.value.value!r}")
            if isinstance(node, ast.Attribute) and node.attr == "format" and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "style":
                found.append(f"{rel}:{node.lineno}: .style.format")
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                    and isinstance(node.left.value, str) and PRINTF.search(node.left.value.replace("%{", "")):
                found.append(f"{rel}:{node.lineno}: printf {node.left.value[:40]!r}")
    assert not found, found


def test_no_number_format_spec_outside_numbers():
    """``f"{x:.3f}"`` or ``f"{n:,}"`` writes English numbers in every language: numbers.number / integer / percent
    write them the session's way. (Plotly's own ``%{z:.3f}`` hovers are plain text here and follow the figure's
    separators.)"""
    found = [f"{rel}:{line}: {spec}" for rel, tree in _sources("explorer", "pages")
             if rel != "explorer/words/numbers.py" and rel not in ALLOWED_SPECS
             for line, spec in _specs(tree) if NUMBER_SPEC.search(spec)]
    assert not found, found


def test_the_guards_see_what_they_guard(tmp_path):
    """Each guard fails on a small broken example."""
    bad = ast.parse('st.dataframe(frame.round(3))\nst.table(numbers.table(f))\nx = f"{w:.3f} and {n:,}"\n'
                    'y = "%.2f" % w\nst.dataframe(f, column_config={"p": NumberColumn(format="%.3f")})\n'
                    'z = format(v, fmt) + format(n, "b")\n')
    assert [c.lineno for c in _shown_tables(bad) if not _through_numbers(c)] == [1, 5]
    assert [s for _l, s in _specs(bad) if NUMBER_SPEC.search(s)] == [".3f", ",", "{fmt}"]
    assert PRINTF.search("%.2f") and PRINTF.search("%.1e") and not PRINTF.search("%{z:.3f}".replace("%{", ""))


@pytest.mark.parametrize("lang, weight, count, share", [("en", "0.401", "402,653,184", "1.5e-05"),
                                                         ("de", "0,401", "402.653.184", "1,5e-05"),
                                                         ("es", "0,401", "402.653.184", "1,5e-05")])
def test_a_table_writes_its_numbers_the_session_way(lang, weight, count, share):
    frame = pd.DataFrame({"w": [0.40112, np.nan], "n": [402653184, 3], "step": [25.0, 1000.0],
                          "p": [1.5e-5, 0.25], "marked": [True, False], "word": ["cat", "on"]})
    styled = numbers.table(frame, formats={"p": lambda p: numbers.scientific(p, 1, lang=lang)}, lang=lang)
    shown = styled._translate(False, False)["body"]   # what st.dataframe / st.table show: the Styler's texts
    cells = [[c["display_value"] for c in row[1:]] for row in shown]
    thousand = "1,000" if lang == "en" else "1.000"
    assert cells[0] == [weight, count, "25", share, "●", "cat"]
    assert cells[1] == ["", "3", thousand, numbers.scientific(0.25, 1, lang=lang), "", "on"]   # a hidden cell: empty
    assert frame.loc[0, "w"] == 0.40112   # the frame itself (its CSV) keeps its numbers


@pytest.mark.parametrize("lang, cells", [("de", [["0,50", "-1,25"]]), ("en", [["0.50", "-1.25"]])])
def test_the_block_labs_cell_texts_are_written_the_session_way(lang, cells):
    """matrix_grid wrote its cells with ``format(v, fmt)``: "0.50" on a German page whose colour bar said "0,5"."""
    from explorer.plots.positions import matrix_grid
    from explorer.words import i18n
    with i18n.language(lang):
        fig = matrix_grid({"x": np.array([[0.5, -1.25]])})
    assert [list(row) for row in fig.data[0].text] == cells
