"""explorer.plots_heads: the layers × heads map, click decoding, and marks on heatmaps, from hand-made arrays."""
import numpy as np

from explorer.plots import attention as plots
from explorer.plots import heads as head_plots


def test_head_map_shape_hover_and_click_targets():
    values = np.arange(6, dtype=float).reshape(3, 2)
    fig = head_plots.value_per_head(values, title="flip", value_name="flip")
    heat, cells = fig.data[0], fig.data[1]
    assert np.array_equal(np.asarray(heat.z), values)
    assert heat.hoverinfo == "skip"
    assert len(cells.x) == 6 and cells.marker.opacity == 0
    assert cells.hovertext[3] == "layer 1 head 1: 3.000"
    assert list(cells.customdata[3]) == [1, 1]
    assert fig.layout.yaxis.range == (2.5, -0.5)          # layer 0 on top


def test_head_map_diverging_is_symmetric_about_zero():
    fig = head_plots.value_per_head(np.array([[-0.2, 0.5]]), diverging=True)
    heat = fig.data[0]
    assert heat.zmid == 0 and heat.zmin == -0.5 and heat.zmax == 0.5


def test_head_map_marks_and_selection():
    marked = np.array([[True, False], [False, True]])
    fig = head_plots.value_per_head(np.zeros((2, 2)), marked=marked, mark_name="flips", selected=(1, 0))
    dots = fig.data[2]
    assert list(dots.x) == [0, 1] and list(dots.y) == [0, 1]
    assert fig.data[1].hovertext[0].endswith("· flips") and not fig.data[1].hovertext[1].endswith("flips")
    (box,) = fig.layout.shapes
    assert (box.x0, box.x1, box.y0, box.y1) == (-0.5, 0.5, 0.5, 1.5)


def test_head_map_handles_nan_and_single_cell():
    fig = head_plots.value_per_head(np.array([[np.nan]]), diverging=True)
    assert fig.data[0].zmax > 0
    fig.to_dict()  # serialisable


def test_clicked_head_reads_customdata():
    event = {"selection": {"points": [{"x": 3, "y": 1, "customdata": [1, 3]}]}}
    assert head_plots.clicked_head(event) == (1, 3)
    assert head_plots.clicked_head({"selection": {"points": []}}) is None
    assert head_plots.clicked_head(None) is None
    assert head_plots.clicked_head({"selection": {"points": [{"x": 2}]}}) is None
    assert head_plots.clicked_head({"selection": {"points": [{"x": 2, "y": 5}]}}) == (5, 2)
    assert head_plots.clicked_head({"selection": {"points": [{"customdata": {"1": 4, "0": 2}}]}}) == (2, 4)
    assert head_plots.clicked_head({"selection": {"points": [{"customdata": "x"}, {"x": 1, "y": 0}]}}) == (0, 1)


def test_outline_rows_and_columns_on_a_heatmap():
    fig = plots.heatmap(np.full((4, 4), 0.25), list("abcd"), list("abcd"))
    head_plots.outline(fig, rows=[2], cols=[1, 3], n_rows=4, n_cols=4, label="same")
    shapes = fig.layout.shapes
    assert len(shapes) == 3
    assert (shapes[0].y0, shapes[0].y1, shapes[0].x1) == (1.5, 2.5, 3.5)
    assert (shapes[1].x0, shapes[1].x1, shapes[1].y1) == (0.5, 1.5, 3.5)
    assert fig.layout.annotations[0].text == "same"


def test_same_x_range_uses_the_larger_bars():
    a = plots.query_bars(np.array([0.1, 0.2, 0.7]), list("abc"), "a")
    b = plots.query_bars(np.array([0.3, 0.3, 0.4]), list("abc"), "a")
    head_plots.same_x_range(a, b)
    assert a.layout.xaxis.range == b.layout.xaxis.range
    assert abs(a.layout.xaxis.range[1] - 0.7 * 1.18) < 1e-9


def test_flip_map_from_a_flip_table():
    import pandas as pd
    table = pd.DataFrame({"layer": [0, 0, 1, 1], "head": [0, 1, 0, 1], "flip": [0.2, -0.1, 0.0, 0.5],
                          "flips": [True, False, False, True]})
    fig = head_plots.flip_map(table, 2, 2, selected=(1, 1))
    assert np.array_equal(np.asarray(fig.data[0].z), [[0.2, -0.1], [0.0, 0.5]])
    assert fig.data[0].zmid == 0 and fig.data[0].zmax == 0.5
    assert list(fig.data[2].x) == [0, 1] and list(fig.data[2].y) == [0, 1]


def test_difference_heatmap_is_zero_before_the_change():
    a = np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None]
    b = a.copy()
    b[2] = [0.5, 0.25, 0.25]
    z = np.asarray(head_plots.difference_heatmap(a, b, list("xyz"), list("xyz")).data[0].z, dtype=float)
    assert np.nansum(z[:2]) == 0 and np.nanmax(z[2]) > 0
    assert np.isnan(z[0, 1])                                  # hidden keys stay grey
