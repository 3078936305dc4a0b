"""Figures for real-model attention, checked on hand-made arrays."""
import base64
import io
import json
import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from PIL import Image

from explorer.maths import causal_mask
from explorer.plots import attention as plots
from explorer.plots import base, head_grids, thumbnails

TOKENS = ["the", "cat", "saw", "the", "dog"]


def weights(n=5, seed=0):
    w = np.random.default_rng(seed).random((n, n)).astype(np.float32)
    return w / w.sum(-1, keepdims=True)


def test_heatmap_keeps_repeated_tokens_apart_and_query_zero_on_top():
    fig = plots.heatmap(weights(), TOKENS, TOKENS, title="t")
    trace = fig.data[0]
    assert len(set(trace.x)) == 5 and [x.strip("\u200b\u200c") for x in trace.x] == TOKENS   # distinct, alike
    assert list(fig.layout.xaxis.tickvals) == list(trace.x) and list(fig.layout.xaxis.ticktext) == TOKENS
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.xaxis.type == "category"
    assert trace.customdata is None and trace.hovertemplate.startswith("%{y} → %{x}: %{z")


def test_heatmap_ticks_name_their_own_category_when_tokens_are_numbers():
    """On a category axis plotly takes a tick value 5 for the category named "5": ticks must be the categories,
    or "goat" at position 5 loses its label to the token "5" (seen in the browser)."""
    tokens = ["[CLS]", "student", "5", "says", "the", "goat", "1", "[SEP]"]
    fig = plots.heatmap(weights(8), tokens, tokens)
    for axis, trace_values in ((fig.layout.xaxis, fig.data[0].x), (fig.layout.yaxis, fig.data[0].y)):
        assert list(axis.tickvals) == list(trace_values) and list(axis.ticktext) == tokens
        assert all(isinstance(v, str) for v in axis.tickvals)


def test_heatmap_greys_masked_cells_and_escapes_markup():
    hidden = ~causal_mask(5, 5)
    fig = plots.heatmap(weights(), ["<b>x</b>", *TOKENS[1:]], TOKENS, masked=hidden)
    z = np.asarray(fig.data[0].z)
    assert np.isnan(z[hidden]).all() and np.isfinite(z[~hidden]).all()
    assert fig.layout.plot_bgcolor == plots.MASKED
    assert fig.layout.yaxis.ticktext[0] == "&lt;b&gt;x&lt;/b&gt;"


def test_heatmap_long_input_hovers_positions_not_tokens():
    n = plots.HOVER_LABELS_UP_TO + 1
    fig = plots.heatmap(np.full((n, n), 1 / n), [str(i) for i in range(n)], [str(i) for i in range(n)])
    assert fig.data[0].customdata is None and "query %{y}" in fig.data[0].hovertemplate


def test_query_bars_rank_and_name_by_position():
    row = np.array([0.1, 0.5, 0.05, 0.3, 0.05])
    fig = plots.query_bars(row, TOKENS, "it", top=3, key_positions=[10, 11, 12, 13, 14])
    assert list(fig.data[0].y) == ["cat · 11", "the · 13", "the · 10"]
    np.testing.assert_allclose(fig.data[0].x, [0.5, 0.3, 0.1])
    assert "the other 2 keys share 0.10" in fig.layout.title.text
    assert "share" not in plots.query_bars(row, TOKENS, "it").layout.title.text


def _grid_cell(image, head, i, j, n, n_cols):
    """RGB of cell (i, j) of ``head``'s thumbnail in a head_grid picture of n × n cells (a pixel a cell, a white
    title band above each thumbnail and a white gap after it)."""
    band, gap = max(2, math.ceil(0.2 * n)), max(1, math.ceil(0.05 * n))
    row, col = divmod(head, n_cols)
    return image[row * (band + n + gap) + band + i, col * (n + gap) + j].tolist()


def test_head_grid_is_one_picture_with_a_clickable_tile_per_head():
    w = np.stack([weights(seed=s) for s in range(5)])
    fig = head_grids.head_grid(w, TOKENS, TOKENS, selected=2, layer=3)
    picture, points = fig.data
    assert picture.type == "image" and len(points.x) == 5
    assert points.customdata[4] == [3, 4] and all(isinstance(c, list) for c in points.customdata)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[2].startswith("<b>head 2") and titles[0] == "head 0" and len(fig.layout.shapes) == 1
    i, j = np.unravel_index(w[1].argmax(), w[1].shape)
    assert points.text[1] == f"head 1: strongest {TOKENS[i]} → {TOKENS[j]} {w[1, i, j]:.2f}"
    shared = _png(fig)
    level = round(float(w[0, 0, 0]) * (thumbnails.LEVELS - 1)) / (thumbnails.LEVELS - 1)
    assert _grid_cell(shared, 0, 0, 0, 5, 5) == thumbnails.blues(np.array(level)).tolist()   # one 0–1 scale
    own = _png(head_grids.head_grid(w, TOKENS, TOKENS, shared_scale=False))
    darkest = thumbnails.blues(np.array(1.0)).tolist()
    for head in range(5):   # each head scaled to its own maximum: its strongest cell is the darkest colour
        i, j = np.unravel_index(w[head].argmax(), w[head].shape)
        assert _grid_cell(own, head, i, j, 5, 5) == darkest


