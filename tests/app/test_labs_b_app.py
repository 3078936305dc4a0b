"""AppTest of the positions, masks and block labs: move each lab's controls, answer its question, read the numbers."""
import base64
import json
from pathlib import Path

import numpy as np
import pytest
from labs_helpers import answer as _answer
from labs_helpers import run_page as _run
from pagetest import click, unfolded
from streamlit.testing.v1 import AppTest

from explorer.labs import blocks


def _figure(at: AppTest, title_start: str) -> dict:
    """The plotly spec of the chart whose title starts with ``title_start``."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return next(s for s in specs if s["layout"].get("title", {}).get("text", "").startswith(title_start))


def _array(value) -> np.ndarray:
    """Plotly 6+ sends arrays as {"dtype", "bdata"} (base64); older specs as lists."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def _texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [c.value for c in at.code]
                     + [str(s.value) for s in at.success] + [str(e.value) for e in at.error]
                     + [str(w.value) for w in at.warning])


# ------------------------------------------------------------------------------------------------- block
def test_block_lab_heads_controls_and_quiz():
    at = unfolded(_run("pages/lab_block.py"))   # the count of multiplications is folded under the question
    sliders = {s.label: s for s in at.select_slider}
    sliders["Model width d_model"].set_value(64).run()
    {s.label: s for s in at.select_slider}["Heads h"].set_value(4).run()
    at.slider[0].set_value(4).run()
    assert "d_head = 64 / 4 = 16" in _texts(at)
    table = at.dataframe[0].value
    assert list(table["multiplications"]) == [2 * 4 * 4 * 16, 2 * 4 * 4 * 64, 2 * 4 * 4 * 64, 4 * 4 * 64 * 64]
    at = _answer(click(at, "Predict again"), "the same")
    assert "Right: the same" in _texts(at)
    assert "**2,048**" in _texts(at)


def test_block_lab_wrong_answer_is_checked():
    at = _answer(_run("pages/lab_block.py"), "less: each head is narrower")
    assert "Not quite" in _texts(at)


def test_block_lab_norm_switch_and_seed_output():
    at = unfolded(_run("pages/lab_block.py"))
    expected = np.array2string(np.round(blocks.seed_block().output, 3))
    assert expected in [c.value for c in at.code]
    assert "1.674" in expected and "-0.828" in expected
    stds = at.dataframe[1].value
    assert list(stds.index)[-1] == "layer norm 2 = output"
    norm_radio = next(r for r in at.radio if r.label == "Where the layer norm sits")
    norm_radio.set_value("pre").run()
    stds = at.dataframe[1].value
    assert list(stds.index)[-1] == "final layer norm = output"
    assert stds.loc["final layer norm = output"].round(3).tolist() == [1.0, 1.0, 1.0]
    assert stds.loc["input"].round(3).tolist() == [0.35, 0.334, 0.308]
    assert "0.816, 0.893, 0.942" in _texts(at)


# ------------------------------------------------------------------------------------------------- masks
def test_masks_lab_patterns_sliders_and_padding_quiz(encoder):
    at = _run("pages/lab_masks.py")
    at.text_input[0].set_value("dog bites man").run()
    for label, value in {"Encoder layer": 5, "Encoder head": 3, "Decoder layer": 29, "Decoder head": 8}.items():
        next(s for s in at.slider if s.label == label).set_value(value).run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert "the decoder's largest is **0**: exactly zero" in text
    assert len(at.get("plotly_chart")) == 2  # measurements stay hidden until a prediction is committed
    assert "The measurements stay folded until you commit a prediction" in text
    exp = blocks.padding_experiment(encoder, "I love cats.", "The report that the committee finally published last "
                                                             "Tuesday was widely condemned.")
    assert exp.change_unmasked.mean() > 0.05 and exp.change_masked.max() < 1e-5
    at = _answer(at, "a lot (5% or more)")
    text = _texts(at)
    assert "Right: a lot (5% or more)" in text
    assert f"they move by **{exp.change_unmasked.mean():.1%}** on average" in text
    assert len(at.get("plotly_chart")) == 4


def test_masks_lab_wrong_order_warns():
    at = _run("pages/lab_masks.py")
    at.text_input[1].set_value("The committee finally published the long report last Tuesday.").run()
    at.text_input[2].set_value("Hi.").run()
    assert not at.exception, at.exception
    assert any("shorter" in w.value for w in at.warning)


