"""The heatmap page driven through Streamlit's AppTest: widgets in, figure data out."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from pagetest import array
from streamlit.testing.v1 import AppTest

from explorer.attention.result import extract
from explorer.examples import ANIMAL_TIRED

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "heatmaps.py")


def page(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    for key, value in params.items():
        at.query_params[key] = str(value)
    return at.run()


def charts(at) -> dict:
    """This page's figure specs by role, in the order it draws them: heatmap, bars, grid, overview."""
    charts = at.get("plotly_chart")
    specs = [json.loads(c.proto.spec) for c in charts]
    return dict(zip(["heatmap", "bars", "grid", "overview"], specs))


def heat(at) -> tuple[np.ndarray, list[str], list[str]]:
    spec = charts(at)["heatmap"]
    return (array(spec["data"][0]["z"]), spec["layout"]["yaxis"]["ticktext"], spec["layout"]["xaxis"]["ticktext"])


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def no_exceptions(at):
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(scope="module")
def tired(encoder):
    return extract(encoder, ANIMAL_TIRED)


def test_widgets_drive_the_figures(tired):
    at = page()
    no_exceptions(at)
    assert set(charts(at)) == {"heatmap", "bars", "grid", "overview"}
    z, rows, cols = heat(at)
    np.testing.assert_allclose(z, tired.weights[0, 0], atol=1e-6)
    assert rows == cols == tired.tokens
    assert "max difference" in captions(at)   # the fidelity badge of a real head

    at.slider(key="layer").set_value(3).run()
    np.testing.assert_allclose(heat(at)[0], tired.weights[3, 0], atol=1e-6)
    before = charts(at)["grid"], charts(at)["overview"]
    at.slider(key="head").set_value(5).run()
    np.testing.assert_allclose(heat(at)[0], tired.weights[3, 5], atol=1e-6)
    grid = charts(at)["grid"]
    assert grid["data"][0]["type"] == "image" and grid["data"][1]["customdata"][5] == [3, 5]   # a picture
    # the head is framed by a style rule beside the grid and the overview: neither figure changes with it
    assert (grid, charts(at)["overview"]) == before and len(grid["layout"]["shapes"]) == 12
    assert framed(at) == {"grid": 5, "overview": 5}   # the overview frames layer 3's tiles, shape h = head h

    bars = charts(at)["bars"]
    assert "Where it looks" in bars["layout"]["title"]["text"]   # the pronoun is the default query
    it = tired.tokens.index("it")
    np.testing.assert_allclose(sorted(array(bars["data"][0]["x"]), reverse=True),
                               np.sort(tired.weights[3, 5, it])[::-1][:12], atol=1e-6)
    at.selectbox(key="query").set_value(tired.tokens.index("animal")).run()
    assert "Where animal looks" in charts(at)["bars"]["layout"]["title"]["text"]
    assert at.query_params["query"] == str(tired.tokens.index("animal"))

    at.text_area(key="text").input("dog bites man").run()
    no_exceptions(at)
    assert heat(at)[1] == ["[CLS]", "dog", "bites", "man", "[SEP]"]
    # the query picked in the old sentence does not carry over: the new sentence's default, without a note
    assert at.selectbox(key="query").value == 3 and "Where man looks" in charts(at)["bars"]["layout"]["title"]["text"]
    assert not [i.value for i in at.info if "out of range" in i.value]


def test_options_change_the_matrix_and_say_so(tired):
    at = page(layer=2, head=1)
    at.checkbox(key="opt_hide").check().run()
    z, rows, _ = heat(at)
    assert "[CLS]" not in rows and "[SEP]" not in rows
    np.testing.assert_allclose(z.sum(-1), 1, atol=1e-5)
    assert "renormalised" in captions(at)

    at.checkbox(key="opt_mean").check().run()
    assert "mean of 12 heads" in charts(at)["heatmap"]["layout"]["title"]["text"]
    assert "max difference" not in captions(at)   # no single head: no fidelity badge

    at.checkbox(key="opt_mean").uncheck().run()
    at.checkbox(key="opt_rollout").check().run()
    assert "rollout through layers 0–2" in charts(at)["heatmap"]["layout"]["title"]["text"]
    assert "Attention rollout" in captions(at)

    at.checkbox(key="opt_shared").check().run()
    assert charts(at)["heatmap"]["data"][0]["zmax"] == 1.0
    no_exceptions(at)


