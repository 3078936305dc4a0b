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
    assert queries.type == keys.type == "scattergl"   # thousands of points: WebGL, not one SVG element each
    assert queries.marker.symbol == "circle" and keys.marker.symbol == "x-thin-open"
    np.testing.assert_array_equal(queries.x, [0, 1, 2])
    np.testing.assert_array_equal(keys.y, [1, 1, 1])
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
    assert {t.type for t in fig.data} == {"scattergl"}
    assert fig.layout.shapes[0].xref == "x2 domain"                                    # head 1 is outlined
    assert plots.clicked({"selection": {"points": [{"curve_number": 3, "point_index": 2}]}}) == (3, 2)
    assert plots.clicked({"selection": {"points": [{"curve_number": 0, "customdata": 41}]}}) == (0, 41)
    assert plots.clicked({"selection": {"points": []}}) is None and plots.clicked(None) is None
    assert len(json.dumps(spec(fig))) < 20_000


def test_another_texts_points_as_one_distinct_trace_that_clicks_as_no_corpus_token():
    mine = np.array([[5, 5], [6, 5], [5, 6], [6, 6]], dtype=np.float32)          # 2 queries, then 2 keys
    fig = plots.joint_map(XY, POSITIONS, IDS, None, text=(mine, ["a", "<b>"]))
    queries, keys, text = fig.data
    assert text.type == "scatter"   # a few large marks drawn over the corpus's WebGL points, as SVG
    assert text.name == plots.TEXT_NAME and list(text.marker.symbol) == ["circle-open"] * 2 + ["x-thin-open"] * 2
    np.testing.assert_array_equal(text.x, [5, 6, 5, 6])
    assert list(text.hovertext) == ["query a", "query &lt;b&gt;", "key a", "key &lt;b&gt;"]
    assert list(text.customdata) == [-1] * 4 and text.marker.size > queries.marker.size
    click = {"selection": {"points": [{"curve_number": 2, "customdata": -1}]}}
    assert plots.clicked(click) == (2, -1)
    assert len(plots.joint_map(XY, POSITIONS, IDS, None, text=(mine[:0], [])).data) == 2   # nothing to draw
