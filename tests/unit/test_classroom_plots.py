"""The class-answers chart (typed answers included) and the projector's font scale."""
import numpy as np

from explorer.labs.quiz import TYPED_MAX, Question
from explorer.plots.attention import heatmap
from explorer.plots.classroom import RIGHT, WRONG, answer_bars, scale_fonts, typed_answers


def test_answer_bars_counts_in_option_order_and_colours_after_reveal():
    fig = answer_bars(("a", "<b>", "c"), {"c": 1, "<b>": 3, "stray": 9})
    assert list(fig.data[0].y) == [0, 3, 1]
    assert list(fig.data[0].x) == ["a", "&lt;b&gt;", "c"]   # literal text, never plotly HTML
    assert list(fig.data[0].text) == ["0 (0%)", "3 (75%)", "1 (25%)"]
    assert fig.layout.title.text == "Class answers (4 students)"
    shown = answer_bars(("a", "b"), {"a": 1}, correct="b")
    assert list(shown.data[0].marker.color) == [WRONG, RIGHT]


def test_scale_fonts_multiplies_every_font_and_one_changes_nothing():
    fig = heatmap(np.eye(2), ["x", "y"], ["x", "y"], title="t")
    assert scale_fonts(fig, 1.0).to_json() == heatmap(np.eye(2), ["x", "y"], ["x", "y"],
                                                      title="t").to_json()
    scale_fonts(fig, 1.5)
    assert fig.layout.title.font.size == 21   # 14 * 1.5
    assert fig.layout.font.size == 18         # plotly's default 12 * 1.5
    assert fig.layout.xaxis.tickfont.size == 18


def test_typed_answers_follow_the_options_most_frequent_first_and_the_tail_shares_a_bar():
    counts = {"a": 2, "z": 1, "y": 3, "x": 1, "w": 1, "v": 1, "u": 0, "<i>": 1}
    assert typed_answers(("a", "b"), counts) == [                 # 6 typed words (u never chosen): 4 + the rest
        ("“y”", 3), ("“<i>”", 1), ("“v”", 1), ("“w”", 1), ("other words (2)", 2)]
    assert typed_answers(("a",), {"a": 1, "q": 2}) == [("“q”", 2)]
    fig = answer_bars(("a", "b"), counts, typed=True)
    assert list(fig.data[0].x) == ["a", "b", "“y”", "“&lt;i&gt;”", "“v”", "“w”", "other words (2)"]
    assert list(fig.data[0].y) == [2, 0, 3, 1, 1, 1, 2]
    assert fig.layout.title.text == "Class answers (10 students)"
    assert list(answer_bars(("a", "b"), counts).data[0].y) == [2, 0]   # a question without typing: options only


def test_a_typed_answer_counts_as_the_option_it_names():
    question = Question("p", ("“␣Paris”", "“␣the”", "“Lyon”"), "“␣Paris”", "r", typed=True)
    assert question.resolve("  paris ") == "“␣Paris”" and question.check(question.resolve("PARIS"))
    assert question.resolve("lyon") == "“Lyon”" and question.resolve("“␣the”") == "“␣the”"
    assert question.resolve("Rome  the   city") == "Rome the city"             # runs of spaces become one
    assert question.resolve("x" * 99) == "x" * TYPED_MAX
    assert question.resolve("   ") is None and question.resolve(None) is None
    assert not question.check(question.resolve("Lyon"))


def test_answer_rounds_puts_both_rounds_side_by_side_and_marks_the_right_answer_only_when_revealed():
    from explorer.plots.classroom import BAR, answer_rounds

    rounds = [{"a": 3, "b": 1}, {"b": 4}]
    hidden = answer_rounds(("a", "b"), rounds)
    assert [list(t.y) for t in hidden.data] == [[3, 1], [0, 4]] and hidden.layout.barmode == "group"
    assert list(hidden.data[0].x) == ["a", "b"] and set(hidden.data[1].marker.color) == {BAR}
    assert [t.name for t in hidden.data] == ["round 1: 4 students", "round 2: 4 students"]
    shown = answer_rounds(("a", "<b>"), [{"a": 3, "<b>": 1}, {"<b>": 4}], correct="<b>")
    assert list(shown.data[1].x) == ["a", "&lt;b&gt;<br>(right answer)"]   # literal text, the answer named
    assert list(shown.data[0].marker.color) == [WRONG, RIGHT]
    # by hand: 1 of 4 right (25%), then 4 of 4 (100%)
    assert [t.name for t in shown.data] == ["round 1: 4 students, 25% right", "round 2: 4 students, 100% right"]
    assert shown.data[0].marker.pattern.shape == "/" and not shown.data[1].marker.pattern.shape
    typed = answer_rounds(("a",), [{"a": 1, "zz": 2}, {"zz": 1, "yy": 1}], typed=True)
    assert list(typed.data[0].x) == ["a", "“zz”", "“yy”"]
    assert [list(t.y) for t in typed.data] == [[1, 2, 0], [0, 1, 1]]
