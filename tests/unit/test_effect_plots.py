"""explorer.plots.effects: knockout maps, before/after bars and the similar-heads map, from hand-made arrays."""
import numpy as np
import pandas as pd

from explorer.plots import effects as plots
from explorer.plots.heads import clicked_head


def test_knock_map_shows_the_flip_and_dots_the_knocked_heads():
    flip = np.array([[0.1, -0.3, 0.0], [0.2, 0.0, -0.1]])
    knocked = np.array([[False, True, False], [False, False, True]])
    fig = plots.knock_map(flip, knocked)
    heat, cells, dots = fig.data
    assert np.array_equal(np.asarray(heat.z), flip)
    assert heat.zmid == 0 and heat.zmin == -0.3 and heat.zmax == 0.3     # diverging, symmetric
    assert list(dots.x) == [1, 2] and list(dots.y) == [0, 1]             # heads across, layers down
    assert cells.hovertext[1] == "layer 0 head 1: -0.300 · knocked out"
    assert cells.hovertext[0] == "layer 0 head 0: 0.100"
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2] and list(fig.layout.yaxis.tickvals) == [0, 1]
    # a click on a cell's invisible marker names that head
    assert clicked_head({"selection": {"points": [{"customdata": cells.customdata[5]}]}}) == (1, 2)


def test_effect_map_title_and_scale():
    effect = np.array([[-2.0, 0.5], [0.0, 1.0]])
    fig = plots.effect_map(effect)
    assert fig.layout.title.text == "Knockout effect per head (each head alone)"
    assert fig.data[0].colorbar.title.text == "effect"
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-2.0, 2.0)
    assert len(fig.data) == 2                                           # no knocked heads: no dots
    assert plots.flip_map(effect).layout.title.text == "Attention flip per head"


def test_before_after_bars():
    fig = plots.before_after([0.4, 0.25], [0.3, -0.1], "cos difference")
    intact, knocked = fig.data
    assert (intact.name, knocked.name) == ("intact", "heads knocked out")
    assert list(intact.x) == ["Sentence A", "Sentence B"] and list(knocked.y) == [0.3, -0.1]
    assert list(intact.text) == ["+0.400", "+0.250"] and list(knocked.text) == ["+0.300", "-0.100"]
    assert fig.layout.yaxis.title.text == "cos difference"
    assert fig.layout.yaxis.range == (-0.5, 0.5)                        # room for the labels, both signs
    assert "Sentence A · intact: %{y:.4f}" in intact.hovertemplate.replace("%{x}", "Sentence A")
    only_positive = plots.before_after([1.0, 2.0], [0.5, 0.5], "log-odds")
    assert only_positive.layout.yaxis.range == (0, 2.5)


def test_before_after_survives_nan():
    fig = plots.before_after([float("nan"), 1.0], [0.0, float("nan")], "x")
    assert fig.layout.yaxis.range[1] == 1.25
    fig.to_dict()


def test_similar_heads_points_hover_and_selection():
    frame = pd.DataFrame({"layer": [0, 0, 1, 1], "head": [0, 1, 0, 1], "x": [0.0, 1.0, 2.0, 3.0],
                          "y": [1.0, 0.0, -1.0, 0.5]})
    badges = pd.Series(["previous token", "", "induction, duplicate", ""])
    fig = plots.similar_heads(frame, badges, selected=[(1, 0), (5, 5)])
    points, ring = fig.data
    assert list(points.hovertext) == ["layer 0 · head 0<br>previous token", "layer 0 · head 1",
                                      "layer 1 · head 0<br>induction, duplicate", "layer 1 · head 1"]
    assert list(points.marker.color) == [0, 0, 1, 1]
    assert clicked_head({"selection": {"points": [{"customdata": points.customdata[2]}]}}) == (1, 0)
    assert list(ring.x) == [2.0] and list(ring.y) == [-1.0]              # an unknown head is ignored
    assert fig.layout.xaxis.showticklabels is False
    assert len(plots.similar_heads(frame).data) == 1
