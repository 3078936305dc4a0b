"""Logic of the "What heads do" page: knock chosen heads out, compare a sweep with the attention flip, label roles.

Pure functions of models, tables and arrays (no Streamlit). The measures themselves come from ``effects`` and
``measures``; this module adds what the page needs around them:

- ``knocked_pair`` measures a minimal pair with some heads knocked out, holding the model's lock for the whole
  block (knockout hooks live on the shared model: no other session's forward pass may run meanwhile).
- ``flip_texts`` chooses the texts and query whose *attention* flip can be compared with the knockout effect. For
  an encoder that is the pair itself and its query word. A decoder's measure reads the next token after
  ``text + ' The word "it" refers to the'``; "it" inside the sentence comes before the changed word, so its row is
  the same in A and B (a causal model cannot look ahead). The query that makes the prediction is the prompt's last
  token, and it sees both sentences whole: the flip is taken there, on the same texts the measure reads.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from explorer.heads_do.knockout import head_means, knockout
from explorer.heads_do.measures import PROMPT, PairMeasure, make_probe, pair_notes
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import N_, _

Head = tuple[int, int]
ROLE_LABELS = {"previous_token": N_("previous token"), "first_token": N_("first token"), "broad": N_("broad"),
               "duplicate": N_("duplicate"), "induction": N_("induction")}   # English; role_badges translates
ROLE_CUTS = {"previous_token": 0.5, "first_token": 0.5, "broad": 0.85, "duplicate": 0.3, "induction": 0.3}


def knocked_pair(loaded: LoadedModel, text_a: str, text_b: str, heads: list[Head], mode: str = "zero",
                 **probe_kw) -> PairMeasure:
    """Both texts' measures with ``heads`` knocked out (none: the intact model). ``mode="mean"`` replaces each
    head's output by its mean over every position of both texts (as ``effects.sweep`` does)."""
    probes = [make_probe(loaded, t, **probe_kw) for t in (text_a, text_b)]
    plan: dict[int, list[int]] = {}
    for layer, head in heads:
        plan.setdefault(int(layer), []).append(int(head))
    means = head_means(loaded, [text_a, text_b], probe_kw) if mode == "mean" and plan else None
    with loaded.lock, torch.inference_mode():
        with knockout(loaded.model, plan, mode, means):
            found = [p.measure(loaded.model(**p.inputs, use_cache=False).last_hidden_state)[0] for p in probes]
    a, b = found
    return PairMeasure(a, b, a.score - b.score, pair_notes(a, b))


def measure_table(pair: PairMeasure) -> pd.DataFrame:
    """One row per sentence: each candidate's probability (decoder) or cosine (encoder), and the score."""
    c1, c2 = pair.a.candidates
    decoder = pair.a.kind == "next-token"
    rows = []
    for side, m in (("A", pair.a), ("B", pair.b)):
        rows.append({_("sentence"): side, (f"P({c1})" if decoder else f"cos(it, {c1})"): m.values[c1],
                     (f"P({c2})" if decoder else f"cos(it, {c2})"): m.values[c2],
                     (_("log-odds") if decoder else _("difference")): m.score, _("prefers"): m.prefers})
    return pd.DataFrame(rows)


def explain(pair: PairMeasure) -> str:
    """What the intact model does with the pair, said plainly (and what to watch when it gets it wrong)."""
    c1, c2 = pair.a.candidates
    decoder = pair.a.kind == "next-token"
    if pair.a.prefers == c1 and pair.b.prefers == c2:
        right = (_("The model gets the pair right: {c1} in A, {c2} in B. A head matters if knocking it out moves the "
                   "two log-odds towards each other.") if decoder else
                 _("The model gets the pair right: {c1} in A, {c2} in B. A head matters if knocking it out moves the "
                   "two cosine differences towards each other."))
        return right.format(c1=repr(c1), c2=repr(c2))
    toward = c1 if pair.shift > 0 else c2
    wrong = (_("The model does not get the pair right: it prefers {a} in A and {b} in B. What still changes is the "
               "shift: A leans {shift} further towards {toward} than B (log-odds {score_a} vs {score_b}). Knockouts "
               "are judged by how they move that shift.") if decoder else
             _("The model does not get the pair right: it prefers {a} in A and {b} in B. What still changes is the "
               "shift: A leans {shift} further towards {toward} than B (cosine difference {score_a} vs {score_b}). "
               "Knockouts are judged by how they move that shift."))
    return wrong.format(a=repr(pair.a.prefers), b=repr(pair.b.prefers), shift=numbers.number(abs(pair.shift), 2),
                        toward=repr(toward), score_a=numbers.signed(pair.a.score,
                                                                    2), score_b=numbers.signed(pair.b.score, 2))


def knockout_notes(heads: list[Head], n_layers: int, n_heads: int, pair: PairMeasure) -> list[str]:
    """Warnings about a knockout's result: every head gone, or a number that is not a number."""
    notes = []
    if len(set(heads)) >= n_layers * n_heads:
        notes.append(_("Every head is knocked out: no token can read any other, so what is left is each token "
                       "alone (embeddings and feed-forward layers). The number still exists but says nothing about "
                       "attention."))
    if not all(math.isfinite(x) for x in (pair.a.score, pair.b.score)):
        notes.append(_("The measure is not a number with these heads out (a state became zero)."))
    return notes


