"""Streamlit pieces of the head-geometry page: the shared corpus pass, one head's map, compare, the layer grid, the
lab question.

The corpus pass (``geometry.corpus_pass``) runs once per model in ``PASSES``, a ``worker.Jobs`` no page owns: the
page shows its progress, and a student who leaves stops nothing. Each head's map (PCA or t-SNE) is a job of
``MAPS``, keyed by (model, layer, head, method), so every session shares it too. The student's own text
(``geometry.overlay``) takes one forward pass through the shared fair queue, kept in the result cache per
(model, text), and is placed on the PCA maps.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.geometry import lab, maps, overlay
from explorer.geometry.corpus_pass import CorpusPass, run_pass
from explorer.geometry.project import METHODS, NAMES
from explorer.jobs import keepers
from explorer.model.registry import ModelUnavailable, resolve_spec
from explorer.plots import geometry as plots
from explorer.ui import cached, pickers
from explorer.ui import widgets as ui
from explorer.ui.predict_first import predict_then_reveal
from explorer.ui.text import literal
from explorer.ui.views import breakdown_link as breakdown
from explorer.words import numbers
from explorer.words.i18n import N_, Later, _, ngettext

PASSES, MAPS = keepers.jobs("corpus-passes"), keepers.jobs("maps")
SIDE_POINTS, GRID_POINTS = 1200, 300   # tokens drawn per map side by side / per small map of the grid
UNAVAILABLE = (ValueError, ModelUnavailable)   # a warning that stops the page (GeometryUnavailable is a ValueError)


def corpus_pass(model: str) -> CorpusPass:
    """The model's corpus pass, computed once per server (progress in the page meanwhile)."""
    try:
        name = resolve_spec(model).name
    except ModelUnavailable as err:
        st.warning(literal(err))
        st.stop()
    loaded = cached.get_model(name)
    job = PASSES.run(name, lambda progress: run_pass(loaded, progress=progress), f"the corpus pass of {name}")
    return cached.wait_or_stop(job, errors=UNAVAILABLE)


def head_map(run: CorpusPass, layer: int, head: int, method: str) -> maps.HeadMap:
    """``geometry.maps.head_map``, one head's map, computed once per server in ``MAPS`` (progress in the page)."""
    def work(progress):
        progress(0.0, Later(N_("Drawing the {method} map of layer {layer} · head {head}…"), method=NAMES[method],
                            layer=layer, head=head))   # a shared job's words: each waiting session's language
        return maps.head_map(run, layer, head, method)
    job = MAPS.run((run.facts.name, layer, head, method), work,
                   f"the {NAMES[method]} map of layer {layer} · head {head}")   # the job's name: the server's log
    return cached.wait_or_stop(job, errors=UNAVAILABLE)


def text_pass(name: str, text: str) -> overlay.TextPass | None:
    """The student's ``text`` through the corpus capture (None when empty), once per (model, text) for every
    session: the result cache, filled through the forward queue."""
    if not text or not text.strip():
        return None
    loaded = cached.get_model(name)
    key, store = ("geometry-text", name, text), cached.result_cache()
    hit = store.peek(key)
    if hit is not None:
        return hit
    return cached.forward(key, lambda: store.get_or_compute(key, lambda: overlay.text_pass(loaded, text)))


def _text_layer(run: CorpusPass, hm: maps.HeadMap, text: str):
    """The student's text on map ``hm`` as ``plots.joint_map``'s ``text`` (None when not drawn), and a caption."""
    typed = text_pass(run.facts.name, text)
    if typed is None:
        return None, ""
    xy = overlay.place(typed.run, hm)
    if xy is None:
        return None, _("Your text is not drawn on a t-SNE map: t-SNE places only the points it was fitted on and "
                       "has no rule for a new one. Switch the map to PCA to see your text among the corpus.")
    t = typed.run.n_points
    xy = overlay.drawn(xy)
    shown = len(xy) // 2
    said = [ngettext("Black outlines: the {n} token of your text (the box above), as a query (open circle) and as "
                     "a key (cross), moved by this head's alignment and placed by the same PCA as the corpus, so the "
                     "corpus map does not move.",
                     "Black outlines: the {n} tokens of your text (the box above), each a query (open circle) and a "
                     "key (cross), moved by this head's alignment and placed by the same PCA as the corpus, so the "
                     "corpus map does not move.", shown).format(n=numbers.integer(shown))]
    if typed.truncated:
        said.append(_("Your text needs {n} tokens; this model reads at most {most}, so it read the first "
                      "{most}.").format(n=numbers.integer(typed.n_text_tokens), most=numbers.integer(t)))
    if shown < t:
        said.append(_("The map draws the first {shown} of its {n} tokens (each token adds to what the browser must "
                      "load); on the heatmap page the whole text shows.").format(shown=numbers.integer(shown),
                                                                                n=numbers.integer(t)))
    return (xy, _hover(typed.run, range(shown))), " ".join(said)


