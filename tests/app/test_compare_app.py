"""AppTest of the compare-heads page on the embedded models: pick heads, change text and statistic, read figures."""
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from pagetest import array, figures, notes, open_page
from streamlit.testing.v1 import AppTest

from explorer.model.registry import EMBEDDED_DECODER

ROOT = Path(__file__).resolve().parents[2]


run = partial(open_page, "pages/compare.py")


def heatmaps(at: AppTest) -> dict[str, dict]:
    return {t: s for t, s in figures(at).items() if t.startswith("layer ")}


@pytest.fixture(scope="module")
def page() -> AppTest:
    return run()


def test_four_different_heads_on_one_colour_scale(page):
    heads = page.multiselect(key="heads").value
    assert len(heads) == 4 == len(set(heads))
    assert heads[0] == "L0H2"                                  # the encoder's previous-token head comes first
    maps = heatmaps(page)
    assert len(maps) == 4
    zmax = {spec["data"][0]["zmax"] for spec in maps.values()}
    assert len(zmax) == 1                                      # one colour scale for all
    assert max(np.nanmax(array(s["data"][0]["z"])) for s in maps.values()) == pytest.approx(zmax.pop(), abs=1e-6)
    assert page.dataframe[0].value.shape[0] == 72               # statistics for every head
    assert any("Previous-token" in m.value for m in page.markdown)


def test_heads_text_and_statistic_change_the_figures(page):
    at = page
    at.multiselect(key="heads").set_value(["L3H1", "L5H11"]).run()
    assert not at.exception
    assert set(heatmaps(at)) == {"layer 3 · head 1", "layer 5 · head 11"}
    before = array(heatmaps(at)["layer 3 · head 1"]["data"][0]["z"]).copy()
    at.text_area(key="text").input("the cat saw the dog and the dog saw the cat").run()
    assert not at.exception
    after = array(heatmaps(at)["layer 3 · head 1"]["data"][0]["z"])
    assert after.shape != before.shape or not np.allclose(after, before)
    stat_map = lambda: array(next(s for t, s in figures(at).items() if not t.startswith("layer "))["data"][0]["z"])
    previous = stat_map().copy()
    at.selectbox(key="stat").set_value("sink").run()
    assert not at.exception and not np.allclose(previous, stat_map())
    assert at.query_params["heads"] in ("L3H1,L5H11", ["L3H1,L5H11"])


def test_bad_heads_in_the_link_are_clamped_with_notes():
    at = run(heads="L9H0,banana,L1H1")
    assert at.multiselect(key="heads").value == ["L5H0", "L1H1"]
    assert "does not exist" in notes(at) and "'banana' is not a head" in notes(at)


def test_one_head_asks_for_another():
    at = run(heads="L1H1")
    assert "at least two heads" in " ".join(str(i.value) for i in at.info)
    assert len(heatmaps(at)) == 1


def test_decoder_heads_are_masked_above_the_diagonal():
    at = run(model=EMBEDDED_DECODER, heads="L0H0,L29H8")
    z = array(heatmaps(at)["layer 0 · head 0"]["data"][0]["z"])
    assert np.isnan(z[np.triu_indices_from(z, k=1)]).all()
    assert np.isfinite(np.tril(z)).all()
    assert figures(at)  # the map and heatmaps render
    assert any("first token" in m.value for m in at.markdown if "sink" in m.value.lower())


def test_text_and_model_carry_over_from_another_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at.switch_page("pages/heatmaps.py").run()
    at.text_area(key="text").input("dog bites man").run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="text").value == "dog bites man"
    at.switch_page("pages/flip.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="text").value == "dog bites man"   # becomes sentence A
