"""The class-answers chart (typed answers included) and the projector's font scale."""
import numpy as np
import pytest

from explorer.labs.quiz import TYPED_MAX, Question
from explorer.plots import room as plot_room
from explorer.plots.attention import heatmap
from explorer.plots.classroom import RIGHT, WRONG, answer_bars, answer_rounds, scale_fonts, typed_answers


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
    assert [x.replace("<br>", " ") for x in fig.data[0].x] == ["a", "b", "“y”", "“&lt;i&gt;”", "“v”", "“w”",
                                                             "other words (2)"]   # wrapped to fit: see below
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


LONG = ("more than half of the answer", "between a tenth and half of it", "less than a tenth of it")


def _lines(ticks) -> list[list[str]]:
    return [t.split("<br>") for t in ticks]


@pytest.mark.parametrize("draw", ["bars", "rounds"])
def test_long_answers_stay_level_and_wrap_to_a_phones_share_of_the_chart(draw):
    """On a 390 px phone a slanted long answer ran off the chart ("… another head tal"): each label is wrapped to
    its category's share of the phone's plot (326 px less the side margins, over 3 answers: 79 px, less the gap),
    level, with the bottom margin grown to hold its lines."""
    fig = (answer_bars(LONG, {LONG[0]: 2}) if draw == "bars"
           else answer_rounds(LONG, [{LONG[0]: 2}, {LONG[2]: 2}], correct=LONG[2]))
    room = (plot_room.PHONE_WIDTH - 50 - 20) / 3 - plot_room.TICK_GAP
    lines = _lines(fig.data[0].x)
    shown = [ls[:-1] if "(right answer)" in ls[-1] else ls for ls in lines]
    assert [" ".join(ls) for ls in shown] == list(LONG)           # every word, in order
    assert all(plot_room.text_px(line) <= room or " " not in line for ls in shown for line in ls)
    assert max(len(ls) for ls in shown) >= 3                       # "between a tenth and half of it" needs 3 lines
    assert fig.layout.xaxis.tickangle == 0
    assert fig.layout.margin.b >= plot_room.tick_lines_px(max(len(ls) for ls in lines))
    assert (fig.layout.height - fig.layout.margin.t - fig.layout.margin.b) >= 200   # the plot keeps its height


def test_short_answers_stay_on_one_line_and_the_chart_its_size():
    fig = answer_bars(("about 16", "about 1", "about 256"), {"about 16": 3})
    assert list(fig.data[0].x) == ["about 16", "about 1", "about 256"]
    assert (fig.layout.height, fig.layout.margin.b) == (320, 40)


def test_projector_type_keeps_the_rounds_legend_under_the_larger_labels():
    """The legend sits under the tick labels, a fixed number of px below the plot; in the projector's larger type
    the labels take ``factor`` times the px, so the legend moves as many times further down, in the new plot's
    paper units (here: 48 px under a 240 px plot, -0.2; after 1.6×: 76.8 px under a 496 - 80 - 147 = 269 px plot)."""
    fig = answer_rounds(("about 1", "about 16", "about 256"), [{"about 1": 1}, {"about 16": 1}], correct="about 16")
    assert (fig.layout.height, fig.layout.margin.t, fig.layout.margin.b) == (382, 50, 92)
    assert fig.layout.legend.y == pytest.approx(-48 / 240)
    scale_fonts(fig, 1.6)
    assert (fig.layout.height, fig.layout.margin.t, fig.layout.margin.b) == (496, 80, 147)
    assert fig.layout.legend.y == pytest.approx(-76.8 / 269)
