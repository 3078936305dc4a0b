"""Streamlit pieces for what heads do: knockouts and sweeps, value-weighted attention, head roles.

Slow or shared work runs in ``worker.Jobs`` kept here at module level, so every session shares one result and a
student who leaves the page stops nothing: measures (keyed by model, texts, measure, knocked heads, ablation),
sweeps (model, texts, measure, ablation) and head roles (model). Value-weighted norms are kept like attention
results, by (model, text) in a byte-bounded store.
"""
from __future__ import annotations

import dataclasses
import os

import streamlit as st

from explorer.attention import analysis, heads
from explorer.attention.result import AttentionResult
from explorer.heads_do import knockout, pairs, roles, values
from explorer.plots import effects as plots
from explorer.serving.cache import ByteLRU
from explorer.serving.worker import Jobs
from explorer.ui import cached, params
from explorer.ui.pickers import choice_picker
from explorer.ui.text import literal
from explorer.ui.widgets import attention_or_stop, from_url, show_figure
from explorer.ui.words import tip

MEASURES, SWEEPS, ROLES = Jobs(256), Jobs(16), Jobs(4)
_weighted = ByteLRU(int(os.environ.get("EXPLORER_VALUE_CACHE_MB", "128")) * 2**20)
ABLATIONS = {"zero": "zero (output set to 0)", "mean": "mean (output set to its average over both texts)"}
WEIGHTINGS = {"weights": "weights", "value": "weight × value size"}


# ---------------------------------------------------------------------------------------------- measure and knockout

def measure_inputs(prefix: str = "ko") -> tuple[str, list[str]]:
    """The query word and the two candidates the measure compares (deep-linked)."""
    columns = st.columns(3)
    names = (("query", "Query word", "it"), ("c1", "Candidate 1", "animal"), ("c2", "Candidate 2", "street"))
    words = []
    for column, (key, label, default) in zip(columns, names):
        from_url(f"{prefix}_{key}", default)
        words.append(column.text_input(label, key=f"{prefix}_{key}", max_chars=60).strip())
        params.put(f"{prefix}_{key}", words[-1])
    if not all(words):
        st.warning("Type a query word and two candidate words.")
        st.stop()
    return words[0], words[1:]


def ablation_picker(key: str = "ablation") -> str:
    return choice_picker("Knock out by", key, ABLATIONS, "zero",
                         help="Zero removes the head's output; mean replaces it by its average, a milder removal "
                              "that keeps the size of the signal the next layers expect.")


def whole_pair_or_stop(model: str, a: str, b: str) -> None:
    """Both sentences' attention (the usual notes and messages for empty or over-long text), and a stop when
    either is longer than the model reads: a measure of half a sentence would mean nothing."""
    if any([attention_or_stop(model, t).truncated for t in (a, b)]):
        st.warning("The knockout measure needs whole sentences: shorten them to what the model reads at once.")
        st.stop()


def pair_measure(model: str, a: str, b: str, query: str, cands: list[str], knocked=(), mode: str = "zero"):
    """Both sentences' measures (heads in ``knocked`` knocked out), computed once for all sessions."""
    loaded = cached.get_model(model)
    key = (model, a, b, query, *cands, tuple(sorted(knocked)), mode)
    return cached.wait_or_stop(MEASURES.run(key, lambda progress: pairs.knocked_pair(
        loaded, a, b, list(knocked), mode, candidates=cands, query=query), "measuring the pair"))


def _score_name(pair) -> str:
    c1, c2 = pair.a.candidates
    return f"log-odds {c1} vs {c2}" if pair.a.kind == "next-token" else f"cos difference {c1} − {c2}"


def show_intact(pair) -> None:
    """The intact model's numbers for both sentences, and what they mean."""
    name = _score_name(pair)
    for column, (label, value) in zip(st.columns(3), (("Sentence A", pair.a.score), ("Sentence B", pair.b.score),
                                                      ("Shift A − B", pair.shift))):
        column.metric(literal(f"{label}: {name}"), f"{value:+.3f}")
    st.dataframe(pairs.measure_table(pair).round(4), hide_index=True)
    right = pair.a.prefers != pair.b.prefers
    (st.success if right else st.info)(literal(pairs.explain(pair)))
    for note in dict.fromkeys([*pair.a.notes, *pair.b.notes]):
        st.caption(literal(note))


def attention_flip(model: str, a: str, b: str, query: str, cands: list[str]):
    """``analysis.flip`` on the texts and query the measure reads (``pairs.flip_texts``), and its note."""
    kind = cached.get_model(model).kind
    ta, tb, q, note = pairs.flip_texts(kind, a, b, query)
    try:
        return analysis.flip(cached.get_attention(model, ta), cached.get_attention(model, tb), q, cands), note
    except ValueError as err:
        st.warning(literal(err))
        st.stop()


