"""The trained model of "Watch heads learn" taken apart (``explorer.learning.circuits``): each head knocked out, the
induction heads together and with their partner (a head of any earlier layer); the K-composition of every head into
every head of a later layer against the random baseline; the chosen head's OV and QK circuits over the vocabulary.
Each is computed once per run for the whole server and said in words from its numbers: the partner is named by
knockout and composition, whatever its own attention looks like.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.learning import circuits
from explorer.learning.train import Run
from explorer.plots import learning as plots
from explorer.ui import cached, params
from explorer.ui import widgets as ui
from explorer.ui.text import literal
from explorer.words.i18n import _, ngettext
from explorer.words.numbers import integer, number, percent

CLEAN_PREVIOUS = 0.5   # a previous-token score from which a head counts as a clean previous-token head


def _kept(kind: str, run: Run, source: str, work):
    return cached.kept(("learning", kind, run.config.key(), source, run.checkpoints[-1].step), work)


def knockout_section(run: Run, source: str) -> circuits.Knockouts:
    """Bars: the second copy's loss added by knocking out each head, the induction heads together, and the pair."""
    cfg, last = run.config, run.checkpoints[-1]
    ko = _kept("knockouts", run, source, lambda: circuits.knockouts(cfg, run.final_weights(), last.prefix))
    names = [plots.head_name(l, h) for l in range(cfg.n_layers) for h in range(cfg.n_heads)]
    costs = list(ko.single.ravel())
    marked = [(l, h) in ko.induction or (l, h) == ko.partner for l in range(cfg.n_layers) for h in range(cfg.n_heads)]
    induction = "+".join(plots.head_name(*h) for h in ko.induction)
    if ko.partner is not None:
        names += [induction, f"{induction}+{plots.head_name(*ko.partner)}"]
        costs += [ko.cost(ko.together), ko.cost(ko.pair)]
        marked += [True, True]
    ui.show_figure(lambda: plots.bars(names, costs, title=_("Knockout: loss added on the second copy (nats)"),
                                      y_title=_("added loss (nats)"), highlight=marked),
                   "tr_knockout", "learning-knockout", view=(cfg.key(), source, "knockout"))
    said = said_knockouts(run, ko)
    if ko.partner is None:   # no pair to find: what the model learnt instead
        seen = _kept("seen", run, source, lambda: circuits.seen_tokens(cfg, run.final_weights()))
        said += " " + _("On the second copy it gives {mass} of its probability to tokens that already stood earlier "
                        "in the sequence, which are {share} of the vocabulary: it has learnt that tokens come back, "
                        "not which one comes next.").format(mass=percent(seen.mass), share=percent(seen.share))
    st.caption(said)
    return ko


def said_knockouts(run: Run, ko: circuits.Knockouts) -> str:
    text = _("Intact, the model's loss on the second copy is {intact} nats.").format(intact=number(ko.intact, 2))
    if ko.partner is None:
        worst = np.unravel_index(int(np.argmax(ko.single)), ko.single.shape)
        return text + " " + _("The costliest single knockout is {head}: +{cost} nats. With one layer there is no "
                              "later head to read what another wrote.").format(
            head=plots.head_name(*worst), cost=number(float(ko.single[worst]), 2))
    induction = ", ".join(plots.head_name(*h) for h in ko.induction)
    partner = plots.head_name(*ko.partner)
    previous = float(run.checkpoints[-1].previous[ko.partner])
    text += " " + _("The induction heads ({heads}) knocked out together add {together} nats; with {partner}, the "
                    "head of an earlier layer whose knockout costs most ({alone} alone), the pair adds {pair}.").format(
        heads=induction, together=number(ko.cost(ko.together), 2), partner=partner,
        alone=number(float(ko.single[ko.partner]), 2), pair=number(ko.cost(ko.pair), 2))
    if previous < CLEAN_PREVIOUS:
        text += " " + _("{partner} is not a clean previous-token head (its previous-token score is {score}), yet the "
                        "model needs it: name a partner by what knocking it out costs, not by its heatmap.").format(
            partner=partner, score=number(previous, 2))
    else:
        text += " " + _("{partner} is also a previous-token head (score {score}).").format(partner=partner,
                                                                                         score=number(previous, 2))
    if len(ko.induction) > 1:
        text += " " + ngettext("This model splits the induction work over a team of {n} head.",
                               "This model splits the induction work over a team of {n} heads.",
                               len(ko.induction)).format(n=integer(len(ko.induction)))
    return text


