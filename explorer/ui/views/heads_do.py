"""Streamlit pieces for what heads do: knockouts and sweeps (value-weighted attention and head roles are
``explorer.ui.views.value_roles``).

Slow or shared work runs in ``worker.Jobs`` kept here at module level, so every session shares one result and a
student who leaves the page stops nothing: measures (keyed by model, texts, measure, knocked heads, ablation) and
sweeps (model, texts, measure, ablation).
"""
from __future__ import annotations

import streamlit as st

from explorer.attention import analysis, heads
from explorer.heads_do import knockout, pairs
from explorer.jobs import keepers
from explorer.plots import effects as plots
from explorer.ui import cached, params
from explorer.ui.pickers import choice_picker
from explorer.ui.text import literal
from explorer.ui.widgets import attention_or_stop, from_url, show_figure
from explorer.ui.words import tip
from explorer.words import i18n, numbers
from explorer.words.i18n import N_, _, ngettext, pgettext

MEASURES, SWEEPS = keepers.jobs("measures"), keepers.jobs("sweeps")
ABLATIONS = {"zero": N_("zero (output set to 0)"), "mean": N_("mean (output set to its average over both texts)")}


# ---------------------------------------------------------------------------------------------- measure and knockout

def measure_inputs(prefix: str = "ko") -> tuple[str, list[str]]:
    """The query word and the two candidates the measure compares (deep-linked)."""
    columns = st.columns(3)
    names = (("query", _("Query word"), "it"), ("c1", _("Candidate 1"), "animal"), ("c2", _("Candidate 2"), "street"))
    words = []
    for column, (key, label, default) in zip(columns, names):
        from_url(f"{prefix}_{key}", default)
        words.append(column.text_input(label, key=f"{prefix}_{key}", max_chars=60).strip())
        params.put(f"{prefix}_{key}", words[-1])
    if not all(words):
        st.warning(_("Type a query word and two candidate words."))
        st.stop()
    return words[0], words[1:]


def ablation_picker(key: str = "ablation") -> str:
    return choice_picker(_("Knock out by"), key, {k: _(v) for k, v in ABLATIONS.items()}, "zero",
                         help=_("Zero removes the head's output; mean replaces it by its average, a milder removal "
                                "that keeps the size of the signal the next layers expect."))


def whole_pair_or_stop(model: str, a: str, b: str) -> None:
    """Both sentences' attention (the usual notes and messages for empty or over-long text), and a stop when
    either is longer than the model reads: a measure of half a sentence would mean nothing."""
    if any([attention_or_stop(model, t).truncated for t in (a, b)]):
        st.warning(_("The knockout measure needs whole sentences: shorten them to what the model reads at once."))
        st.stop()


def pair_measure(model: str, a: str, b: str, query: str, cands: list[str], knocked=(), mode: str = "zero"):
    """Both sentences' measures (heads in ``knocked`` knocked out), computed once for all sessions of a language
    (the measure's notes are sentences, made in the job's thread in the language of the session that asked)."""
    loaded = cached.get_model(model)
    lang = i18n.current()
    key = (model, a, b, query, *cands, tuple(sorted(knocked)), mode, lang)

    def work(progress):
        return pairs.knocked_pair(loaded, a, b, list(knocked), mode, candidates=cands, query=query)
    return cached.wait_or_stop(MEASURES.run(key, work, _("measuring the pair"), lang=lang))


def _score_name(pair) -> str:
    c1, c2 = pair.a.candidates
    return (_("log-odds {c1} vs {c2}") if pair.a.kind == "next-token" else _("cos difference {c1} − {c2}")).format(
        c1=c1, c2=c2)


def show_intact(pair) -> None:
    """The intact model's numbers for both sentences, and what they mean."""
    name = _score_name(pair)
    for column, (label, value) in zip(st.columns(3), ((_("Sentence A"), pair.a.score), (_("Sentence B"), pair.b.score),
                                                      (_("Shift A − B"), pair.shift))):
        column.metric(literal(f"{label}: {name}"), numbers.signed(value, 3))
    st.dataframe(numbers.table(pairs.measure_table(pair), 4), hide_index=True)
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