def flip_texts(kind: str, text_a: str, text_b: str, query: str, prompt: str = PROMPT) -> tuple[str, str, str, str]:
    """``(text_a, text_b, query, note)`` whose attention flip matches what the knockout measure reads."""
    if kind != "decoder":
        return text_a, text_b, query, ""
    ending = prompt.format(query=query)
    last = ending.split()[-1]
    note = _("The decoder's {query} cannot see the changed word (it comes first, and a causal model never looks "
             "ahead). The flip is therefore read at the token that makes the prediction: the last {last} of the "
             "prompt {prompt}, which sees both sentences whole.").format(query=repr(query), last=repr(last),
                                                                         prompt=repr(ending.strip()))
    return text_a.rstrip() + ending, text_b.rstrip() + ending, last, note


def top_flips(table: pd.DataFrame, k: int) -> list[Head]:
    """The ``k`` heads whose attention moves most towards the first candidate in A compared with B."""
    best = table.sort_values("flip", ascending=False).head(max(int(k), 0))
    return [(int(r.layer), int(r.head)) for r in best.itertuples()]


def agreement(rho: float) -> str:
    """A sentence on the Spearman correlation between the sizes of the heads' attention flips and of their knockout
    effects (``knockout.size_spearman``), and why sizes."""
    if not math.isfinite(rho):
        return _("No rank correlation: one of the two maps is constant.")
    if abs(rho) < 0.2:
        found = _("Spearman ρ = {rho} between the sizes of the flips and of the knockout effects: the two rankings "
                  "hardly agree.")
    elif abs(rho) < 0.4:
        found = (_("Spearman ρ = {rho} between the sizes of the flips and of the knockout effects: the two rankings "
                   "agree weakly.") if rho >= 0 else
                 _("Spearman ρ = {rho} between the sizes of the flips and of the knockout effects: the heads that "
                   "look more tend, weakly, to matter less."))
    else:
        found = (_("Spearman ρ = {rho} between the sizes of the flips and of the knockout effects: the two rankings "
                   "agree clearly.") if rho >= 0 else
                 _("Spearman ρ = {rho} between the sizes of the flips and of the knockout effects: the heads that "
                   "look more clearly matter less."))
    return found.format(rho=numbers.signed(rho, 2)) + " " + _(
        "Sizes, because a head that helps has a negative effect (red): on the signed values, perfect agreement "
        "would read as ρ = −1. They need not agree: the flip says where a head looks, the knockout what the answer "
        "loses without it. A head can look at the right word and pass on little, and a head that looks elsewhere "
        "can still carry what the answer needs.")


def toggle(heads: list[Head], head: Head) -> list[Head]:
    """``heads`` with ``head`` added, or removed when it was there (order kept)."""
    return [h for h in heads if h != head] if head in heads else [*heads, head]


def role_badges(roles: pd.DataFrame) -> pd.Series:
    """Per head, the names of the roles whose score passes its cut (``ROLE_CUTS``), strongest first, or ''."""
    def badge(row) -> str:
        found = sorted(((row[c] / cut, c) for c, cut in ROLE_CUTS.items() if row[c] >= cut), reverse=True)
        return ", ".join(_(ROLE_LABELS[c]) for _ratio, c in found)
    return roles.apply(badge, axis=1)


def stats_with(stats: pd.DataFrame, sinks: pd.DataFrame | None = None, roles: pd.DataFrame | None = None,
               corpus: list[str] | None = None) -> pd.DataFrame:
    """``head_stats`` with ``sink by weight`` / ``sink by value size`` (``values.sink_stats``) and the role badges
    plus induction and duplicate scores (``roles.head_roles``) joined on (layer, head), when given; ``corpus``
    (one cell per row of ``roles``: the badges checked on real text, ``atlas.labels.probe_checked``) beside them."""
    out = stats.copy()
    if sinks is not None:
        out = out.merge(sinks.rename(columns={"sink_weight": "sink by weight", "sink_value": "sink by value size"}),
                        on=["layer", "head"], how="left")
    if roles is not None:
        extra = roles[["layer", "head", "induction", "duplicate"]].copy()
        extra.insert(2, "role", role_badges(roles).to_numpy())
        if corpus is not None:
            extra.insert(3, "on real text", corpus)
        out = out.merge(extra, on=["layer", "head"], how="left")
    return out


def head_marks(heads: list[Head], n_layers: int, n_heads: int) -> np.ndarray:
    """Bool ``[layer, head]``: True where a head is in ``heads`` (the dots ``plots.heads.value_per_head`` draws for
    ``marked``)."""
    out = np.zeros((n_layers, n_heads), dtype=bool)
    for layer, head in heads:
        if 0 <= layer < n_layers and 0 <= head < n_heads:
            out[layer, head] = True
    return out