def composition_section(run: Run, source: str) -> circuits.Composition:
    """The K-composition of every head into every head of a later layer (every earlier → later pair of layers),
    against random matrices' score."""
    cfg = run.config
    comp = _kept("composition", run, source, lambda: circuits.composition(cfg, run.final_weights()))
    rows = [plots.head_name(*w) for w in comp.writers]
    cols = [plots.head_name(*r) for r in comp.readers]
    two = cfg.n_layers == 2
    title = _("K-composition, layer 0 → layer 1") if two else _("K-composition, each earlier layer → each later one")
    ui.show_figure(lambda: plots.matrix(comp.k, rows, cols, title=title,
                                        x_title=_("layer-1 head (reads in its keys)") if two
                                        else _("later head (reads in its keys)"),
                                        y_title=_("layer-0 head (writes)") if two else _("earlier head (writes)"),
                                        colorscale="Blues", centre=False, text=True, height=320 if two else 420),
                   "tr_composition", "learning-composition", view=(cfg.key(), source, "composition"))
    a, b = comp.best_pair()
    k, cap = comp.of(a, b), float(comp.cap[comp.writers.index(a), comp.readers.index(b)])
    a, b = plots.head_name(*a), plots.head_name(*b)
    st.caption(_("The largest K-composition is {a} → {b}: {k}, {times}× the score of random matrices of the same "
                 "shapes ({baseline}). K-composition measures how much of what the earlier head writes the later "
                 "head reads in its keys.").format(a=a, b=b, k=number(k, 2), times=number(k / comp.baseline, 1),
                                                   baseline=number(comp.baseline, 2)))
    if not two:
        st.caption(_("Empty cells: a head reads only what heads of earlier layers wrote."))
    st.caption(_("No pair can score 1 here: spread over several directions, even two matrices lined up perfectly "
                 "score less. With their singular values, {a} and {b} could score at most {cap}; they reach {share} "
                 "of that.").format(a=a, b=b, cap=number(cap, 2), share=percent(k / cap)))
    return comp


def head_picker(run: Run, default: tuple[int, int]) -> tuple[int, int]:
    """The later-layer head whose circuits are shown (deep-linked ``tr_head`` as "L1H0"; default: the induction
    head)."""
    cfg = run.config
    names = [plots.head_name(l, h) for l in range(1, cfg.n_layers) for h in range(cfg.n_heads)]
    wanted = str(ui.from_url("tr_head", plots.head_name(*default)))
    if wanted not in names:
        if "tr_head" in st.query_params and wanted != plots.head_name(*default):
            ui.link_note(_("Head {value} is not a later-layer head of this run; showing {head}.").format(
                value=repr(wanted[:20]), head=plots.head_name(*default)))
        st.session_state["tr_head"] = wanted = plots.head_name(*default)
    chosen = st.radio(_("Head whose circuits are shown"), names, key="tr_head", horizontal=True)
    params.put("tr_head", chosen)
    return int(chosen[1]), int(chosen.split("H")[1])


def circuits_section(run: Run, source: str, head: tuple[int, int], partner: tuple[int, int]) -> None:
    """The head's OV circuit (which token's logit it raises when it reads a token) and QK circuit (which key it
    picks, through the partner's output), over tokens 1 … vocab − 1."""
    cfg = run.config
    try:
        found = _kept(f"circuits-{head}-{partner}", run, source,
                      lambda: circuits.circuits(cfg, run.final_weights(), head, partner))
    except circuits.NoCircuits as err:   # the refusal it means; any other error is a bug, shown as one
        st.info(literal(err), icon=":material/info:")
        return
    tokens = [str(t) for t in range(1, cfg.vocab)]
    name, other = plots.head_name(*head), plots.head_name(*partner)
    left, right = st.columns(2)
    ui.show_figure(lambda: plots.matrix(found.ov, tokens, tokens, title=_("OV circuit of {head}").format(head=name),
                                        x_title=_("logit raised"), y_title=_("token attended to")),
                   "tr_ov", f"learning-ov-{name}", where=left, view=(cfg.key(), source, "ov", head))
    ui.show_figure(lambda: plots.matrix(found.qk, tokens, tokens, title=_("QK circuit of {head} through {partner}")
                                        .format(head=name, partner=other), x_title=_("token before the key"),
                                        y_title=_("query token")),
                   "tr_qk", f"learning-qk-{name}", where=right, view=(cfg.key(), source, "qk", head, partner))
    st.caption(_("OV: reading a token, {head} raises that same token's logit most for {ov} of the tokens (the "
                 "diagonal); its copying score is {copying} (1: it only copies). QK, through {partner}'s output: for "
                 "{qk} of the query tokens the key it scores highest is the one right after the same token "
                 "(“find where I stood before, take what came next”).").format(
        head=name, ov=percent(found.ov_diagonal), copying=number(found.copying, 2), partner=other,
        qk=percent(found.qk_diagonal)))
