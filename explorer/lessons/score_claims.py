"""What lesson 5 ("Where does one score come from?") measures on the model: one heatmap cell taken apart as the
heatmap page's score breakdown takes it (:mod:`explorer.attention.breakdown`, :mod:`explorer.attention.score_origin`):
the scale's effect on the cell's weight, the layer-0 split into token and position parts, the rotary curve at the
pair's own distance, and the key head a query head shares. Same conventions as :mod:`explorer.lessons.claims`."""
from __future__ import annotations

import numpy as np

from explorer.attention import breakdown as bd
from explorer.attention import score_origin as so
from explorer.attention.result import extract
from explorer.labs.quiz import Question, near_best, near_edges
from explorer.maths import softmax
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext, pgettext

from .claims import NotComputable, Params, param

PART_NAMES = {"token·token": N_("token · token"), "token·position": N_("token · position"),
              "position·token": N_("position · token"), "position·position": N_("position · position")}   # via _()
REST = N_("the rest (the norm's shift, the biases)")   # the fifth option: what no token or position part holds
TOLERANCE = 1e-5   # the page's: parts against the score, to 1e-5 of the score's size
SAME = 0.005       # two weights differing by less than this are "the same"
SCALE_TIE = 0.002  # a difference within this of SAME counts for "the same" and for larger/smaller
PART_TIE = 0.05    # parts within this share of the largest part's size of it count as largest too


def cell(loaded: LoadedModel, params: Params):
    """``(result, breakdown)`` of the step's cell: (``layer``, ``head``), query and key token positions."""
    result = extract(loaded, param(params, "text"))
    where = [int(params.get(name, 0)) for name in ("layer", "head", "query", "key")]
    try:
        return result, bd.breakdown(result, *where)
    except ValueError as err:
        raise NotComputable(str(err)) from err


def _origin(loaded: LoadedModel, result, b: bd.ScoreBreakdown, kind: str) -> so.Origin:
    found = so.origin(loaded.model, result, b)
    if found.kind != kind:
        raise NotComputable(found.sentence)
    return found


def without_the_scale(loaded: LoadedModel, params: Params) -> Question:
    """"Without the scale, this cell's weight would be…": the row's softmax with and without 1/√d_k."""
    result, b = cell(loaded, params)
    if b.masked or b.softcap or b.bias or b.mask_bias:
        raise NotComputable(_("this cell is masked, or its score has a soft cap or a bias besides q·k"))
    unscaled = float(softmax(b.row_scores / b.scale)[b.key])   # hidden keys stay at −∞
    options = (_("larger"), _("smaller"), pgettext("a weight compared", "the same"))
    right = options[2] if abs(unscaled - b.weight) < SAME else options[0] if unscaled > b.weight else options[1]
    other = options[0] if unscaled > b.weight else options[1]
    also = tuple(o for o in near_edges(abs(unscaled - b.weight), {SAME: (options[2], other)}, SCALE_TIE)
                 if o != right)
    reveal = _("q·k = {dot}; times the scale 1/√{d_head} = {scale} it is {scaled}. The row's softmax gives this "
               "cell **{weight}** with the scale and {unscaled} without it: without it the row's scores are "
               "{times} times further apart, so the softmax is sharper: the row's largest scores take more, the "
               "others less.").format(dot=numbers.signed(b.dot, 3), d_head=b.d_head,
                                      scale=numbers.number(b.scale, 4),
                                      scaled=numbers.signed(b.dot * b.scale, 3), weight=numbers.percent(b.weight, 1),
                                      unscaled=numbers.percent(unscaled, 1), times=numbers.number(1 / b.scale, 1))
    return Question(_("“{query}” → “{key}” has weight {weight}. Every score of the row is multiplied by 1/√d_k = "
                      "1/√{d_head} before the softmax. Without that scale, which of these three would this weight be: "
                      "larger, smaller or the same?").format(
                          query=b.query_token, key=b.key_token, weight=numbers.percent(b.weight, 1), d_head=b.d_head),
                    options, right, reveal + ("" if not also else " " + _(
                        "The two weights are so close to the page's line for “the same” ({same}) that both answers "
                        "count as right.").format(same=numbers.percent(SAME, 1))), also=also)


