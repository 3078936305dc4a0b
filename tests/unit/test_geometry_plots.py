"""Figures of head geometry on hand-made arrays: two marker shapes, what a click reports, lines to the top keys,
the layer grid's trace pairs, and literal hover text."""
import json

import numpy as np
import plotly.io

from explorer.plots import geometry as plots

XY = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]], dtype=np.float32)   # 3 queries, then 3 keys
POSITIONS, IDS = np.array([0, 1, 2]), np.array([7, 8, 7])


def spec(fig) -> dict:
    return json.loads(plotly.io.to_json(fig, validate=False))


def test_joint_map_queries_and_keys_as_two_shapes():
    fig = plots.joint_map(XY, POSITIONS, IDS, ["a", "b", "<c>"], points=np.array([10, 11, 12]))
    queries, keys = fig.data
    assert (queries.name, keys.name) == ("queries", "keys")
    assert queries.marker.symbol == "circle" and keys.marker.symbol == "x-thin-open"
    np.testing.assert_array_equal(queries.x, [0, 1, 2]) and np.testing.assert_array_equal(keys.y, [1, 1, 1])
    assert list(queries.customdata) == [10, 11, 12] == list(keys.customdata)      # a click reports the token
    assert list(queries.hovertext) == ["a", "b", "&lt;c&gt;"]
    assert list(queries.marker.color) == [0, 1, 2] and fig.layout.coloraxis.colorscale


def test_lines_from_the_chosen_query_to_its_top_keys():
    fig = plots.joint_map(XY, POSITIONS, IDS, None, chosen=1, top=[(2, 0.75, "<c>"), (0, 0.25, "a")])
    lines = fig.layout.shapes
    assert [(s.x0, s.y0, s.x1, s.y1) for s in lines] == [(1, 0, 2, 1), (1, 0, 0, 1)]   # query 1 → keys 2 and 0
    assert lines[0].line.width > lines[1].line.width                                   # heavier weight, wider
    assert [a.text for a in fig.layout.annotations] == ["&lt;c&gt; 0.75", "a 0.25"]
    assert fig.data[0].hoverinfo == "skip"                                             # no hover text given


def test_colour_by_token_gives_the_same_token_the_same_colour():
    colours = plots.token_colour(IDS)
    assert colours[0] == colours[2] != colours[1] and colours.dtype == np.int16
    kind = plots.joint_map(XY, POSITIONS, IDS, None, colour="kind").data
    assert kind[0].marker.color != kind[1].marker.color


def test_layer_grid_pairs_traces_by_head_and_click_decoding():
    fig = plots.layer_grid([XY, XY * 2, XY * 3], POSITIONS, layer=4, selected=1, columns=2)
    assert len(fig.data) == 6 and [t.name for t in fig.data[2:4]] == ["head 1 queries", "head 1 keys"]
    assert fig.layout.shapes[0].xref == "x2 domain"                                    # head 1 is outlined
    assert plots.clicked({"selection": {"points": [{"curve_number": 3, "point_index": 2}]}}) == (3, 2)
    assert plots.clicked({"selection": {"points": [{"curve_number": 0, "customdata": 41}]}}) == (0, 41)
    assert plots.clicked({"selection": {"points": []}}) is None and plots.clicked(None) is None
    assert len(json.dumps(spec(fig))) < 20_000