def test_head_grid_pools_long_inputs_and_masks():
    n = 100
    tokens = [f"t{i}" for i in range(n)]
    w = np.tril(np.ones((3, n, n), np.float32))
    w /= w.sum(-1, keepdims=True)
    fig = head_grids.head_grid(w, tokens, tokens, masked=~causal_mask(n, n), max_side=20)
    image = _png(fig)
    grey = [int(plots.MASKED[i:i + 2], 16) for i in (1, 3, 5)]
    assert image.shape[1] == 3 * (20 + 1)                 # 100 tokens pooled to 20 cells, a pixel each
    assert _grid_cell(image, 0, 0, 19, 20, 3) == grey     # a cell no query can see
    assert _grid_cell(image, 0, 5, 5, 20, 3) != grey      # the diagonal is seen
    assert "strongest t1 → t0" in fig.data[1].text[0]      # query 0 (sees only itself) is not named


def _png(fig):
    uri = fig.data[0].source
    assert uri.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB"))


def test_overview_is_one_image_with_clickable_points():
    tiles = np.random.default_rng(0).random((3, 4, 6, 6)).astype(np.float32)
    fig = head_grids.overview(tiles, selected=(2, 1))
    image = _png(fig)
    k = 2   # 6 cells are scaled up to 12 pixels a side
    assert image.shape == (3 * (6 * k + 1), 4 * (6 * k + 1), 3)
    assert (image[6 * k, :] == 255).all() and (image[:, 6 * k] == 255).all()   # white gaps
    points = fig.data[1]
    assert points.customdata[5] == [1, 1] and all(isinstance(c, list) for c in points.customdata)
    assert points.text[5] == "layer 1 · head 1"
    rect = fig.layout.shapes[0]
    assert (rect.x0, rect.y0) == (0.5, 1.5)
    assert fig.layout.dragmode is False and fig.layout.hoverdistance == -1


def test_overview_colours_scale_and_mask():
    tiles = np.zeros((1, 2, 2, 2), np.float32)
    tiles[0, 0] = [[0.5, 0.0], [0.25, 0.25]]
    tiles[0, 1] = 1.0
    masked = np.array([[False, True], [False, False]])
    shared = _png(head_grids.overview(tiles, masked, shared_scale=True))
    own = _png(head_grids.overview(tiles, masked, shared_scale=False))
    grey = [int(thumbnails.MASKED_LIGHT[i:i + 2], 16) for i in (1, 3, 5)]
    assert shared[0, 6].tolist() == grey   # the masked cell (upper right of the first tile)
    # scaled to its own maximum, the first tile's 0.5 cell becomes as dark as the full tile
    assert own[0, 0].tolist() == own[0, 13].tolist() != shared[0, 0].tolist()


def test_overview_sends_a_picture_not_the_weights():
    tiles = np.random.default_rng(1).random((30, 9, 24, 24)).astype(np.float32)   # noise: the worst case
    size = len(pio.to_json(head_grids.overview(tiles, hover=[[f"L{a}H{b}" for b in range(9)] for a in range(30)])))
    assert size < tiles.nbytes / 2
    peaked = np.zeros_like(tiles)
    peaked[..., 0] = 0.6
    peaked[..., np.arange(24), np.arange(24)] += 0.4   # attention-like: a sink column and a diagonal
    assert len(pio.to_json(head_grids.overview(peaked))) < tiles.nbytes / 20
    json.loads(pio.to_json(head_grids.overview(tiles[:1, :1])))


def _as_sent(fig) -> dict:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))   # what st.plotly_chart sends