def _hover(run: CorpusPass, idx) -> list[str]:
    """The token in its sentence, for each token index in ``idx``."""
    return [maps.context(run, int(i)) for i in idx]


def sample(hm: maps.HeadMap, most: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """At most ``most`` of the map's tokens, evenly spread: their indices in the corpus and their rows of
    ``hm.xy`` (queries, then keys)."""
    m = len(hm.tokens)
    rows = maps.evenly(m, most) if most else np.arange(m)
    return hm.tokens[rows], np.concatenate([rows, m + rows])


def _pick(key: str, map_key: str, model: str) -> None:
    """Callback: a clicked point of map ``map_key`` becomes the chosen query (its token's query for a key)."""
    hit = plots.clicked(st.session_state.get(map_key))
    if hit is not None and hit[1] >= 0:          # -1: a point of the student's text, no token of the corpus
        st.session_state[key] = (model, hit[1])


def chosen_query(run: CorpusPass) -> int | None:
    value = st.session_state.get("geo_query")
    return value[1] if value and value[0] == run.facts.name and 0 <= value[1] < run.n_points else None


def head_section(model: str, run: CorpusPass, layer: int, head: int, method: str, colour: str,
                 text: str = "") -> None:
    """One head's joint map with the student's ``text`` on it, the clicked query's top keys and its sentence, and
    what the alignment did."""
    hm = head_map(run, layer, head, method)
    typed, typed_caption = _text_layer(run, hm, text)
    point = chosen_query(run)
    top = maps.top_keys(run, layer, head, point) if point is not None else []
    drawn = {int(t): row for row, t in enumerate(hm.tokens)}
    fig = plots.joint_map(hm.xy, run.position[hm.tokens], run.token_ids[hm.tokens], _hover(run, hm.tokens),
                          colour=colour, chosen=drawn.get(point), points=hm.tokens,
                          top=[(drawn[k], w, run.tokens[k]) for k, w in top if k in drawn],
                          title=_("layer {layer} · head {head} (key head {kv_head}) · {method}").format(
                              layer=layer, head=head, kv_head=run.kv_head(head), method=_(METHODS[method])),
                          text=typed)
    ui.show_figure(fig, "geo_map", f"{run.facts.name}-geometry-L{layer}H{head}-{method}",
                   on_select=lambda: _pick("geo_query", "geo_map", run.facts.name))
    if typed_caption:
        st.caption(typed_caption)
    a = hm.alignment
    if method == "tsne":
        drawn_text = _("{n} tokens of {sentences} sentences (an even sample of the corpus: t-SNE slows with the "
                       "points), each a query (circle) and a key (cross).")
    else:
        drawn_text = _("{n} tokens of {sentences} sentences, each a query (circle) and a key (cross).")
    aligned = _("Keys moved by one vector of length {shift} so both clouds share a centre, then queries × {scale} and "
                "keys ÷ {scale} so both have mean length {length} (before: queries {queries}, keys {keys}). Largest "
                "change of any attention weight over the corpus: {change} — attention is unchanged.")
    st.caption(drawn_text.format(n=numbers.integer(len(hm.tokens)),
                                 sentences=len(run.sentences)) + " " + aligned.format(
        shift=numbers.number(np.linalg.norm(a.shift),
                             2), scale=numbers.number(a.scale, 3), length=numbers.number(a.query_norm[1], 2),
        queries=numbers.number(a.query_norm[0],
                               2), keys=numbers.number(a.key_norm[0], 2), change=numbers.scientific(hm.max_change, 1)))
    if run.facts.position == "rope":
        stored = _("The queries and keys the model multiplies (after RoPE): recomputed from them, every head's weights "
                   "match the model's to {gap}. Stored as float16: {size} MB.")
    else:
        stored = _("The queries and keys the model multiplies: recomputed from them, every head's weights match the "
                   "model's to {gap}. Stored as float16: {size} MB.")
    st.caption(stored.format(gap=numbers.scientific(run.fidelity, 1), size=numbers.number(run.nbytes / 2**20, 0)))
    if point is None:
        st.info(_("Click a query (circle) to draw lines to the keys it attends to most."), icon=":material/touch_app:")
        return
    s, pos = int(run.sentence[point]), int(run.position[point])
    keys = numbers.joined(f"{run.tokens[k]!r} ({numbers.number(w, 2)})" for k, w in top)
    st.markdown(_("**Query {token} at position {position}** of: {sentence}").format(
        token=literal(run.tokens[point]), position=pos, sentence=literal(run.sentences[s])) + "  \n"
        + _("Top keys: {keys}").format(keys=literal(keys)))
    a = int(run.starts[s])   # the sentence's points a … in position order: the heatmap page's token positions
    breakdown.cell_link(model, run.sentences[s], (layer, head), None, run.tokens[a:int(run.starts[s + 1])], pos,
                        top[0][0] - a)   # this sentence on the heatmap page, the top key's score taken apart


def _small(run: CorpusPass, hm: maps.HeadMap, most: int, colour: str, title: str, hover: bool = True):
    tokens, rows = sample(hm, most)
    return plots.joint_map(hm.xy[rows], run.position[tokens], run.token_ids[tokens],
                           _hover(run, tokens) if hover else None,
                           colour=colour, title=title, height=300, points=tokens, small=True)


def compare_section(run: CorpusPass, method: str, colour: str) -> None:
    """Two to four heads' maps side by side; clicking a point opens that head above, with that query."""
    facts = run.facts
    default, answer = lab.candidate_heads(run)
    chosen = pickers.heads_picker(_("Heads side by side (2–4)"), "geo_heads", facts.n_layers, facts.n_heads,
                                  [answer, *[h for h in default if h != answer][:1]])
    for i, (column, (l, h)) in enumerate(zip(st.columns(max(2, len(chosen))), chosen)):
        with column:
            hm = head_map(run, l, h, method)
            title = _("layer {layer} · head {head}").format(layer=l, head=h)
            ui.show_figure(_small(run, hm, SIDE_POINTS, colour, title), f"geo_side_{i}",
                           f"{facts.name}-geometry-L{l}H{h}", on_select=_open(f"geo_side_{i}", l, h, facts.name))


def _open(map_key: str, layer: int, head: int, model: str):
    def callback():
        hit = plots.clicked(st.session_state.get(map_key))
        if hit is not None:
            st.session_state["layer"], st.session_state["head"] = layer, head
            st.session_state["geo_query"] = (model, hit[1])
    return callback


def _grid_pick(layer: int) -> None:
    hit = plots.clicked(st.session_state.get("geo_grid"))
    if hit is not None:
        st.session_state["layer"], st.session_state["head"] = layer, hit[0] // 2


def grid_section(run: CorpusPass, layer: int, head: int) -> None:
    """Every head of ``layer`` as a small PCA map (positions as colour); clicking one shows it above."""
    small = [head_map(run, layer, h, "pca") for h in range(run.facts.n_heads)]
    tokens, rows = sample(small[0], GRID_POINTS)                  # PCA maps all draw every token, in order
    fig = plots.layer_grid([hm.xy[rows] for hm in small], run.position[tokens], layer=layer, selected=head)
    ui.show_figure(fig, "geo_grid", f"{run.facts.name}-geometry-layer{layer}", on_select=lambda: _grid_pick(layer))
    st.caption(_("PCA maps of {n} evenly spread tokens each, coloured by position. Click a map to show that head "
                 "above.").format(n=len(tokens)))


def quiz_section(run: CorpusPass) -> None:
    """Predict, then reveal: which of four maps is the model's strongest previous-token head?"""
    question, shown = lab.previous_token_question(run)
    for i, (column, (l, h)) in enumerate(zip(st.columns(len(shown)), shown)):
        with column:
            hm = head_map(run, l, h, "pca")
            ui.show_figure(_small(run, hm, SIDE_POINTS // 2, "position", lab.map_name(i), hover=False),
                           f"geo_quiz_{i}", f"{run.facts.name}-geometry-map-{lab.LETTERS[i]}")
    predict_then_reveal(question, "geo_prev")