def _toggle_clicked(map_key: str, heads_key: str) -> None:
    from explorer.ui.widgets import selected_head
    head = selected_head(map_key)
    if head is not None:
        chosen = heads.parse_heads(",".join(st.session_state.get(heads_key, [])), 10**6, 10**6, 10**6)[0]
        st.session_state[heads_key] = [heads.head_id(h) for h in pairs.toggle(chosen, head)]


def _set_heads(heads_key: str, chosen) -> None:
    st.session_state[heads_key] = [heads.head_id(h) for h in chosen]


def knock_section(model: str, a: str, b: str, query: str, cands: list[str], flip, mode: str,
                  prefix: str = "ko", with_map: bool = True) -> None:
    """Choose heads (click the map, pick by name, or the top k of the flip ranking) and see before and after."""
    table, n_layers, n_heads = flip.table, int(flip.table["layer"].max()) + 1, int(flip.table["head"].max()) + 1
    heads_key = f"{prefix}_heads"
    every = [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
    options = [heads.head_id(h) for h in every]
    st.session_state[heads_key] = [h for h in st.session_state.get(heads_key, []) if h in options]
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        k = st.number_input("k", 1, len(options), 3, key=f"{prefix}_k", width=140)
        st.button(f"Top {k} of the flip ranking", key=f"{prefix}_top", on_click=_set_heads,
                  args=(heads_key, pairs.top_flips(table, k)))
        st.button("Every head", key=f"{prefix}_all", on_click=_set_heads, args=(heads_key, every))
        st.button("None", key=f"{prefix}_none", on_click=_set_heads, args=(heads_key, []))
    picked = st.multiselect("Heads to knock out", options, key=heads_key, placeholder="Pick heads by name…",
                            help=tip("knockout"),
                            format_func=lambda s: s.replace("L", "layer ").replace("H", " · head "))
    chosen = heads.parse_heads(",".join(picked), n_layers, n_heads, len(options))[0]
    grid = pairs.head_marks(chosen, n_layers, n_heads)
    left, right = st.columns([3, 2]) if with_map else (None, st.container())
    if with_map:
        with left:
            show_figure(plots.knock_map(knockout.flip_map(table), grid), f"{prefix}_map", "knockout-choice",
                        on_select=lambda: _toggle_clicked(f"{prefix}_map", heads_key))
            st.caption("Colour: attention flip (blue: the query looks more at the first candidate in A than in B). "
                       "Click a tile to knock that head out, or click it again to bring it back.")
    with right:
        if not chosen:
            (st.info if with_map else st.caption)("No head is knocked out yet: " + (
                "click tiles on the map, " if with_map else "") + "pick heads by name, or take the top k of the "
                "flip ranking.")
            return
        before = pair_measure(model, a, b, query, cands)
        after = pair_measure(model, a, b, query, cands, chosen, mode)
        name = _score_name(before)
        st.markdown(f"**Without {len(chosen)} head{'s' * (len(chosen) > 1)}** (change from the intact model "
                    "under each number)")
        for column, (label, x, y) in zip(st.columns(3), (("Sentence A", before.a.score, after.a.score),
                                                         ("Sentence B", before.b.score, after.b.score),
                                                         ("Shift A − B", before.shift, after.shift))):
            column.metric(f"{label}, knocked out", f"{y:+.3f}", f"{y - x:+.3f}", delta_color="off")
        show_figure(plots.before_after([before.a.score, before.b.score], [after.a.score, after.b.score], name),
                    f"{prefix}_bars", "knockout-before-after")
        for note in pairs.knockout_notes(chosen, n_layers, n_heads, after):
            st.warning(literal(note))


KNOCK_OPEN = "flipko_open"   # the flip page's knock-out section is open (Session State)


def knock_these(model: str, a: str, b: str, query: str, cands: list[str], flip) -> None:
    """The flip page's short version: knock out the top of its flip ranking (or any heads) and see the measure.
    Folded, and drawn only once opened: a class following the flip step gets one element, not a dozen widgets."""
    box = st.expander("Knock these heads out", key=KNOCK_OPEN, on_change="rerun", icon=":material/block:")
    if not box.open:
        return
    with box:
        st.caption("Looking is not doing: remove heads and see whether the model's answer for the pair changes. "
                   "The full version, with a sweep over every head, is on the page What heads do.")
        if len(cands) != 2:
            st.info("Pick exactly two candidates to measure the model's answer.")
            return
        knock_section(model, a, b, query, cands, flip, "zero", prefix="flipko", with_map=False)


# ---------------------------------------------------------------------------------------------- sweep

def sweep_section(model: str, a: str, b: str, query: str, cands: list[str], flip, mode: str) -> None:
    """Each head knocked out alone (a shared job), its effect map beside the attention-flip map, and Spearman."""
    key = (model, a, b, (query, *cands), mode)
    job = SWEEPS.peek(key)
    if job is None or (job.done.is_set() and job.error is not None):
        st.caption("Knocks out every head alone, one after another, and measures both sentences each time "
                   "(seconds on the encoder, up to a minute on the decoder; the result is shared with everyone).")
        if st.button("Run the sweep", key="sweep_run", type="primary"):
            loaded = cached.get_model(model)
            SWEEPS.run(key, lambda progress: knockout.sweep(loaded, a, b, mode, progress=progress,
                                                           candidates=cands, query=query), "sweeping heads")
            st.rerun()   # the button goes; the progress bar takes its place
        return
    result = cached.wait_or_stop(job)
    rho = knockout.spearman(knockout.flip_map(flip.table), result.effect)
    left, right = st.columns(2)
    with left:
        show_figure(plots.effect_map(result.effect), "sweep_map", "knockout-effect-map")
        st.caption("Red: without this head the shift A − B shrinks (the head helped tell the sentences apart); "
                   "blue: it grows.")
    with right:
        show_figure(plots.flip_map(knockout.flip_map(flip.table)), "sweep_flip", "attention-flip-map")
        st.caption("Blue: the query looks more at the first candidate in A than in B.")
    st.markdown(f"**{literal(pairs.agreement(rho))}**")
    st.caption(f"Sweep of {result.effect.size} heads × 2 sentences, {ABLATIONS[mode].split(' (')[0]} ablation, "
               f"in {result.seconds:.1f} s.")


# ---------------------------------------------------------------------------------------------- value weighting

def value_weighted(model: str, text: str, result: AttentionResult) -> values.ValueWeighted:
    """The value-weighted attention of ``text``, built once per (model, text) and kept in a bounded store; a
    new one is computed through the server's forward queue."""
    loaded = cached.get_model(model)

    def compute():
        vw = values.value_weighted(loaded, text)
        return vw.normalised.astype("float32"), vw.f_norms
    key = (model, text)
    stored = _weighted.peek(key)
    if stored is None:
        stored = cached.forward(("value size", *key), lambda: _weighted.get_or_compute(key, compute))
    normalised, f_norms = stored
    return values.ValueWeighted(result, normalised, f_norms)


def weighting(model: str, text: str, result: AttentionResult, key: str = "weighting") -> AttentionResult:
    """A choice between the attention weights and the weights times each key's value size (renormalised per
    row); returns the result to show (a copy with the value-weighted matrices in place of the weights)."""
    choice = choice_picker("Show", key, WEIGHTINGS, "weights",
                           help="Weight × value size: each weight times the size of what that key sends through "
                                "the head (‖W_O v‖, Kobayashi et al. 2020), each row rescaled to sum to 1.")
    if choice == "weights":
        return result
    if result.parts:
        st.info("Weight × value size is not available for encoder-decoder models: showing the weights.")
        return result
    try:
        vw = value_weighted(model, text, result)
    except ValueError as err:
        st.info(literal(f"Weight × value size is not available for this model ({err}); showing the weights."))
        return result
    st.caption("Showing weight × value size, renormalised per row: how much each key moves the query's output.")
    return dataclasses.replace(result, weights=vw.norms, score_records=None, measure="weight × value size")


# ---------------------------------------------------------------------------------------------- roles

def head_roles(model: str, stop: bool = True):
    """``(roles, similar)`` DataFrames of the model's heads, computed once per model for all sessions."""
    loaded = cached.get_model(model)

    def work(progress):
        progress(0.1, "Scoring head roles…")
        found = roles.head_roles(loaded)
        progress(0.5, "Mapping similar heads…")
        return found, roles.similar_heads(loaded)
    return cached.wait_or_stop(ROLES.run(model, work, f"head roles of {model}"), stop=stop)


def more_stats(model: str, text: str, result: AttentionResult, stats):
    """``stats`` with sink by weight / by value size and the heads' roles, where the model allows them."""
    if result.parts or cached.get_model(model).kind == "encoder-decoder":
        return stats
    try:
        sinks = values.sink_stats(value_weighted(model, text, result))
        found = head_roles(model, stop=False)[0]
    except ValueError as err:
        st.caption(literal(f"Sink by value size and head roles are not available here ({err})."))
        return stats
    return pairs.stats_with(stats, sinks, found)


def similar_heads_section(model: str, chosen: list, on_select) -> None:
    if cached.get_model(model).kind == "encoder-decoder":
        st.caption("The similar-heads map is drawn for encoders and decoders only.")
        return
    try:
        found, similar = head_roles(model, stop=False)
    except ValueError as err:
        st.caption(literal(f"No similar-heads map for this model ({err})."))
        return
    fig = plots.similar_heads(similar, pairs.role_badges(found), selected=chosen)
    show_figure(fig, "similar", "similar-heads", on_select=on_select)
    st.caption("Each point is a head; heads close together spread their attention alike on three sample texts "
               "(Jensen–Shannon distance, laid out in 2-D). Hover for its roles; click a point to compare it.")
