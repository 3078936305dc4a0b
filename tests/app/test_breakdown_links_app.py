"""The pages that draw one head's heatmap (compare, flip, watch it write) link each to the heatmap page's score
breakdown: the link names the head and the cell the page shows, and the heatmap page opened with its parameters
takes apart exactly that cell (its weight is the cell's)."""
import numpy as np
from pagetest import ROOT, array, breakdown_links, breakdown_weight, figures, in_app, open_page, texts
from streamlit.testing.v1 import AppTest

from explorer.attention import matrices
from explorer.generation.sampling import Settings
from explorer.generation.steps import text_for
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.plots.attention import FRAME
from explorer.ui import cached
from explorer.ui.views import generation_run

SHOWN = 5e-5   # the breakdown prints the weight to 4 decimals


def framed(spec: dict) -> tuple[int, int]:
    """(row, column) of the cell a heatmap frames (``plots.heatmap(cell=…)``, in the selected tile's colour)."""
    (box,) = [s for s in spec["layout"].get("shapes", []) if s["line"]["color"] == FRAME]
    return round(box["y0"] + 0.5), round(box["x0"] + 0.5)


def opened(params: dict[str, str]):
    """The heatmap page opened on a link's parameters: its breakdown must be open, on the linked query and key."""
    at = open_page("pages/heatmaps.py", **params)
    assert at.toggle(key="breakdown").value is True
    assert at.selectbox(key="query").value == int(params["query"])
    assert at.selectbox(key="key").value == int(params["key"])
    assert [at.slider(key="layer").value, at.slider(key="head").value] == [int(params["layer"]), int(params["head"])]
    (spec,) = [s for t, s in figures(at).items() if t.endswith(f"layer {params['layer']} · head {params['head']}")]
    assert framed(spec) == (int(params["query"]), int(params["key"]))   # the cell taken apart, framed
    return at


def test_compare_links_each_head_to_its_strongest_score_on_the_pronoun():
    at = in_app("pages/compare.py")
    text = at.text_area(key="text").value
    heads = [(int(h[1:].split("H")[0]), int(h.split("H")[1])) for h in at.multiselect(key="heads").value]
    links = breakdown_links(at)
    assert len(links) == len(heads) == 4                                   # one under each heatmap
    result = cached.get_attention(EMBEDDED_ENCODER, text)
    query = matrices.default_query(result)
    assert result.tokens[query] == "it"
    for (label, params), (layer, head) in zip(links, heads):
        key = int(np.nanargmax(z_of(at, (layer, head))[query]))   # the row's strongest key by default
        assert params == {"model": EMBEDDED_ENCODER, "text": text, "layer": str(layer), "head": str(head),
                          "query": str(query), "key": str(key), "breakdown": "1"}
        assert f"“it” → “{result.tokens[key]}”" in label.replace("\\", "")
        assert framed(figures(at)[f"layer {layer} · head {head}"]) == (query, key)   # the linked cell, framed
    _, params = links[0]
    heatmap = opened(params)
    assert abs(breakdown_weight(heatmap) - z_of(at, heads[0])[query, int(params["key"])]) < SHOWN


def z_of(at, head: tuple[int, int]) -> np.ndarray:
    return array(figures(at)[f"layer {head[0]} · head {head[1]}"]["data"][0]["z"])


def test_flip_links_the_head_in_each_sentence_on_the_candidate_it_leans_to():
    at = in_app("pages/flip.py")
    layer, head = at.slider(key="layer").value, at.slider(key="head").value
    links = breakdown_links(at)
    assert len(links) == 2
    for side, (label, params) in zip("AB", links):
        text = at.text_area(key="text" if side == "A" else "text_b").value
        result = cached.get_attention(EMBEDDED_ENCODER, text)
        query = int(params["query"])
        assert params["text"] == text and (params["layer"], params["head"]) == (str(layer), str(head))
        assert result.tokens[query] == "it" and params["breakdown"] == "1"
        (spec,) = [s for t, s in figures(at).items() if t.startswith(f"Sentence {side}")]
        z = array(spec["data"][0]["z"])
        animal, street = result.tokens.index("animal"), result.tokens.index("street")   # the two candidates
        key = int(params["key"])
        assert key in (animal, street) and z[query, key] == max(z[query, animal], z[query, street])
        assert framed(spec) == (query, key)
        assert label.replace("\\", "") == f"Take “it” → “{result.tokens[key]}” apart on the heatmap page"
        assert abs(breakdown_weight(opened(params)) - z[query, int(params["key"])]) < SHOWN


def test_write_links_the_steps_row_when_the_text_gives_back_its_tokens():
    at = in_app("pages/write.py")
    gen = generation_run.finished(("generate", EMBEDDED_DECODER, "The capital of France is", Settings()))
    (label, params), = breakdown_links(at)                                  # step 0, layer 0, head 0
    q = gen.query(0)
    assert params["model"] == EMBEDDED_DECODER and (params["layer"], params["head"]) == ("0", "0")
    assert int(params["query"]) == q and int(params["key"]) == int(np.argmax(gen.row(0, 0, 0)))
    assert text_for(cached.get_model(EMBEDDED_DECODER).tokenizer, gen.ids[:q + 1]) == params["text"]
    assert framed(figures(at)["The causal heatmap so far (last row: this step)"]) == (q, int(params["key"]))
    heatmap = opened(params)
    assert abs(breakdown_weight(heatmap) - gen.row(0, 0, 0)[int(params["key"])]) < SHOWN
    # step 4 reads a second "\n" written after a first: the tokenizer reads "\n\n" as one token, so no link
    n = gen.n_prompt
    assert gen.tokens[n + 2] == gen.tokens[n + 3] == "⏎"
    at.slider(key="step").set_value(4).run()
    assert not at.exception and breakdown_links(at) == []
    assert "The tokenizer would split the text so far into other tokens" in texts(at)


def test_a_fresh_link_keeps_its_key_through_the_app_and_every_rerun():
    """``key`` is the breakdown's key token, not a classroom teacher link (that one is ``teacher``): the app's
    first run leaves it in the address, the page opens on it, and a rerun shows no "teacher link" note."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(dict(layer="4", head="0", query="10", key="2", breakdown="1"))
    at.switch_page("pages/heatmaps.py").run()
    for _ in range(2):
        assert not at.exception, at.exception
        assert at.selectbox(key="key").value == 2 and at.query_params["key"] == "2"   # "animal", not the strongest
        assert "teacher link" not in texts(at)
        assert "Query **it** (position 10) → key **animal** (position 2)" in texts(at)
        at.slider(key="head").set_value(1).run()