def head_name(head: str) -> str:
    """``L4H0`` as the multiselects write it: "layer 4 · head 0"."""
    layer, head = head[1:].split("H")
    return _("layer {layer} · head {head}").format(layer=layer, head=head)


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
        st.button(_("Top {k} of the flip ranking").format(k=k), key=f"{prefix}_top", on_click=_set_heads,
                  args=(heads_key, pairs.top_flips(table, k)))
        st.button(_("Every head"), key=f"{prefix}_all", on_click=_set_heads, args=(heads_key, every))
        st.button(pgettext("heads", "None"), key=f"{prefix}_none", on_click=_set_heads, args=(heads_key, []))
    picked = st.multiselect(_("Heads to knock out"), options, key=heads_key, placeholder=_("Pick heads by name…"),
                            help=tip("knockout"), format_func=head_name)
    chosen = heads.parse_heads(",".join(picked), n_layers, n_heads, len(options))[0]
    grid = pairs.head_marks(chosen, n_layers, n_heads)
    left, right = st.columns([3, 2]) if with_map else (None, st.container())
    if with_map:
        with left:
            show_figure(plots.knock_map(knockout.flip_map(table), grid), f"{prefix}_map", "knockout-choice",
                        on_select=lambda: _toggle_clicked(f"{prefix}_map", heads_key))
            st.caption(_("Colour: attention flip (blue: the query looks more at the first candidate in A than in "
                         "B). Click a tile to knock that head out, or click it again to bring it back."))
    with right:
        if not chosen:
            (st.info if with_map else st.caption)(
                _("No head is knocked out yet: click tiles on the map, pick heads by name, or take the top k of the "
                  "flip ranking.") if with_map else
                _("No head is knocked out yet: pick heads by name, or take the top k of the flip ranking."))
            return
        before = pair_measure(model, a, b, query, cands)
        after = pair_measure(model, a, b, query, cands, chosen, mode)
        name = _score_name(before)
        st.markdown(ngettext("**Without {n} head** (change from the intact model under each number)",
                             "**Without {n} heads** (change from the intact model under each number)",
                             len(chosen)).format(n=len(chosen)))
        for column, (label, x, y) in zip(st.columns(3), ((_("Sentence A, knocked out"), before.a.score, after.a.score),
                                                         (_("Sentence B, knocked out"), before.b.score, after.b.score),
                                                         (_("Shift A − B, knocked out"), before.shift, after.shift))):
            column.metric(label, numbers.signed(y, 3), numbers.signed(y - x, 3),
                          delta_color="off")
        show_figure(plots.before_after([before.a.score, before.b.score], [after.a.score, after.b.score], name),
                    f"{prefix}_bars", "knockout-before-after")
        for note in pairs.knockout_notes(chosen, n_layers, n_heads, after):
            st.warning(literal(note))


KNOCK_OPEN = "flipko_open"   # the flip page's knock-out section is open (Session State)


def knock_these(model: str, a: str, b: str, query: str, cands: list[str], flip) -> None:
    """The flip page's short version: knock out the top of its flip ranking (or any heads) and see the measure.
    Folded, and drawn only once opened: a class following the flip step gets one element, not a dozen widgets."""
    box = st.expander(_("Knock these heads out"), key=KNOCK_OPEN, on_change="rerun", icon=":material/block:")
    if not box.open:
        return
    with box:
        st.caption(_("Looking is not doing: remove heads and see whether the model's answer for the pair changes. "
                     "The full version, with a sweep over every head, is on the page What heads do."))
        if len(cands) != 2:
            st.info(_("Pick exactly two candidates to measure the model's answer."))
            return
        knock_section(model, a, b, query, cands, flip, "zero", prefix="flipko", with_map=False)


# ---------------------------------------------------------------------------------------------- sweep

def sweep_section(model: str, a: str, b: str, query: str, cands: list[str], flip, mode: str) -> None:
    """Each head knocked out alone (a shared job), its effect map beside the attention-flip map, and Spearman."""
    key = (model, a, b, (query, *cands), mode)
    job = SWEEPS.peek(key)
    if job is None or (job.done.is_set() and job.error is not None):
        st.caption(_("Knocks out every head alone, one after another, and measures both sentences each time "
                     "(seconds on the encoder, up to a minute on the decoder; the result is shared with everyone)."))
        if st.button(_("Run the sweep"), key="sweep_run", type="primary"):
            loaded = cached.get_model(model)

            def work(progress):
                return knockout.sweep(loaded, a, b, mode, progress=progress, candidates=cands, query=query)
            # its progress messages in the language of who started it (the numbers are for all)
            SWEEPS.run(key, work, _("sweeping heads"), lang=i18n.current())
            st.rerun()   # the button goes; the progress bar takes its place
        return
    result = cached.wait_or_stop(job)
    rho = knockout.size_spearman(knockout.flip_map(flip.table), result.effect)
    left, right = st.columns(2)
    with left:
        show_figure(plots.effect_map(result.effect), "sweep_map", "knockout-effect-map")
        st.caption(_("Red: without this head the shift A − B shrinks (the head helped tell the sentences apart); "
                     "blue: it grows."))
    with right:
        show_figure(plots.flip_map(knockout.flip_map(flip.table)), "sweep_flip", "attention-flip-map")
        st.caption(_("Blue: the query looks more at the first candidate in A than in B."))
    st.markdown(f"**{literal(pairs.agreement(rho))}**")
    st.caption((_("Sweep of {n} heads × 2 sentences, zero ablation, in {seconds} s.") if mode == "zero" else
                _("Sweep of {n} heads × 2 sentences, mean ablation, in {seconds} s.")).format(
        n=result.effect.size, seconds=numbers.number(result.seconds, 1)))
