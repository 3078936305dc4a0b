"""AppTest of the antecedent-flip page on the embedded models: drive its widgets and read the figures' data."""
from functools import partial

import numpy as np
import pytest
from pagetest import array, figures, notes, open_page, texts
from streamlit.testing.v1 import AppTest

from explorer.examples import FLIP_PAIRS
from explorer.model.registry import EMBEDDED_DECODER

run = partial(open_page, "pages/flip.py")


def heat(at: AppTest, side: str) -> np.ndarray:
    (spec,) = [s for t, s in figures(at).items() if t.startswith(f"Sentence {side}")]
    return array(spec["data"][0]["z"])


@pytest.fixture(scope="module")
def encoder_page() -> AppTest:
    return run()


def test_defaults_show_the_encoder_flip(encoder_page):
    at = encoder_page
    assert "5 of 72 heads lean to 'animal' in A and to 'street' in B." in texts(at)
    assert [s.value for s in at.slider] == [4, 0]          # the strongest flipping head is opened
    titles = set(figures(at))
    assert {"Flip per head", "Sentence A · layer 4 · head 0", "Sentence B · layer 4 · head 0"} <= titles
    flip_map = figures(at)["Flip per head"]
    z = array(flip_map["data"][0]["z"])
    assert z.shape == (6, 12)
    dots = flip_map["data"][2]                              # the heads that flip carry a dot
    assert (4, 0) in set(zip(array(dots["y"]).astype(int), array(dots["x"]).astype(int)))
    assert "Even the largest flip is small" not in texts(at)
    table = at.dataframe[0].value
    assert (int(table.loc[0, "layer"]), int(table.loc[0, "head"])) == (4, 0)
    assert at.query_params["layer"] == ["4"] or at.query_params["layer"] == "4"


def test_layer_head_query_and_text_change_the_figures(encoder_page):
    at = encoder_page
    before = heat(at, "A").copy()
    at.slider(key="layer").set_value(2).run()
    assert not at.exception
    after_layer = heat(at, "A")
    assert "Sentence A · layer 2 · head 0" in figures(at) and not np.allclose(before, after_layer)
    at.slider(key="head").set_value(5).run()
    assert "Sentence A · layer 2 · head 5" in figures(at) and not np.allclose(after_layer, heat(at, "A"))
    map_before = array(figures(at)["Flip per head"]["data"][0]["z"])
    at.selectbox(key="query").set_value("animal").run()
    assert not at.exception
    assert not np.allclose(map_before, array(figures(at)["Flip per head"]["data"][0]["z"]))
    b_before = heat(at, "B").copy()
    at.text_area(key="text_b").input("The animal didn't cross the street because it was too narrow.").run()
    assert not at.exception
    assert not np.allclose(b_before, heat(at, "B"))


def test_bad_link_values_are_clamped_with_a_note():
    at = run(layer="99", head="banana", query="zebra")
    assert "Layer 99 is out of range" in notes(at) and "not a number" in notes(at)
    assert "'zebra' is not a word of the text" in notes(at)
    assert [s.value for s in at.slider] == [5, 0]           # clamped layer; a bad head falls back to the default
    assert at.selectbox(key="query").value == "it"


def test_missing_candidate_is_dropped_and_explained():
    at = run(cands="animal,unicorn")
    assert "'unicorn'" in notes(at)
    assert at.multiselect(key="cands").value == ["animal"]
    assert "at least two candidate" in " ".join(str(w.value) for w in at.warning)


def test_heatmap_page_query_position_maps_to_its_word():
    at = run(query="10")                                     # token 10 of sentence A is "it"
    assert at.selectbox(key="query").value == "it"
    assert not at.info


def test_decoder_shows_why_it_cannot_change_then_switches_pair():
    at = run(model=EMBEDDED_DECODER)
    warning = " ".join(str(w.value) for w in at.warning).replace("\\", "")
    assert "causal" in warning and "same in both texts" in warning
    a, b = heat(at, "A"), heat(at, "B")
    assert np.isnan(a[0, 1:]).all()                          # the causal mask is drawn grey (NaN), not as 0
    it = 8                                                   # "it" is token 8 in SmolLM2's tokenisation
    assert np.array_equal(a[it], b[it], equal_nan=True)      # the lesson: identical rows
    assert any(t.startswith("|A − B|") for t in figures(at))
    assert "Flip per head" not in figures(at)
    [switch] = [x for x in at.button if "pair written for decoders" in x.label]
    switch.click().run()
    assert not at.exception
    a_text, b_text, _, _ = FLIP_PAIRS["tired / wide … then it (decoder)"]
    assert at.text_area(key="text").value == a_text and at.text_area(key="text_b").value == b_text
    assert "heads lean to 'animal' in A and to 'street' in B" in texts(at)
    assert "Even the largest flip is small" in texts(at)     # SmolLM2's heads barely move: said plainly
    assert "Flip per head" in figures(at)
    assert not np.array_equal(heat(at, "A")[-1], heat(at, "B")[-1], equal_nan=True)  # the later "it" sees it
