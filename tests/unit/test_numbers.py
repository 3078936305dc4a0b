"""Numbers written the reader's way (explorer/words/numbers.py): the same digits as Python's format specs, with the
locale's decimal mark, grouping and percent pattern; lists separated by "; " where the mark is a comma; plotly's
separators from the session's language; a language the app does not know writes English numbers."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer import maths
from explorer.labs.notation import format_list, format_weights, latex_matrix, latex_number
from explorer.plots.base import at_shown_precision, figure
from explorer.plots.concepts import labelled_heatmap
from explorer.words import i18n, numbers

NBSP = "\xa0"   # CLDR's space between a number and "%" in German and Spanish


@pytest.mark.parametrize("lang", ["de", "es"])
def test_a_decimal_comma_in_german_and_spanish(lang):
    assert numbers.number(0.401, 3, lang=lang) == "0,401"
    assert numbers.number(-1.41421356, 3, lang=lang) == "-1,414"
    assert numbers.signed(0.5, 2, lang=lang) == "+0,50" and numbers.signed(-0.5, 2, lang=lang) == "-0,50"
    assert numbers.number(0.7, lang=lang) == "0,7"   # :g, as few digits as say it
    assert numbers.number(1 / 3, digits=3, lang=lang) == "0,333"
    assert numbers.scientific(1.234e-5, 1, lang=lang) == "1,2e-05"


def test_thousands_as_cldr_writes_them():
    assert numbers.integer(10000, lang="de") == "10.000"
    assert numbers.integer(10000, lang="es") == "10.000"   # CLDR (Babel 2.18): "." groups in Spanish too
    assert numbers.integer(402653184, lang="de") == "402.653.184"
    assert numbers.integer(402653184, lang="en") == "402,653,184"
    assert numbers.number(10000.0, 0, group=True, lang="de") == "10.000"
    assert numbers.number(1234.5, 1, lang="de") == "1234,5"   # :.1f groups nothing, in any language


def test_percentages_follow_the_locale_pattern():
    assert numbers.percent(0.401, lang="en") == "40%"
    assert numbers.percent(0.401, lang="de") == f"40{NBSP}%"
    assert numbers.percent(0.4012, 1, lang="es") == f"40,1{NBSP}%"
    assert numbers.percent(0.0001, 2, lang="de") == f"0,01{NBSP}%"
    assert numbers.percent(0.25, sign=True, lang="en") == "+25%"


def test_english_digits_are_pythons_own():
    """English text is unchanged: the same digits and rounding as the format specs it replaces."""
    for x in (0.401112, 0.0005, 0.00049999, 2.675, -0.0001, 1e-9, 123456.789, 0.125):
        assert numbers.number(x, 3, lang="en") == f"{x:.3f}"
        assert numbers.signed(x, 2, lang="en") == f"{x:+.2f}"
        assert numbers.percent(x, 1, lang="en") == f"{x:.1%}"
        assert numbers.scientific(x, 1, lang="en") == f"{x:.1e}"
        assert numbers.number(x, lang="en") == f"{x:g}"
        assert numbers.formatted(x, ".4f", lang="en") == f"{x:.4f}"
    assert numbers.integer(1234567, lang="en") == f"{1234567:,}"
    for x in (0.401112, 0.0005, 2.675, 123456.789):   # the digits are the same in German, only the marks differ
        assert numbers.number(x, 3, lang="de") == f"{x:.3f}".replace(".", ",")


def test_a_vector_is_separated_by_semicolons_where_the_mark_is_a_comma():
    weights = maths.attention_steps(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V)["weights"][0]
    assert numbers.vector(weights, lang="en") == "[0.401, 0.198, 0.401]"
    assert numbers.vector(weights, lang="de") == "[0,401; 0,198; 0,401]"
    assert numbers.vector([1.0, 0.0, 0.7071, 1000.0], lang="es") == "[1; 0; 0,707; 1000]"   # whole numbers bare
    assert numbers.list_separator("en") == ", " and numbers.list_separator("de") == "; "


def test_the_labs_notation_follows_the_session():
    weights = maths.attention_steps(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V)["weights"][0]
    with i18n.language("de"):
        assert format_list(weights) == "[0,401; 0,198; 0,401]"
        assert format_weights(maths.softmax([1.0, 2.0, 3.0])) == "[0,090; 0,245; 0,665]"
        assert latex_number(0.70710678) == "0{,}707"   # KaTeX sets no space after a braced comma
        assert latex_matrix(weights) == r"\begin{bmatrix}0{,}401 & 0{,}198 & 0{,}401\end{bmatrix}"
    assert format_list(weights) == "[0.401, 0.198, 0.401]"   # English outside the block


def test_an_unknown_locale_writes_english_numbers():
    assert numbers.number(0.401, 3, lang="pt-BR") == "0.401"
    assert numbers.plotly_separators("pt-BR") == ".,"
    with i18n.language("pt-BR"):   # the session asked for a language the app does not speak: English throughout
        assert i18n.current() == "en" and numbers.number(0.401, 3) == "0.401" and numbers.percent(0.4) == "40%"
        assert numbers.vector([0.401, 0.198]) == "[0.401, 0.198]"
    with i18n.language("es-MX"):   # a regional variant of a language the app speaks
        assert numbers.number(0.401, 3) == "0,401"


def test_not_a_number_stays_readable():
    assert numbers.number(float("nan"), 3, lang="de") == "nan"
    assert numbers.number(float("-inf"), 2, lang="de") == "-inf"
    assert numbers.percent(float("nan"), lang="de") == "nan%"


@pytest.mark.parametrize("lang, separators", [("en", ".,"), ("de", ",."), ("es", ",."), ("pt-BR", ".,")])
def test_figures_get_the_locales_separators(lang, separators):
    with i18n.language(lang):
        built = figure([dict(type="bar", x=[0, 1], y=[0.5, 0.25])], dict(title=dict(text="t")))
        assert built.to_dict()["layout"]["separators"] == separators
        heat = at_shown_precision(labelled_heatmap(np.eye(2) * 0.5, ["a", "b"], ["a", "b"]))   # plotly's own Figure
        assert heat.to_dict()["layout"]["separators"] == separators
    own = figure([], dict(separators=" ."))   # a figure that names its own keeps them
    assert own.to_dict()["layout"]["separators"] == " ."
    kept = at_shown_precision(go.Figure(layout=dict(separators="'.")))
    assert kept.to_dict()["layout"]["separators"] == "'."


def test_a_heatmaps_cell_text_is_written_the_readers_way():
    with i18n.language("de"):
        heat = labelled_heatmap(np.array([[0.40111, 0.19777]]), ["a"], ["b", "c"])
    assert list(heat.data[0].text[0]) == ["0,401", "0,198"]


@pytest.mark.parametrize("lang", ["en", "de", "es"])
def test_the_fast_path_writes_what_babel_writes(lang):
    """Ungrouped numbers and percentages swap the marks directly; Babel's format_decimal / format_percent with the
    same digits must give the same text."""
    from decimal import Decimal

    from babel import Locale
    from babel.numbers import format_decimal, format_percent
    for x in (0.401112, -0.0001, -12.5, 2.675, 1234.5678, 0.0):
        for places in (0, 1, 3):
            text = f"{x:.{places}f}"
            pattern = "0" + ("." + "0" * places if places else "")
            assert numbers.number(x, places, lang=lang) == format_decimal(Decimal(text), pattern, locale=lang)
            pct = f"{x:.{places}%}"[:-1]
            locale_pattern = Locale.parse(lang).percent_formats[None].pattern.replace("#,##0", pattern, 1)
            assert numbers.percent(x, places, lang=lang) == format_percent(Decimal(pct) / 100, locale_pattern,
                                                                          locale=lang)
    assert numbers.each([0.5, -0.25, float("nan")], 2, lang=lang) == [numbers.number(v, 2, lang=lang)
                                                                      for v in (0.5, -0.25, float("nan"))]


def test_a_lesson_text_is_written_with_the_readers_numbers():
    from explorer.words.numbers import in_text
    text = "divided by √2 = 1.414 they are [0.707, 0.707]; Q = [1,0], [0,1]; torch 2.13.0, [CLS], 3.5."
    assert in_text(text, "en") == text
    assert in_text(text, "de") == "divided by √2 = 1,414 they are [0,707; 0,707]; Q = [1; 0], [0; 1]; torch 2.13.0, " \
                                  "[CLS], 3,5."
    assert in_text(text, "es") == in_text(text, "de")
    assert in_text("−0.25 and -1.5 nats", "de") == "−0,25 and -1,5 nats"
