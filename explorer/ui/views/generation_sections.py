"""The "Watch it write" page's sections for one recorded generation and a chosen step (all from stored arrays:
moving a control here reruns no model)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from explorer.generation import kvcache
from explorer.generation.sampling import considered, draw, process
from explorer.generation.steps import Generation, text_for
from explorer.labs.quiz import Question
from explorer.maths import causal_mask, pool
from explorer.model import families
from explorer.plots import attention as attention_plots
from explorer.plots import generation as plots
from explorer.plots import head_grids
from explorer.plots.base import label
from explorer.sitemap import table
from explorer.ui import cached, params
from explorer.ui.pickers import index_picker
from explorer.ui.text import literal
from explorer.ui.views import breakdown_link as breakdown
from explorer.ui.widgets import from_url, link_note, open_head, page_link, show_figure
from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext, pgettext

STOPPED = {"eos": N_("it wrote its end-of-sequence token"), "length": N_("it reached the number of new tokens asked"),
           "context": N_("the model's context was full")}   # why a generation stopped


def token_text(gen: Generation, token_id: int) -> str:
    """A token as it reads in the text, quoted so that a leading space shows: "␣Paris"."""
    return "“" + gen_decode(gen, token_id).replace(" ", "␣").replace("\n", "⏎") + "”"


def gen_decode(gen: Generation, token_id: int) -> str:
    """The text of one token id, by the generation's own (already loaded) tokenizer."""
    return cached.get_model(gen.model).tokenizer.decode([int(token_id)])


def _pick_step() -> None:
    picked = st.session_state.get("_step_pick")
    if picked is not None:
        st.session_state["step"] = st.session_state[params.kept("step")] = picked


def step_picker(gen: Generation, hide: bool = False) -> int:
    """The written text as clickable tokens and a step slider (deep-linked ``step``); returns the step. ``hide``:
    the step's own token and everything after it are not shown (a "?" stands for them), for predicting."""
    said = ngettext("{n} new token ({settings}); it stopped because {reason}.",
                    "{n} new tokens ({settings}); it stopped because {reason}.", gen.steps).format(
        n=gen.steps, settings=gen.settings.describe(), reason=_(STOPPED[gen.stopped]))
    st.caption(said + (" " + _("The prompt was cut to its first tokens.") if gen.truncated else ""))
    step = index_picker(_("Step"), "step", gen.steps)
    st.session_state["_step_pick"] = step
    st.markdown(_("{prompt} → *click a written token:*").format(
        prompt=literal(gen_decode_many(gen, gen.ids[:gen.n_prompt]))))
    names = pill_names(gen.tokens[gen.n_prompt:])
    shown = gen.steps
    if hide:
        names[step], shown = "?", step + 1
    st.pills(_("Written tokens"), list(range(shown)), key="_step_pick", on_change=_pick_step,
             format_func=names.__getitem__, label_visibility="collapsed")
    return step


def pill_names(tokens: list[str]) -> list[str]:
    """Tokens as literal markdown, each repeat made distinct by trailing zero-width spaces: the browser tells
    the options of st.pills apart by their text, so a click on a second "the" would select the first one's step."""
    seen: dict[str, int] = {}
    names = []
    for token in tokens:
        seen[token] = seen.get(token, -1) + 1
        names.append(literal(token) + "\u200b" * seen[token])
    return names


def gen_decode_many(gen: Generation, ids) -> str:
    return cached.get_model(gen.model).tokenizer.decode([int(i) for i in ids])


def attention_section(gen: Generation, step: int, layer: int, head: int) -> None:
    q = gen.query(step)
    tokens = gen.tokens[:q + 1]
    row = gen.row(step, layer, head)
    reader = gen.tokens[q]
    left, right = st.columns([3, 2])
    with left:
        title = _("Step {step}: where “{token}” looks, L{layer} H{head}").format(step=step, token=reader, layer=layer,
                                                                                head=head)
        show_figure(lambda: plots.context_bars(row, tokens, gen.n_prompt, title), "write_bars",
                    f"write-row-s{step}-L{layer}H{head}", view=view_of(gen, step, layer, head))
        st.caption(_("Blue: the prompt; orange: tokens the model wrote itself."))
    with right:
        show_figure(lambda: attention_plots.heatmap(gen.weights[layer, head, :q + 1, :q + 1], tokens, tokens,
                                                    masked=~causal_mask(q + 1),
                                                    title=_("The causal heatmap so far (last row: this step)"),
                                                    height=340,
                                                    cell=(q, int(np.argmax(row)))),
                    "write_heatmap", f"write-heatmap-s{step}-L{layer}H{head}", view=view_of(gen, step, layer, head))
    heatmap_link(gen, q, layer, head)   # under both columns: a link's label does not wrap
    st.markdown(_("**Every layer × head at step {step}**: each tile is one head's row over the context, left to "
                  "right; click a tile to show that head above.").format(step=step))
    show_figure(lambda: overview(gen, q, tokens, layer), "write_overview", f"write-overview-s{step}",
                on_select=open_head("write_overview"), frame=head, view=view_of(gen, step, layer))