def test_figures_built_without_validation_validate_to_the_same_json():
    """base.figure() skips plotly's validators and, until something looks inside, plotly's object tree, for speed:
    every figure of this module must still be valid (plotly raises on an unknown property) and send exactly what
    its built and its validated twins would."""
    w = np.stack([weights(seed=s) for s in range(3)])
    hidden = ~causal_mask(5, 5)
    tiles = np.random.default_rng(0).random((2, 3, 6, 6)).astype(np.float32)
    stats = np.random.default_rng(1).random((2, 3, 4)).astype(np.float32)
    figures = [plots.heatmap(w[0], TOKENS, TOKENS, title="t"),
               plots.heatmap(w[0], ["<b>x</b>", *TOKENS[1:]], TOKENS, masked=hidden, zmax=None),
               plots.heatmap(w[0], TOKENS, TOKENS, masked=hidden, clickable=True),
               plots.heatmap(np.full((101, 101), 1 / 101), [str(i) for i in range(101)], [str(i) for i in range(101)]),
               plots.query_bars(w[0, 1], TOKENS, "cat", top=3, key_positions=[0, 1, 2, 3, 4]),
               head_grids.head_grid(w, TOKENS, TOKENS, masked=hidden, selected=1, layer=2),
               head_grids.overview(tiles, selected=(1, 2), stats=stats, stats_hover="%{customdata[2]:.2f}")]
    for fig in figures:
        light = _as_sent(fig)   # straight from the given dicts: plotly's object tree not built yet
        assert isinstance(fig, base.LightFigure) and "_light" in fig.__dict__
        assert fig._validate is False and "_light" not in fig.__dict__   # looking inside builds it
        sent = _as_sent(fig)
        assert light == sent   # the same JSON either way
        # plotly's default template is never sent; the framed figures carry only their frames' common style
        template = sent["layout"].pop("template", None) or {}
        framed = template == head_grids.FRAMED
        assert template in ({}, head_grids.FRAMED) and framed == bool(sent["layout"].get("shapes"))
        validated = _as_sent(go.Figure(fig.to_dict()))   # validates every property; raises on an invalid one
        kept = validated["layout"].pop("template", None) or {}   # (validating an empty one fills in a default)
        assert not template or kept == template
        assert validated == sent



def _pixels(uri: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))))


def test_thumbnail_pictures_hold_the_exact_pixels_and_are_remembered():
    a = np.random.default_rng(0).integers(0, thumbnails.LEVELS + 2, size=(30, 40)).astype(np.uint8)
    b = a.copy()
    b[3, 4] = (b[3, 4] + 1) % (thumbnails.LEVELS + 2)   # one pixel apart
    first = thumbnails.png_uri(a)
    assert np.array_equal(_pixels(first), a) and np.array_equal(_pixels(thumbnails.png_uri(b)), b)
    assert thumbnails.png_uri(a.copy()) is first                 # the same picture again: encoded once, remembered
    assert thumbnails.png_uri(a, "#000000") != first             # another masked colour is another palette
    for i in range(thumbnails.PNG_MEMO):                          # a bounded memory: the oldest go first
        thumbnails.png_uri(np.array([[i % 16, i // 16]], dtype=np.uint8))
    assert len(thumbnails._png_memo) == thumbnails.PNG_MEMO and thumbnails.png_uri(a.copy()) is not first


def test_frames_mode_draws_a_hidden_frame_round_every_tile_in_tile_order():
    """frames=True (the grid) or frame_row (the overview): the figure names no selected head, so it stays the same
    when the selection moves; the page shows one frame with a style rule (tile i = shape i)."""
    w = np.stack([weights(seed=s) for s in range(3)])
    grid = head_grids.head_grid(w, TOKENS, TOKENS, selected=1, frames=True).to_dict()["layout"]
    assert len(grid["shapes"]) == 3 and not any("line" in s for s in grid["shapes"])   # all styled alike, by:
    assert grid["template"]["layout"]["shapedefaults"]["line"] == dict(color=head_grids.NO_FRAME, width=3)
    assert "◀" not in json.dumps(grid["annotations"], ensure_ascii=False)
    assert grid == head_grids.head_grid(w, TOKENS, TOKENS, selected=2, frames=True).to_dict()["layout"]
    tiles = np.random.default_rng(0).random((2, 3, 6, 6)).astype(np.float32)
    shapes = head_grids.overview(tiles, frame_row=1).to_dict()["layout"]["shapes"]   # one layer's tiles: h = head h
    assert [(s["x0"], s["y0"]) for s in shapes] == [(-0.5, 0.5), (0.5, 0.5), (1.5, 0.5)]
    one = head_grids.overview(tiles, selected=(1, 2)).to_dict()["layout"]["shapes"]   # without frames: one, orange
    assert [(s["x0"], s["y0"], s["line"]["color"]) for s in one] == [(1.5, 0.5, head_grids.FRAME)]


def _sent_dtype(fig) -> str:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))["data"][0]["z"]["dtype"]


def test_figures_are_sent_at_the_shown_precision_whether_built_or_light():
    z = np.array([[0.1234567891, 0.5], [0.25, 0.75]])
    built = go.Figure(go.Heatmap(z=z))
    built._text_alternative = "kept"
    light = base.LightFigure([{"type": "heatmap", "z": z.copy()}], {})
    for fig in (built, light):
        sent = base.at_shown_precision(fig)
        assert _sent_dtype(sent) == "f4"   # 4 bytes a number on the wire, not 8
        shown = sent.light_traces()[0]["z"]
        assert shown.dtype == np.float32 and np.allclose(shown, z, rtol=2 ** -24, atol=0)   # float32: 24 bits
    assert base.at_shown_precision(built)._text_alternative == "kept"   # the words under the chart travel with it
    assert _sent_dtype(built) == "f8"   # the caller's built figure is left as it was