def position_part(loaded: LoadedModel, params: Params) -> Question:
    """"Which part of this layer-0 score is largest?": the split into token and position parts and the rest (the
    norm's shift and the biases, which can be the largest: it is an option too), measured."""
    result, b = cell(loaded, params)
    split = _origin(loaded, result, b, "learned").split
    parts = {_(name): split.parts[k] for k, name in PART_NAMES.items() if k in split.parts}
    if len(parts) < 2:
        raise NotComputable(_("this model's layer-0 score has no token and position parts"))
    parts[_(REST)] = split.parts.get("rest", 0.0)
    size = {k: abs(v) for k, v in parts.items()}
    best, tied = near_best(size, PART_TIE * max(size.values()))
    listed = "; ".join(f"{k} {numbers.signed(v, 3)}" for k, v in parts.items())
    reveal = _("{parts}. Together {total}, the score {score}. **{best}** is the largest part here.").format(
        parts=listed, total=numbers.signed(split.total, 3), score=numbers.signed(split.score, 3), best=best)
    if tied:
        reveal += " " + ngettext("{others} comes within {margin} of the largest part's size, so it counts as right "
                                 "too.",
                                 "{others} come within {margin} of the largest part's size, so they count as right "
                                 "too.", len(tied)).format(others=numbers.joined(tied),
                                                           margin=numbers.percent(PART_TIE))
    return Question(_("Layer {layer}, head {head}: the score of “{query}” → “{key}” ({score}) splits into four "
                      "token and position parts and the rest. Which of these five is largest in size?").format(
                          layer=b.layer, head=b.head, query=b.query_token, key=b.key_token,
                          score=numbers.signed(b.score, 3)),
                    tuple(parts), best, reveal, also=tied)


def shared_key_head(loaded: LoadedModel, params: Params) -> Question:
    """"Which query heads read the same keys as this one?": the key head groups of grouped-query attention."""
    result, b = cell(loaded, params)
    if not b.grouped:
        raise NotComputable(bd.group_note(b))
    share = b.n_heads // b.n_kv_heads
    groups = [_("query heads {low}–{high}").format(low=g * share, high=(g + 1) * share - 1)
              for g in range(b.n_kv_heads)]
    options = (_("only head {head} itself").format(head=b.head), *groups,
               _("all {n} query heads").format(n=b.n_heads))
    return Question(_("This model has {n} query heads but only {kv} key heads per layer. Which query heads score "
                      "against the same keys as head {head}? Which of these {k}, from head {head} alone to all "
                      "{n}?").format(n=b.n_heads, kv=b.n_kv_heads, head=b.head, k=len(options)),
                    options, groups[b.kv_head],
                    bd.group_note(b) + " " + _("Their queries differ, so their rows of weights differ too."))


# ---------------------------------------------------------------------------------------------- checks

def split_adds_up(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    result, b = cell(loaded, params)
    split = _origin(loaded, result, b, "learned").split
    gap = abs(split.total - split.score)
    return gap <= TOLERANCE * b.size, _("the parts add up to {total} and the score is {score} (difference "
                                        "{gap})").format(total=numbers.signed(split.total, 5),
                                                         score=numbers.signed(split.score, 5),
                                                         gap=numbers.scientific(gap, 1))


def curve_meets_score(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    result, b = cell(loaded, params)
    r = _origin(loaded, result, b, "rope").rotary
    gap = abs(r.at_own - b.score)
    return gap <= TOLERANCE * b.size, _("at the pair's own distance {own} the curve gives {curve}, the score is "
                                        "{score} (difference {gap})").format(
        own=r.own, curve=numbers.signed(r.at_own, 5), score=numbers.signed(b.score, 5), gap=numbers.scientific(gap, 1))


def shared_keys_differ(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    result, b = cell(loaded, params)
    share = b.n_heads // b.n_kv_heads
    group = range(b.kv_head * share, (b.kv_head + 1) * share)
    rows = result.weights[b.layer, list(group), b.query]                  # (share, key)
    apart = float(max(np.abs(rows[i] - rows[j]).sum() / 2 for i in range(share) for j in range(i + 1, share)))
    said = _("the query heads {first}–{last} sharing key head {kv} give “{token}” rows that differ by up to {apart} "
             "of their weight (total variation distance)")
    return b.grouped and apart > 0.1, said.format(first=group[0], last=group[-1], kv=b.kv_head, token=b.query_token,
                                                  apart=numbers.percent(apart))