def overview(gen: Generation, q: int, tokens: list[str], layer: int):
    """Every layer × head at the step whose query is ``q``: one tile a head, its row over the context."""
    rows = gen.weights[:, :, q, :q + 1][:, :, None, :]                       # (layer, head, 1, key)
    strongest = rows[:, :, 0].argmax(-1)
    line = _("layer {layer} · head {head}: most on {token} · {position} ({weight})")
    hover = [[line.format(layer=a, head=b, token=label(tokens[strongest[a, b]]), position=strongest[a, b],
                          weight=numbers.number(rows[a, b, 0, strongest[a, b]], 2)) for b in range(gen.n_heads)]
             for a in range(gen.n_layers)]
    return head_grids.overview(pool(rows, 24), hover=hover, frame_row=layer)


def view_of(gen: Generation, *more) -> tuple:
    """What a generation is made of (model, prompt, settings: it is seeded), and ``more`` (the step, a head…):
    the view a chart of it is drawn once for."""
    return (gen.model, gen.prompt, repr(gen.settings), *more)


def heatmap_link(gen: Generation, q: int, layer: int, head: int) -> None:
    """Under the causal heatmap: the link that takes this step's strongest score apart on the heatmap page, fed the
    text so far, when that text is read back as exactly these tokens (else a caption says why there is none)."""
    text = text_for(cached.get_model(gen.model).tokenizer, gen.ids[:q + 1])
    if text is None:
        st.caption(":material/info: " + _("The tokenizer would split the text so far into other tokens than the ones "
                                          "the model wrote, so the heatmap page cannot show this step's row: no link "
                                          "to take a score apart."))
        return
    breakdown.cell_link(gen.model, text, (layer, head), gen.weights[layer, head, :q + 1, :q + 1], gen.tokens, q)


def considered_section(gen: Generation, step: int) -> None:
    s = gen.settings
    default = 1.0 if s.greedy else s.temperature
    try:
        shown = float(from_url("vtemp", default))
    except (TypeError, ValueError):
        link_note(_("Temperature {value} in the link is not a number.").format(
            value=repr(str(from_url('vtemp', default))[:20])))
        shown = default
    st.session_state["vtemp"] = min(max(shown, 0.05), 5.0)
    left, right = st.columns([3, 2])
    with right:
        t = st.slider(_("Temperature for this view"), 0.05, 5.0, step=0.05, key="vtemp",
                      help=_("Reshapes the stored logits of this step; the model does not run again."))
        params.put("vtemp", str(t))
        top_k, top_p = (0, 1.0) if s.greedy else (s.top_k, s.top_p)
        seen = considered(gen.logits[step], t, top_k, top_p)
        picked = gen.picked(step)
        how = _("the most likely token") if s.greedy else _("a draw")
        st.markdown(ngettext("Picked: **{token}** ({how}; {n} token left after top-k / top-p at T = {t}).",
                             "Picked: **{token}** ({how}; {n} tokens left after top-k / top-p at T = {t}).",
                             seen.kept).format(
            token=literal(token_text(gen, picked)), how=how, n=numbers.integer(seen.kept), t=numbers.number(t)))
        if not s.greedy:
            u = float(gen.draws[step])
            again = draw(process(gen.logits[step], t, top_k, top_p), u)
            st.markdown(_("The draw u = **{u}**: walking down the candidates, most likely first, the running total "
                          "of probabilities passes u at the picked token. At T = {t} the same u picks "
                          "**{token}**.").format(u=numbers.number(u, 4), t=numbers.number(t),
                                                 token=literal(token_text(gen, again))))
        page_link(table.LAB_SOFTMAX.file, _("Temperature inside attention: softmax lab"),
                  icon=":material/thermostat:")
    with left:
        names = [gen_decode(gen, i).replace(" ", "␣") for i in seen.ids]
        at = int(np.flatnonzero(seen.ids == picked)[0]) if picked in seen.ids else None
        title = _("What it considered at step {step} (top 10)").format(step=step)
        show_figure(lambda: plots.considered_bars(names, seen.before, seen.after, at, title),
                    "write_considered", f"write-considered-s{step}", view=view_of(gen, step, t))


def lens_section(gen: Generation, step: int, lens) -> None:
    picked = token_text(gen, gen.picked(step))
    p_picked = _("p of {token}").format(token=picked)
    frame = pd.DataFrame({
        pgettext("table column", "layer"): np.arange(gen.n_layers),
        _("top token"): [token_text(gen, i) for i in lens.ids[:, 0]],
        "p": lens.probs[:, 0],
        _("next"): [", ".join(token_text(gen, i) for i in row[1:]) for row in lens.ids],
        _("rank of {token}").format(token=picked): lens.picked_rank + 1,
        p_picked: lens.picked_prob})
    st.dataframe(numbers.table(frame, formats={p_picked: lambda p: numbers.scientific(p, 1)}), hide_index=True,
                 height=min(600, 38 + 35 * len(frame)))


