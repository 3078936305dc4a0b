"""The "Watch it write" figures on hand-made arrays: values drawn as given, tokens and titles as literal text,
the picked candidate and the written tokens marked, and every figure valid plotly."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from explorer.plots import generation as plots

HOSTILE = "<b>x</b>"


def sent(fig) -> dict:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))


def valid(fig) -> None:
    shown = sent(fig)
    assert not shown["layout"].pop("template", None)     # plotly's default template is never sent
    validated = sent(go.Figure(fig.to_dict()))           # raises on an invalid property
    validated["layout"].pop("template", None)
    assert validated == shown


def test_context_bars_in_reading_order_prompt_blue_written_orange():
    row = np.array([0.5, 0.2, 0.2, 0.1])
    fig = plots.context_bars(row, ["a", HOSTILE, "c", "d"], n_prompt=2, title=f"where {HOSTILE} looks")
    bar = fig.data[0]
    assert np.allclose(bar.y, row) and list(bar.x) == [0, 1, 2, 3]
    assert list(bar.marker.color) == [plots.BLUE, plots.BLUE, plots.ORANGE, plots.ORANGE]
    assert fig.layout.xaxis.ticktext[1] == "&lt;b&gt;x&lt;/b&gt;" and "<b>" not in fig.layout.title.text
    valid(fig)


def test_considered_bars_mark_the_pick():
    fig = plots.considered_bars(["x", "y", "z"], np.array([0.5, 0.3, 0.2]), np.array([0.625, 0.375, 0.0]), 1)
    before, after = fig.data
    assert np.allclose(before.x, [0.5, 0.3, 0.2]) and np.allclose(after.x, [0.625, 0.375, 0])
    assert list(after.marker.color) == [plots.BLUE, plots.ORANGE, plots.BLUE]
    assert plots.considered_bars(["x"], np.ones(1), np.ones(1), None).data[1].marker.color == (plots.BLUE,)
    valid(fig)


def test_effect_map_is_centred_on_zero():
    heads = np.array([[0.5, -2.0], [1.0, 0.0]])
    fig = plots.effect_map(heads, title=HOSTILE)
    assert fig.data[0].zmin == -2.0 and fig.data[0].zmax == 2.0 and np.allclose(fig.data[0].z, heads)
    valid(fig)


def test_parts_and_cache_growth():
    fig = plots.parts_bars(["embeddings", "MLP 0"], np.array([-1.0, 2.0]))
    assert list(fig.data[0].marker.color) == [plots.ORANGE, plots.BLUE]
    valid(fig)
    growth = plots.cache_growth(np.array([5, 6, 7]), np.array([1024, 2048, 3072]), step=1)
    assert np.allclose(growth.data[0].y, [1, 2, 3]) and list(growth.data[1].x) == [1]
    valid(growth)
