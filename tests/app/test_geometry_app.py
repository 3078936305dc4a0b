"""AppTest of the head-geometry page on the embedded encoder: the shared corpus pass, one head's map with the
alignment caption, a clicked query's top keys and heatmap link, compare, the layer grid and the lab question."""
from functools import partial
from urllib.parse import parse_qs

import numpy as np
from pagetest import ROOT, breakdown_weight, figures, open_page, texts
from streamlit.testing.v1 import AppTest

from explorer.geometry import lab, maps, overlay
from explorer.jobs.worker import Jobs
from explorer.model.registry import EMBEDDED_ENCODER
from explorer.plots import geometry as plots
from explorer.ui import cached
from explorer.ui.views import geometry as geo

run = partial(open_page, "pages/geometry.py")


def test_map_of_one_head_with_the_alignment_caption():
    at = run(layer=0, head=2)
    shared = geo.PASSES.peek(EMBEDDED_ENCODER).wait()            # the pass every session shares
    title = next(t for t in figures(at) if t.startswith("layer 0 · head 2"))
    spec = figures(at)[title]
    queries, keys = spec["data"][:2]
    assert queries["name"] == "queries" and keys["name"] == "keys"
    assert queries["marker"]["symbol"] == "circle" and keys["marker"]["symbol"] != "circle"
    assert len(queries["hovertext"]) == shared.n_points == len(keys["hovertext"])
    assert "Largest change of any attention weight over the corpus" in texts(at)
    change = maps.head_map(shared, 0, 2).max_change
    assert change <= 1e-6 and f"{change:.1e}" in texts(at)
    assert "Click a query" in texts(at)


def test_clicking_a_query_draws_its_top_keys_and_links_the_heatmap():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()   # in the app: links resolve
    at.switch_page("pages/geometry.py").run()
    shared = geo.PASSES.peek(EMBEDDED_ENCODER).wait()
    point = 5                                                     # sentence 0, position 5
    at.session_state["geo_query"] = (shared.facts.name, point)
    at.slider(key="head").set_value(2).run()
    assert not at.exception
    top = maps.top_keys(shared, 0, 2, point)
    title = next(t for t in figures(at) if t.startswith("layer 0 · head 2"))
    assert len(figures(at)[title]["layout"]["shapes"]) == len(top)          # one line per top key
    assert "Top keys" in texts(at) and repr(shared.tokens[top[0][0]]) in texts(at)
    [link] = [e.proto for e in at.get("page_link") if "heatmap page" in e.proto.label]
    params = parse_qs(link.query_string)
    assert params["text"] == [shared.sentences[0]] and params["layer"] == ["0"] and params["head"] == ["2"]
    assert params["query"] == ["5"] and params["model"] == [EMBEDDED_ENCODER]
    key, weight = top[0]                                          # sentence 0 starts at point 0: point = position
    assert params["key"] == [str(key)] and params["breakdown"] == ["1"]   # its top key's score, taken apart
    assert link.label.replace("\\", "") == (f"Take “{shared.tokens[point]}” → “{shared.tokens[key]}” apart on the "
                                             "heatmap page")
    heatmap = open_page("pages/heatmaps.py", **{k: v[0] for k, v in params.items()})
    assert heatmap.selectbox(key="key").value == key
    # the map's weight is recomputed from float16 queries and keys, within the pass's fidelity of the model's
    assert abs(breakdown_weight(heatmap) - weight) <= shared.fidelity + 5e-5


def test_compare_grid_and_question():
    at = run(geo_heads="L0H2,L5H3")
    titles = list(figures(at))
    assert "layer 0 · head 2" in titles and "layer 5 · head 3" in titles
    grid = [s for s in figures(at).values() if len(s["data"]) == 2 * 12]
    assert grid, "the layer's grid of 12 small maps"
    assert [t for t in titles if t.startswith("Map ")] == ["Map A", "Map B", "Map C", "Map D"]
    shared = geo.PASSES.peek(EMBEDDED_ENCODER).wait()
    question, heads = lab.previous_token_question(shared)
    at.radio(key="geo_prev_answer").set_value(question.correct).run()
    at.button(key="geo_prev_commit").click().run()
    assert not at.exception and any("Right" in str(s.value) for s in at.success)
    l, h = heads[question.options.index(question.correct)]
    assert shared.previous[l, h] == np.max(shared.previous)


def test_encoder_decoder_and_bad_model_are_messages():
    at = run(model="t5-small")
    assert not at.exception
    assert at.warning or at.info                                  # t5 offline: not available, never a traceback


def test_bad_link_values_are_clamped_with_notes():
    at = run(layer=999, head="x", geo_heads="L99H99,zzz", geo_method="umap", geo_colour="<b>")
    text = texts(at)
    assert "Layer 999 is out of range (0–5); showing 5." in text and "Head 'x' in the link is not a number" in text
    assert at.radio(key="geo_method").value == "pca" and at.radio(key="geo_colour").value == "position"
    assert any(t.startswith("layer 5 · head 0 (") for t in figures(at))