def effect_section(gen: Generation, step: int, effect) -> None:
    if isinstance(effect, Exception):   # its message made now, in this session's language
        st.info(literal(effect))
        return
    left, right = st.columns(2)
    with left:
        title = _("Each head's direct effect on the logit of {token}").format(token=token_text(gen, effect.token))
        show_figure(lambda: plots.effect_map(effect.heads, title), "write_effect", f"write-effect-s{step}",
                    view=view_of(gen, step))
    with right:
        names = [_("embeddings"), _("all heads"), *(_("MLP {layer}").format(layer=i) for i in range(len(effect.mlps))),
                 _("biases")]
        values = np.array([effect.embeddings, effect.heads.sum(), *effect.mlps, effect.biases])
        show_figure(lambda: plots.parts_bars(names, values, _("The other parts")), "write_parts",
                    f"write-parts-s{step}", view=view_of(gen, step))
    icon = ":material/check_circle:" if effect.gap <= 1e-3 * max(1.0, abs(effect.logit)) else ":material/warning:"
    st.markdown(icon + " " + _(
        "**Sum check**: embeddings {embeddings} + heads {heads} + MLPs {mlps} + biases {biases} = **{total}**; the "
        "model's logit is **{logit}** (difference {gap}). The final norm's scale at this position, 1/rms = {scale}, "
        "is held fixed: that is what makes the parts add up.").format(
        embeddings=numbers.signed(effect.embeddings, 3), heads=numbers.signed(effect.heads.sum(), 3),
        mlps=numbers.signed(effect.mlps.sum(), 3), biases=numbers.signed(effect.biases, 3),
        total=numbers.number(effect.total, 4), logit=numbers.number(effect.logit, 4),
        gap=numbers.scientific(effect.gap, 1), scale=numbers.number(effect.scale, 4)))
    note = families.mlp_note(cached.get_model(gen.model).model) if getattr(effect, "note", "") else None
    if note:   # made here, not kept with the cached effect: in this session's language
        st.caption(note)


def cache_section(gen: Generation, step: int) -> None:
    tokens, sizes = kvcache.cache_growth(gen)
    left, right = st.columns([3, 2])
    with left:
        show_figure(lambda: plots.cache_growth(tokens, sizes, step), "write_cache", "write-cache",
                    view=view_of(gen, step))
    with right:
        st.metric(_("Cache at step {step}").format(step=step), numbers.integer(round(sizes[step] / 1024)) + " kB",
                  help=_("{layers} layers × {heads} key/value heads × {tokens} tokens × {d} numbers × 2 (keys and "
                         "values) × {bytes} bytes").format(layers=gen.n_layers, heads=gen.n_kv_heads,
                                                           tokens=tokens[step], d=gen.d_head, bytes=gen.dtype_bytes))
        cached_ms = float(np.median(gen.step_ms[1:])) if gen.steps > 1 else float("nan")
        st.metric(_("A cached step (median, this run)"), numbers.number(cached_ms, 0) + " ms" if gen.steps > 1 else "—")
        st.metric(_("One full pass over all {n} tokens").format(n=gen.weights.shape[-1]),
                  numbers.number(gen.full_ms, 0) + " ms")
        ok = gen.fidelity <= 1e-5
        icon = ":material/check_circle:" if ok else ":material/warning:"
        st.markdown(icon + " " + _("**Fidelity**: every cached step's attention row equals the same row of one full "
                                   "forward pass over the final sequence: largest difference **{gap}**.").format(
            gap=numbers.scientific(gen.fidelity, 1)))


def predict_question(gen: Generation, step: int) -> Question:
    """"Predict the next token": the picked token among the most likely others (four options, in token-id order),
    or a word the student types."""
    top = [int(i) for i in np.argsort(-gen.logits[step])[:6]]
    picked = gen.picked(step)
    ids = sorted(dict.fromkeys([picked, *[i for i in top if i != picked]][:4]))
    labels = {}
    for i in ids:
        name = token_text(gen, i)
        labels[i] = name if name not in labels.values() else f"{name} (#{i})"
    context = literal(gen_decode_many(gen, gen.ids[:gen.n_prompt + step])[-120:])
    probs = process(gen.logits[step])
    reveal = " · ".join(f"{labels[i]} {numbers.percent(probs[i], 1)}" for i in ids)
    return Question(prompt=_("The model has read “…{text}”. Which token does it write next? Pick one of these {n} "
                             "likely tokens, or type your own word.").format(text=context, n=len(ids)),
                    options=tuple(labels[i] for i in ids), correct=labels[picked],
                    reveal=_("The model's probabilities: {list}.").format(list=literal(reveal)), typed=True)
