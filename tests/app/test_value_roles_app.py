"""AppTest of what the head-effects cores add to existing pages: weight × value size on the heatmap and compare
pages, sink and role columns plus the similar-heads map on the compare page, the flip page's knockout section."""

import numpy as np
from pagetest import array, figures, open_page
from streamlit.testing.v1 import AppTest
from test_heatmaps_app import charts, heat

from explorer.examples import ANIMAL_TIRED
from explorer.heads_do import values
from explorer.model.registry import EMBEDDED_ENCODER
from explorer.ui import cached
from explorer.ui.views.heads_do import KNOCK_OPEN


def run(page: str, **params) -> AppTest:
    return open_page(f"pages/{page}", **params)


def colour_bar(at) -> str:
    return charts(at)["heatmap"]["data"][0]["colorbar"]["title"]["text"]


def bars_axis(at) -> str:
    return charts(at)["bars"]["layout"]["xaxis"]["title"]["text"]


def test_heatmap_shows_value_weighted_rows():
    at = run("heatmaps.py", layer="2", head="3")
    plain, _, _ = heat(at)
    assert colour_bar(at) == "weight"
    at.radio(key="weighting").set_value("value").run()
    assert not at.exception
    weighted, _, _ = heat(at)
    assert colour_bar(at) == "weight × value size" and bars_axis(at) == "weight × value size"
    vw = values.value_weighted(cached.WORKER.get(EMBEDDED_ENCODER), ANIMAL_TIRED)
    assert np.allclose(weighted, vw.normalised[2, 3], atol=1e-5)
    assert np.allclose(weighted.sum(-1), 1, atol=1e-4) and not np.allclose(weighted, plain, atol=1e-3)
    assert any("weight × value size" in c.value for c in at.caption)


def test_compare_adds_sinks_roles_and_similar_heads():
    at = run("compare.py")
    table = at.dataframe[0].value
    assert {"sink by weight", "sink by value size", "role", "induction", "duplicate"} <= set(table.columns)
    assert table["sink by value size"].mean() < table["sink by weight"].mean()   # sinks take weight, move little
    assert (table["role"] != "").any()
    scatter = figures(at)["Similar heads: close points attend alike"]["data"][0]
    assert len(array(scatter["x"])) == 72
    assert scatter["hovertext"][0].startswith("layer 0 · head 0")
    at.radio(key="weighting").set_value("value").run()
    assert not at.exception


def test_flip_page_knocks_out_its_top_heads():
    at = run("flip.py")
    assert "Knock these heads out" in [e.label for e in at.expander]
    assert not [b for b in at.button if b.key == "flipko_top"]   # folded: nothing of it drawn
    at.session_state[KNOCK_OPEN] = True   # the student opens it
    at.run()
    at.button(key="flipko_top").click().run()
    assert not at.exception
    shown = {m.label: m.value for m in at.metric}
    assert {"Sentence A, knocked out", "Sentence B, knocked out", "Shift A − B, knocked out"} <= set(shown)
    assert at.multiselect(key="flipko_heads").value == ["L3H1", "L4H0", "L5H11"]   # the flip ranking's top 3


def test_encoder_decoder_gets_messages_not_errors(tiny_folder):
    from tiny import TEXT
    folder = str(tiny_folder("t5"))
    cached.WORKER.get(folder)   # loaded already: a link to it opens without asking first
    at = run("heads_do.py", model=folder, text=TEXT, text_b=TEXT.replace("tired", "wide"))
    assert "No measure for a encoder-decoder model yet." in [w.value.replace("\\", "") for w in at.warning]
    for page in ("heatmaps.py", "compare.py"):
        at = run(page, model=folder, text=TEXT, weighting="value")
        assert any("not available for encoder-decoder models" in i.value for i in at.info) and not at.warning
    assert "similar-heads map is drawn for encoders and decoders only" in " ".join(c.value for c in at.caption)