# --------------------------------------------------------------------------------------------- positions
def _slider(at: AppTest, label: str):
    return next(s for s in [*at.slider, *at.select_slider] if s.label == label)


def test_positions_lab_sinusoidal_controls():
    at = _run("pages/lab_positions.py")
    _slider(at, "Positions").set_value(64).run()
    _slider(at, "d_model").set_value(32).run()
    _slider(at, "Offset k for the linear-map check").set_value(7).run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert "One 32 × 32 matrix M" in text and "over all 57 positions" in text
    err = float(text.split("PE(p+7)| = **")[1].split("**")[0])
    assert err < 1e-12
    assert next(m for m in at.multiselect if m.label == "Dimensions to plot").value == [0, 1, 8, 16]


def test_positions_lab_sliders_are_deep_linked_and_clamped():
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages/lab_positions.py"), default_timeout=120)
    at.query_params.update({"pos_n": "64", "pos_d": "30", "pos_at": "999"})
    at.run()
    assert not at.exception, at.exception
    assert [_slider(at, n).value for n in ("Positions", "d_model", "Compare with position")] == [64, 32, 63]
    assert at.query_params["pos_d"] == "32" and at.query_params["pos_at"] == "63"   # what a class follows
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages/lab_positions.py"), default_timeout=120)
    at.query_params["pos_d"] = "<b>x</b>"
    at.run()
    assert _slider(at, "d_model").value == 128
    assert any("in the link is not a number" in i.value and "\\<b" in i.value for i in at.info)   # shown literally


def test_positions_lab_learned_table_numbers(encoder):
    from explorer.labs import positions as P
    at = _run("pages/lab_positions.py", pos_tab="Learned table")
    _slider(at, "First positions to compare").set_value(32).run()
    offs, means = P.mean_by_offset(P.cosine_similarity_matrix(P.learned_position_table(encoder)[:32]))
    text = _texts(at)
    assert "a 512 × 384 table" in text
    assert f"(1 apart): **{means[offs == 1][0]:.2f}**; 10 apart: **{means[offs == 10][0]:.2f}**" in text


def test_positions_lab_rope_settings_and_quiz():
    at = _run("pages/lab_positions.py", pos_tab="Rotary (RoPE)")
    assert "θ = 100,000, head size 64 (32 pairs), 9 query heads sharing 3 key/value heads" in _texts(at)
    _slider(at, "Query position m").set_value(10).run()
    _slider(at, "Key position n").set_value(3).run()
    _slider(at, "Then move both by").set_value(500).run()
    _slider(at, "Pair i").set_value(31).run()
    assert not any("q_m · k_n" in str(c.proto.spec) for c in at.get("plotly_chart"))   # folded until answered
    at = _answer(at, "the same")
    assert "largest spread" in _figure(at, "q_m · k_n")["layout"]["title"]["text"]
    text = _texts(at)
    assert "Right: the same" in text
    assert "(q at 510, k at 503)" in text
    before = float(text.split("the score is ")[1].split(". Move")[0])
    after = float(text.split("Computed: **")[1].split("**")[0])
    assert before == pytest.approx(after, abs=1e-4)


def test_positions_lab_real_heads_decoder(decoder):
    from explorer.attention.result import extract
    from explorer.labs import positions as P
    at = _run("pages/lab_positions.py", pos_tab="Real heads")
    next(r for r in at.radio if r.label == "Model").set_value("SmolLM2-135M-Instruct").run()
    assert not at.exception, at.exception
    assert _slider(at, "Layer").max == 29 and _slider(at, "Head").max == 8
    _slider(at, "Layer").set_value(29).run()
    _slider(at, "Head").set_value(8).run()
    assert not at.exception, at.exception
    bars = _figure(at, "Layer 29, head 8")["data"][0]
    res = extract(decoder, "The animal didn't cross the street because it was too tired.")
    dist, means = P.attention_by_distance(res.weights)
    np.testing.assert_array_equal(_array(bars["x"]), dist[dist >= 0])  # a decoder never looks ahead
    np.testing.assert_allclose(_array(bars["y"]), means[29, 8][dist >= 0], atol=1e-6)
