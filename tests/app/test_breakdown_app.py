"""The heatmap page's score breakdown through AppTest: a cell chosen with the query and key boxes opens a breakdown
whose weight is the heatmap's cell; several queries add up in the figure, the CSV and the address."""
import base64
import json
import re
from pathlib import Path

import numpy as np
from pagetest import unfolded
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "heatmaps.py")


def page(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=240)
    for key, value in params.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return unfolded(at)   # the breakdown's question folds the score until answered: shown without predicting


def chart(at, key: str) -> dict:
    """The plotly spec of the chart with widget key ``key``."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}") or f"-{key}-" in c.proto.id
             or c.proto.id.endswith(key)]
    assert found, [c.proto.id for c in at.get("plotly_chart")]
    return json.loads(found[0].proto.spec)


def array(value) -> np.ndarray:
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return flat.reshape([int(s) for s in shape.split(",")]) if shape else flat
    return np.array(value, dtype=float)


def shown_weight(at) -> float:
    text = "\n".join(m.value for m in at.markdown)
    return float(re.search(r"weight = softmax of the row at this key = \*\*([0-9.]+)\*\*", text).group(1))


def checks(at) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith((":material/check_circle:", ":material/warning:"))]


def test_choosing_a_cell_opens_its_breakdown_with_the_cells_weight():
    at = page(layer=0, head=3)
    assert "weight = softmax" not in "\n".join(m.value for m in at.markdown)   # closed until asked
    at.toggle(key="breakdown").set_value(True).run()
    assert at.query_params["breakdown"] == "1"
    assert "weight = softmax" not in "\n".join(m.value for m in at.markdown)   # folded under its question
    unfolded(at)   # for the rest of the session, whichever cell
    for query, key in [(10, 8), (10, 2), (4, 0)]:
        at.selectbox(key="query").set_value(query)
        at.selectbox(key="key").set_value(key).run()
        assert not at.exception
        z = array(chart(at, "heatmap")["data"][0]["z"])
        assert abs(shown_weight(at) - z[query, key]) < 5e-5           # the cell, to the 4 decimals shown
        assert all(c.startswith(":material/check_circle:") for c in checks(at)) and len(checks(at)) >= 3
        assert at.query_params["key"] == str(key)
    products = chart(at, "bd_products")
    assert products["data"][0]["type"] == "bar" and "marked" in products["layout"]["title"]["text"]
    assert "token · position" in str(chart(at, "bd_split")["data"][0]["y"])
    assert any("Predict, then reveal" in m.value and "dimensions" in m.value for m in at.markdown)
    at.slider(key="layer").set_value(2).run()                       # a later layer: the split no longer holds
    assert any("no longer splits" in m.value for m in at.markdown)


def test_decoder_breakdown_has_the_rotary_curve_and_a_deep_link():
    at = page(model="SmolLM2-135M-Instruct", layer=2, head=4, query=8, key=1, breakdown=1)
    text = "\n".join(m.value for m in at.markdown)
    assert "query head 4 reads key head 1" in text and "Before rotation" in text
    curve = chart(at, "bd_curve")
    assert curve["data"][1]["x"] == [7]                              # the pair's own distance, marked
    assert all(c.startswith(":material/check_circle:") for c in checks(at))
    assert any("At what distance" in m.value for m in at.markdown)


def test_several_queries_add_up_in_the_figure_the_csv_and_the_address():
    at = page(layer=1, head=2)
    z = array(chart(at, "heatmap")["data"][0]["z"])
    at.multiselect(key="bd_queries").set_value([3, 10]).run()
    assert at.query_params["queries"] == "3,10"
    bars = chart(at, "bd_several")["data"][0]
    np.testing.assert_allclose(array(bars["x"]), z[3] + z[10], atol=1e-6)
    np.testing.assert_allclose(bars["customdata"], (z[3] + z[10]) / 2, atol=1e-4)
    linked = page(layer=1, head=2, queries="3,10,99,x")
    assert linked.multiselect(key="bd_queries").value == [3, 10]


def tiny_family_page(tmp_path, family: str, **params) -> AppTest:
    """The heatmap page on a tiny random model of ``family`` (tests/family_configs.py), its breakdown open."""
    from family_configs import build
    at = page(model=str(build(family, tmp_path / family)), breakdown=1, **params)
    if any(b.key == "model_ask_load" for b in at.button):      # a folder nobody loaded asks first
        at.button(key="model_ask_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return unfolded(at)


def test_an_alibi_model_shows_its_bias_checked_against_the_slope(tmp_path):
    at = tiny_family_page(tmp_path, "bloom", layer=0, head=1)
    text = "\n".join(m.value for m in at.markdown)
    key = int(re.search(r"→ key \*\*.*?\*\* \(position (\d+)\)", text).group(1))
    assert "+ bias" in text and "this head's slope is 0.0625" in text                 # 4 heads: 2^-4 for head 1
    assert f"0.0625 × {key} = {0.0625 * key:+.4f}" in text
    assert any(f"slope × key position gives {0.0625 * key:+.5f}" in c for c in checks(at))
    assert all(c.startswith(":material/check_circle:") for c in checks(at))


def test_a_soft_capped_model_writes_its_cap_into_the_score(tmp_path):
    at = tiny_family_page(tmp_path, "gemma2", layer=0, head=1)
    text = "\n".join(m.value for m in at.markdown)
    assert "1 × tanh(scale × Σ qᵢ·kᵢ / 1)" in text and "Before rotation" in text
    assert all(c.startswith(":material/check_circle:") for c in checks(at)) and len(checks(at)) >= 2