def load_if_asked(at: AppTest) -> None:
    """A link to a model the server has not loaded yet asks first (explorer/ui/linkask.py): answer "Load it"."""
    if any(b.key == "model_ask_load" for b in at.button):
        at.button(key="model_ask_load").click().run()


def test_encoder_decoder_is_named_as_not_supported(tiny_folder):
    at = run(model=str(tiny_folder("t5")))
    load_if_asked(at)
    assert "is an encoder-decoder. Head geometry does not support its attention yet" in texts(at)
    assert not figures(at)


def test_a_model_over_the_budget_gets_a_clear_message(tiny_folder, monkeypatch):
    from explorer.geometry import corpus_pass
    monkeypatch.setattr(corpus_pass, "BUDGET_MB", 0)
    at = run(model=str(tiny_folder("gpt2")))
    load_if_asked(at)
    assert "too large for the head-geometry pass" in texts(at) and "(EXPLORER_GEOMETRY_MB)" in texts(at)
    assert not figures(at)


class TsneApart:
    """The page's map store with its t-SNE maps kept apart, in a store of their own (the PCA maps stay shared)."""

    def __init__(self, shared: Jobs):
        self.shared, self.tsne = shared, Jobs(512)

    def run(self, key, *args, **kwargs):
        return (self.tsne if key[-1] == "tsne" else self.shared).run(key, *args, **kwargs)

    def peek(self, key):
        return (self.tsne if key[-1] == "tsne" else self.shared).peek(key)


def test_your_text_on_the_pca_map_and_a_caption_on_tsne(monkeypatch):
    # the t-SNE maps (this head's and the two side by side) of 100 tokens rather than 1,500: what is checked is that
    # your text is not drawn on a t-SNE map, the same code for any size (three full-size t-SNEs took ~25 s of CPU);
    # they go into a store of this test's own, so no other test gets a map of the smaller sample
    monkeypatch.setattr(maps, "TSNE_TOKENS", 100)
    monkeypatch.setattr(geo, "MAPS", TsneApart(geo.MAPS))
    text = "The cat sat on the <b>mat</b>."
    at = run(layer=0, head=2, text=text)
    shared = geo.PASSES.peek(EMBEDDED_ENCODER).wait()
    typed = cached.result_cache().peek(("geometry-text", shared.facts.name, text))   # computed once, kept
    t = typed.run.n_points
    assert t == len(typed.run.tokens) > 5 and not typed.truncated
    spec = figures(at)[next(t for t in figures(at) if t.startswith("layer 0 · head 2"))]
    [mine] = [d for d in spec["data"] if d["name"] == plots.TEXT_NAME]
    assert len(mine["hovertext"]) == 2 * t                                   # each token's query and key
    hover = " ".join(mine["hovertext"])
    assert "&lt;" in hover and "<" not in hover                             # the markup stays text
    hm = maps.head_map(shared, 0, 2, "pca")
    assert spec["data"][0]["name"] == "queries" and f"the {t} tokens of your text" in texts(at)
    assert len(overlay.place(typed.run, hm)) == 2 * t
    at.radio(key="geo_method").set_value("tsne").run()
    assert not at.exception
    spec = figures(at)[next(t for t in figures(at) if t.startswith("layer 0 · head 2"))]
    assert all(d["name"] != plots.TEXT_NAME for d in spec["data"])
    assert "not drawn on a t-SNE map" in texts(at)
    drawn = geo.MAPS.tsne.peek((shared.facts.name, 0, 2, "tsne")).wait()   # this head's t-SNE map was drawn
    assert drawn.method == "tsne" and len(drawn.tokens) == 100


def test_empty_text_draws_no_overlay_and_no_error():
    at = run(layer=0, head=2, text="")
    spec = figures(at)[next(t for t in figures(at) if t.startswith("layer 0 · head 2"))]
    assert [d["name"] for d in spec["data"]] == ["queries", "keys"] and "your text" not in texts(at)


def test_a_long_text_is_cut_at_the_model_maximum_and_drawn_in_part():
    text = " ".join(["The cat sat on the mat because it was tired."] * 60)     # ~660 tokens; MiniLM reads 512
    at = run(layer=0, head=2, text=text)
    spec = figures(at)[next(t for t in figures(at) if t.startswith("layer 0 · head 2"))]
    [mine] = [d for d in spec["data"] if d["name"] == plots.TEXT_NAME]
    assert len(mine["hovertext"]) == 2 * overlay.DRAWN
    said = texts(at)
    assert "this model reads at most 512, so it read the first 512" in said
    assert f"The map draws the first {overlay.DRAWN} of its 512 tokens" in said