def test_bad_link_values_are_clamped_with_a_note():
    at = page(layer=99, head="abc", query=500)
    no_exceptions(at)
    notes = "\n".join(i.value for i in at.info)
    assert "Layer 99 is out of range" in notes and "not a number" in notes and "position 500" in notes
    assert at.slider(key="layer").value == 5 and at.slider(key="head").value == 0
    assert at.selectbox(key="query").value == 15   # the nearest token: the last one
    at = page(model="no/such model!")
    no_exceptions(at)
    assert "not available" in at.warning[0].value and not at.get("plotly_chart")


def framed(at) -> dict[str, int]:
    """chart key -> the tile whose frame the page's style rules show (chart_text.show_frame)."""
    rules = [h.proto.body for h in at.get("html") if h.proto.body.startswith("<style>")]
    return {m.group(1): int(m.group(2)) for m in (re.search(r"\.st-key-(\w+) \.shapelayer path\[data-index='(\d+)'\]",
                                                            r) for r in rules) if m}


def test_overview_is_an_image_with_clickable_heads():
    at = page(layer=4, head=7)
    overview = charts(at)["overview"]
    image, points = overview["data"]
    assert image["type"] == "image" and image["source"].startswith("data:image/png;base64,")
    assert points["customdata"][4 * 12 + 7][:2] == [4, 7]   # then the head's statistics for the hover
    assert (overview["layout"]["shapes"][7]["x0"], overview["layout"]["shapes"][7]["y0"]) == (6.5, 3.5)
    assert len(overview["layout"]["shapes"]) == 12 and framed(at)["overview"] == 7
    assert len(at.get("plotly_chart")[3].proto.selection_mode) == 1   # points: a click picks a head


def test_bertviz_only_when_asked_and_capped():
    at = page()
    assert not at.get("iframe")
    at.toggle(key="bertviz").set_value(True).run()
    no_exceptions(at)
    frames = at.get("iframe")
    assert len(frames) == 2
    html = frames[0].proto.srcdoc
    assert "default-src 'none'" in html and "<script src=" not in html
    long_text = " ".join(["the cat sat on the mat and looked at the dog"] * 20)
    at.text_area(key="text").input(long_text).run()
    assert any("at most" in i.value for i in at.info)


def load_if_asked(at: AppTest) -> None:
    """A link to a model the server has not loaded yet asks first (explorer/ui/linkask.py): answer "Load it"."""
    if any(b.key == "model_ask_load" for b in at.button):
        at.button(key="model_ask_load").click().run()


def test_encoder_decoder_parts(tiny_folder):
    at = page(model=tiny_folder("t5"), text="the cat sat on the mat")
    load_if_asked(at)
    no_exceptions(at)
    assert at.radio(key="part").options == ["encoder self-attention", "decoder self-attention",
                                            "cross attention (decoder → encoder)"]
    enc_tokens = heat(at)[1]
    at.radio(key="part").set_value("cross").run()
    no_exceptions(at)
    z, rows, cols = heat(at)
    assert cols == enc_tokens and np.isfinite(z).all()
    assert "cross attention" in charts(at)["heatmap"]["layout"]["title"]["text"]
    at.radio(key="part").set_value("decoder").run()
    z = heat(at)[0]
    assert np.isnan(z[0, 1:]).all() and np.isfinite(np.tril(z)).all()


def test_causal_model_greys_the_mask(tiny_folder):
    at = page(model=tiny_folder("gpt2"), text="the cat sat on the mat")
    load_if_asked(at)
    no_exceptions(at)
    z = heat(at)[0]
    assert np.isnan(z[np.triu_indices(len(z), 1)]).all() and np.isfinite(z[np.tril_indices(len(z))]).all()
    at.checkbox(key="opt_hide").check().run()
    assert "nothing to hide" in captions(at)
