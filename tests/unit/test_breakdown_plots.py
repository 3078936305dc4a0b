"""Figures of one score taken apart: valid plotly (validated twins send the same JSON), the numbers they draw are
the breakdown's, and each has a text alternative with its table; a clickable heatmap reports the clicked cell."""
import base64
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from tiny import TEXT

from explorer.attention import matrices
from explorer.attention.breakdown import breakdown
from explorer.attention.result import extract
from explorer.attention.score_origin import origin
from explorer.plots import attention as heat
from explorer.plots import breakdown as plots


def array(value) -> np.ndarray:
    """A plotly JSON array: base64 typed array (``bdata``) or a plain list."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    return np.asarray(value, dtype=float)


def _sent(fig) -> dict:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))


def _valid(fig) -> dict:
    sent = _sent(fig)
    validated = _sent(go.Figure(fig.to_dict()))   # raises on an unknown property
    validated["layout"].pop("template", None)
    sent["layout"].pop("template", None)
    assert validated == sent
    return sent


def test_breakdown_figures(tiny_loaded):
    bert, llama = tiny_loaded("bert"), tiny_loaded("llama")
    res = extract(bert, TEXT)
    b = breakdown(res, 0, 1, 8, 2)
    split = origin(bert.model, res, b).split
    products = _valid(plots.products(b, shown=5))
    assert np.allclose(array(products["data"][0]["y"]), b.products[b.order[:3 + 2]])
    assert "3 more add" in products["layout"]["title"]["text"]   # d_head 8, 5 shown
    vectors = _valid(plots.vectors(b))
    assert len(vectors["layout"]["shapes"]) == len(b.carriers)
    parts = _valid(plots.split_parts(split))
    assert np.allclose(array(parts["data"][0]["x"]), [*split.parts.values(), split.total])
    r_res = extract(llama, TEXT)
    rb = breakdown(r_res, 1, 2, 9, 4)
    rotary = origin(llama.model, r_res, rb).rotary
    curve = _valid(plots.rotary_curve(rotary, within=9))
    assert list(array(curve["data"][1]["x"])) == [5] and abs(array(curve["data"][1]["y"])[0] - rb.score) < 1e-4
    view = matrices.matrix_view(res, "self", 0, 1, matrices.Options())
    frame = matrices.several_queries(view, [1, 8])
    several = _valid(plots.several_queries(frame))
    assert np.allclose(array(several["data"][0]["x"]), frame["sum"])
    for fig in (plots.products(b), plots.vectors(b), plots.split_parts(split), plots.rotary_curve(rotary, 9),
                plots.several_queries(frame)):
        alt = fig._text_alternative
        assert alt.summary and all(len(table) for _, table in alt.tables())


def test_clickable_heatmap_reports_the_clicked_cell():
    masked = np.zeros((3, 4), bool)
    masked[0, 3] = True
    fig = heat.heatmap(np.full((3, 4), 0.25), list("abc"), ["w", "<b>", "y", "z"], clickable=True, masked=masked)
    cells, points = fig.to_dict()["data"]
    assert points["xaxis"] == "x2" and cells["hoverinfo"] == "skip"   # the points carry the hover
    assert points["text"][1 * 4 + 1] == "b → &lt;b&gt;: 0.250" and "causal mask" in points["text"][3]
    assert heat.clicked_cell({"selection": {"points": [{"x": 2, "y": 1, "point_index": 6}]}}) == (1, 2)
    assert heat.clicked_cell({"selection": {"points": []}}) is None and heat.clicked_cell(None) is None
    big = heat.heatmap(np.full((70, 70), 1 / 70), [str(i) for i in range(70)], [str(i) for i in range(70)],
                       clickable=True)
    assert len(big.to_dict()["data"]) == 1   # too many cells for points: the select boxes only
