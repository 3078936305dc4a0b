"""The class-answers chart and the projector's font scale."""
import numpy as np

from explorer.plots.attention import heatmap
from explorer.plots.classroom import RIGHT, WRONG, answer_bars, scale_fonts


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
