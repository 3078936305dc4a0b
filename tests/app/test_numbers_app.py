"""The worked example in German, Spanish, English and a language the app does not speak: the seed's numbers, written
the reader's way in the text, the formulas and the heatmap (its cell texts and plotly's separators)."""
import json
import re

import pytest
from labs_helpers import ROOT, TIMEOUT
from streamlit.testing.v1 import AppTest

from explorer.words import i18n

PAGE = "pages/lab_worked_example.py"


def _opened(lang: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    at.query_params.update({"lang": lang})
    at.session_state["lang"] = lang
    with i18n.language(lang):   # AppTest calls a widget's format_func in the test's thread
        at.run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    return "\n".join([str(m.value) for m in at.markdown] + [str(c.value) for c in at.caption]).replace("\\", "")


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


@pytest.mark.parametrize("lang", ["de", "es"])
def test_the_worked_example_writes_a_decimal_comma(lang):
    at = _opened(lang)
    text, latex = _text(at), "\n".join(x.value for x in at.latex)
    assert "0,198" in text and "0.198" not in text   # the question: token 1's weight on token 2
    assert r"0{,}401 & 0{,}198 & 0{,}401" in latex and "0.401" not in latex   # the seed's softmax row: "0,401"
    assert r"\frac{QK^\top}{1{,}414}" in latex   # √2: never "1.414", which reads as one thousand four hundred
    assert r"= 5{,}056;\quad" in latex   # a semicolon after a number with a decimal comma
    (heat,) = _charts(at)
    assert heat["layout"]["separators"] == ",."   # plotly's ticks, colour bar and hovers: "0,5"
    assert ["0,401", "0,198", "0,401"] == heat["data"][0]["text"][0]


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_english_and_an_unknown_language_write_english_numbers(lang):
    at = _opened(lang)
    text, latex = _text(at), "\n".join(x.value for x in at.latex)
    assert "0.198" in text and "0,198" not in text
    assert r"0.401 & 0.198 & 0.401" in latex and "{,}" not in latex and r"= 5.056,\quad" in latex
    (heat,) = _charts(at)
    assert heat["layout"]["separators"] == ".,"


def test_the_heatmap_page_in_german_draws_every_chart_with_german_separators():
    """The attention heatmap, its bars, the layer's grid and the overview: plotly writes their colour bars, ticks
    and ``%{z:.3f}`` hovers with the figure's separators; the hover texts made in Python say "0,…" themselves."""
    at = AppTest.from_file(str(ROOT / "pages/heatmaps.py"), default_timeout=TIMEOUT)
    at.query_params.update({"lang": "de"})
    at.session_state["lang"] = "de"
    with i18n.language("de"):
        at.run()
    assert not at.exception, at.exception
    specs = _charts(at)
    assert len(specs) >= 3 and {s["layout"].get("separators") for s in specs} == {",."}
    bars = next(t for spec in specs for t in spec["data"] if t.get("type") == "bar")
    assert bars["text"] and all(re.fullmatch(r"\d,\d\d", t) for t in bars["text"]), bars["text"]   # "0,20"
    heads = [t for spec in specs for trace in spec["data"] if trace.get("type") == "scatter"
             for t in (trace.get("text") or []) if isinstance(t, str)]
    assert heads and all(re.search(r" \d,\d\d$", t) for t in heads), heads[:3]   # "… → [CLS] 0,51"


def _shown_tables(at: AppTest) -> list:
    """What each ``st.dataframe`` on the page shows: the Styler's texts (``numbers.table``), as a frame of strings."""
    import pyarrow as pa
    return [pa.ipc.open_stream(d.proto.arrow_data.styler.display_values).read_pandas() for d in at.dataframe]


@pytest.mark.parametrize("lang, mark", [("de", ","), ("es", ","), ("en", ".")])
def test_a_table_writes_its_numbers_the_readers_way(lang, mark):
    """The block lab's standard deviations: every cell in the session's notation ("0,350"), never "0.350" in
    German or Spanish; the values underneath stay numbers (a column sorts by them, the CSV keeps its point)."""
    at = _opened_page("pages/lab_block.py", lang)
    (stds,) = _shown_tables(at)
    cells = [str(c) for c in stds.to_numpy().ravel()]
    assert cells and all(re.fullmatch(rf"\d+\{mark}\d{{3}}", c) for c in cells), cells
    assert at.dataframe[0].value.to_numpy().dtype.kind == "f"


def _opened_page(page: str, lang: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    at.query_params.update({"lang": lang})
    at.session_state["lang"] = lang
    with i18n.language(lang):
        at.run()
    assert not at.exception, at.exception
    return at
