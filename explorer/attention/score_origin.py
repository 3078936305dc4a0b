"""Where one score comes from, by the way the model puts position in (its family's ``positions``, read from
:mod:`explorer.model.families`; the parts themselves from :mod:`explorer.model.anatomy`).

* Learned positions (BERT, RoBERTa, XLM-R, ELECTRA, DistilBERT, ALBERT, MPNet, BART's encoder and decoder, GPT-2,
  GPT-BigCode, OPT), first layer: the attention reads norm(token + position (+ token type)), perhaps through a
  linear map (ELECTRA, ALBERT). Once each token's norm scale 1/σ is held at the value it had, the norm is linear,
  so the input splits into a token part, a position part and the rest (token type, the norm's shift, the
  projections' biases), and the score into token·token, token·position, position·token, position·position and the
  terms touching the rest (plus MPNet's relative bias as its own part). They add up to the score exactly (up to
  float rounding). Each token's position row is the one the model read (RoBERTa counts from padding_idx + 1, OPT
  and BART add 2).
* Rotary decoders (Llama-like, GPT-NeoX, Phi, Falcon, Gemma 3, ModernBERT; GPT-J and CodeGen pair dimensions
  2i, 2i + 1): the captured queries and keys are rotated; turning them back with the model's own frequencies gives
  the vectors before rotation. Their score at every distance is the relative-position curve; at the pair's own
  distance it is the heatmap's score. The rotation maths is the Positional encodings lab's (both in
  :mod:`explorer.attention.by_distance`).
* ALiBi (BLOOM, Falcon with alibi): the bias is slope × key position, checked against the head's slope; along a
  row it is −slope × distance plus one constant the softmax ignores.
* Relative-position biases (T5, DeBERTa-v2): the bias is its own term of the score (in
  :mod:`explorer.attention.breakdown`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.attention.breakdown import ScoreBreakdown
from explorer.attention.by_distance import AlibiView, RotaryView, alibi_view, rotary_view
from explorer.attention.result import AttentionResult
from explorer.labs.quiz import Question
from explorer.model import anatomy, families
from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext

SIDES = ("token", "position", "type", "shift", "bias")   # what each side's vector is split into
MAIN = ("token", "position")
LATER_LAYERS = N_("From layer 1 on, each token's vector is the sum of everything earlier layers wrote into it: "
                "attention mixed other tokens' token and position parts in, and the norms and the feed-forward "
                "block's nonlinearity blend them, so it no longer splits into a token part and a position part.")


# ---------------------------------------------------------------------------------------------- learned positions

@dataclass(frozen=True)
class PositionSplit:
    """``terms[(query part, key part)]``: scale · (query's part) · (key's part) for every pair of ``SIDES`` (type
    absent when the model has no token-type table). ``parts``: those shown: token·token, token·position,
    position·token, position·position, "rest" (every term touching type, shift or bias) and, when the model adds
    one, "position bias" (MPNet's relative bias). ``score``: the score they should add up to (the heatmap's)."""
    terms: dict[tuple[str, str], float]
    parts: dict[str, float]
    score: float

    @property
    def total(self) -> float:
        return float(sum(self.parts.values()))


def side_parts(token: np.ndarray, position: np.ndarray, token_type: np.ndarray | None, gamma: np.ndarray | None,
               beta: np.ndarray | None, eps: float | None, weight: np.ndarray,
               bias: np.ndarray) -> dict[str, np.ndarray]:
    """One token's query (or key) vector ``weight @ norm(x) + bias``, with ``x = token + position + token_type``,
    split into what each input part gives, the norm's scale σ held at ``x``'s own:

        norm(x) = gamma · (x − mean(x)) / σ + beta,   σ = sqrt(var(x) + eps)
                = Σ_part gamma · (part − mean(part)) / σ + beta

    ``gamma`` None: no norm (the sum goes straight in); ``beta`` None: a norm without shift. ``weight``
    ``(d_head, d_model)`` (one head's rows, any linear map after the norm folded in), the rest ``(d_model,)``;
    -> ``{side: (d_head,)}``."""
    parts = {"token": token, "position": position}
    if token_type is not None:
        parts["type"] = token_type
    if gamma is None:
        out = {name: weight @ v for name, v in parts.items()}
        out["shift"] = np.zeros(weight.shape[0])
    else:
        x = sum(parts.values())
        sigma = np.sqrt(x.var() + eps)
        out = {name: weight @ (gamma * (v - v.mean()) / sigma) for name, v in parts.items()}
        out["shift"] = np.zeros(weight.shape[0]) if beta is None else weight @ beta
    out["bias"] = np.asarray(bias, dtype=np.float64)
    return out


def split_terms(query_parts: dict[str, np.ndarray], key_parts: dict[str, np.ndarray], scale: float,
                score: float, position_bias: float = 0.0) -> PositionSplit:
    """Every (query part, key part) term of ``scale · q · k`` and the shown parts (with ``position_bias`` as its
    own part when it is not 0)."""
    terms = {(a, b): float(query_parts[a] @ key_parts[b]) * scale for a in query_parts for b in key_parts}
    parts = {f"{a}·{b}": terms[(a, b)] for a in MAIN for b in MAIN}
    parts["rest"] = float(sum(v for (a, b), v in terms.items() if a not in MAIN or b not in MAIN))
    if position_bias:
        parts["position bias"] = float(position_bias)
    return PositionSplit(terms, parts, score)


def fold(projection: tuple[np.ndarray, np.ndarray], after: tuple[np.ndarray, np.ndarray] | None,
         rows: slice) -> tuple[np.ndarray, np.ndarray]:
    """One head's rows of a projection ``(W, b)`` applied after a linear map ``after`` ``(P, p)`` (ELECTRA's
    embeddings_project): W[rows] @ (P @ x + p) + b[rows] = (W[rows] @ P) @ x + (W[rows] @ p + b[rows])."""
    w, b = projection[0][rows], projection[1][rows]
    if after is None:
        return w, b
    return w @ after[0], w @ after[1] + b


def learned_split(parts: anatomy.FirstInputParts, result: AttentionResult, b: ScoreBreakdown) -> PositionSplit:
    """The first layer's score of ``b`` split into token and position parts; every token's type row is 0 (one
    segment), its position row the one the model read."""
    d = b.d_head
    tokens, positions = parts.token(result.token_ids), parts.position(result.token_ids)

    def side(at: int, projection, head: int) -> dict[str, np.ndarray]:
        w, bias = fold(projection, parts.project, slice(head * d, (head + 1) * d))
        return side_parts(tokens[at], positions[at], parts.token_type, parts.gamma, parts.beta, parts.eps, w, bias)

    return split_terms(side(b.query, parts.queries, b.head), side(b.key, parts.keys, b.kv_head), b.scale, b.score,
                       b.bias)


# ---------------------------------------------------------------------------------------------- one call

@dataclass(frozen=True)
class Origin:
    """What can be said of where ``b``'s score comes from: ``kind`` ("learned", "later", "rope", "alibi",
    "relative" or "none"), a ``sentence`` for the page, and the split, rotary view or ALiBi view when there is
    one."""
    kind: str
    sentence: str
    split: PositionSplit | None = None
    rotary: RotaryView | None = None
    alibi: AlibiView | None = None


CROSS = N_("Cross attention compares decoder queries with encoder keys: they come from two different stacks, so "
         "there is no single input to split.")


def origin(model: torch.nn.Module, result: AttentionResult, b: ScoreBreakdown) -> Origin:
    """The origin of ``b``'s score in ``model`` (the loaded model ``result`` came from), as its family says; a
    model that lacks a part where its family keeps it gets the one sentence that says so."""
    try:
        return _origin(model, result, b)
    except families.Unsupported as err:
        return Origin("none", str(err))


def _origin(model: torch.nn.Module, result: AttentionResult, b: ScoreBreakdown) -> Origin:
    why = families.origin_refusal(model)
    if why:
        return Origin("none", why)
    if result.part == "cross":
        return Origin("none", _(CROSS))
    fam, kind = families.family_of(model), families.positions_of(model)
    if kind == "learned":
        parts = anatomy.first_input(model, decoder=result.part == "decoder")
        if parts is None:
            return Origin("none", _("The split into token and position parts is worked out for {family}'s encoder; "
                                    "its decoder makes its input from tables of its own, not shown here.").format(
                family=fam.name))
        if b.layer > 0:
            return Origin("later", _(LATER_LAYERS))
        bias = " " + _("{family}'s relative-position bias is its own part.").format(family=fam.name) if b.bias else ""
        reads = _("a linear map of norm(token + position embedding)") if parts.project else \
            _("norm(token + position embedding)") if parts.gamma is not None else _("token + position embedding")
        return Origin(kind, _("Layer 0 reads {reads}: with each token's norm scale held at its own value the norm is "
                              "linear, so the score splits exactly into these parts.").format(reads=reads) + bias,
                      split=learned_split(parts, result, b))
    if kind == "rope":
        inv_freq, scaling = anatomy.rope_table(model, b.layer)
        return Origin(kind, _("The query and key are rotated by angles proportional to their positions; turned "
                              "back, the same two vectors can be scored at any distance."),
                      rotary=rotary_view(inv_freq, scaling, fam.rotary_layout, b, len(result.tokens),
                                         result.facts.causal))
    if kind == "alibi":
        a = alibi_view(b, fam.bias_scaled)
        scaled = " × " + _("scale") if fam.bias_scaled else ""
        return Origin(kind, _("ALiBi adds slope × key position to every score: this head's slope is {slope}, so "
                              "{product} = {expected}. Along the row that is −slope × distance ({penalty} for distance "
                              "{distance}) plus {constant} for every key, which the softmax ignores.").format(
            slope=numbers.number(a.slope, digits=6), product=numbers.number(a.slope, digits=6) + f" × {b.key}{scaled}",
            expected=numbers.signed(a.expected, 4), penalty=numbers.signed(a.penalty, 4), distance=a.distance,
            constant=numbers.signed(a.constant, 4)), alibi=a)
    return Origin(kind, _("{family} adds a term that depends on how far apart the two tokens are to each score: here "
                          "{bias}, beside the content part q·k × scale = {content}.").format(
        family=fam.name, bias=numbers.signed(b.bias, 4), content=numbers.signed(b.dot * b.scale, 4)))


NEAR_PEAK = 0.1   # a distance whose score is within this share of the curve's spread of the peak ties with it


def peak_range(rotary: RotaryView, within: int) -> tuple[int, int]:
    """``(nearest, farthest)``: the run of distances around the peak (``earliest`` … ``within``) whose scores are
    within ``NEAR_PEAK`` of the curve's spread there of the peak's score: the distance question's answer, so that
    a rounding cannot flip it (two distances that score almost alike are one answer)."""
    keep = (rotary.distances <= within) & (rotary.distances >= rotary.earliest)
    scores = dict(zip(rotary.distances[keep].tolist(), rotary.curve[keep].tolist()))
    peak = rotary.peak(within)
    near = {d for d, v in scores.items() if v >= scores[peak] - NEAR_PEAK * (max(scores.values()) -
                                                                              min(scores.values()))}
    low, high = peak, peak
    while low - 1 in near:
        low -= 1
    while high + 1 in near:
        high += 1
    return low, high


def distance_question(rotary: RotaryView, b: ScoreBreakdown, n_options: int = 4) -> Question:
    """"At what distance does this head score “it” → “animal” highest?", over the distances this text allows the
    pair (0 … the query's position; an encoder's later keys too): the answer is the peak, or the run of distances
    that tie with it (``peak_range``); the pair's own distance, 0 and 1 are among the other options unless they tie
    with the peak without being next to it (then they are left out, so no option is as right as the answer)."""
    within = b.query
    peak = rotary.peak(within)
    low, high = peak_range(rotary, within)
    keep = (rotary.distances <= within) & (rotary.distances >= rotary.earliest)
    spread = float(rotary.curve[keep].max() - rotary.curve[keep].min())
    top = float(rotary.curve[rotary.distances == peak][0])
    ranked = [int(d) for d in rotary.distances[keep][np.argsort(-rotary.curve[keep], kind="stable")]]
    clear = [d for d in ranked if float(rotary.curve[rotary.distances == d][0]) < top - NEAR_PEAK * spread]
    others = [d for d in dict.fromkeys([rotary.own, 0, 1, *ranked[::3]]) if d in clear][:n_options - 1]

    def label(d: int) -> str:
        if d == 0:
            return _("0 (itself)")
        if d > 0:
            return ngettext("{n} token back", "{n} tokens back", abs(d)).format(n=abs(d))
        return ngettext("{n} token ahead", "{n} tokens ahead", abs(d)).format(n=abs(d))

    def span(a: int, z: int) -> str:
        if a == z:
            return label(a)
        if a > 0:
            return _("{nearest}–{farthest} tokens back").format(nearest=a, farthest=z)
        if z < 0:
            return _("{nearest}–{farthest} tokens ahead").format(nearest=-z, farthest=-a)
        return _("from {first} to {last}").format(first=label(a), last=label(z))
    answer = span(low, high)
    options = [answer if d == low else label(d) for d in sorted([low, *others])]
    reveal = _("The same two vectors score highest **{peak}** positions apart ({at_peak}); at their real distance, "
               "{own}, they score {at_own}, the heatmap's score. Unrotated they would score {before} at every "
               "distance.").format(peak=peak, at_peak=numbers.signed(top, 3),
                                   own=rotary.own, at_own=numbers.signed(rotary.at_own, 3),
                                   before=numbers.signed(rotary.before, 3))
    if low != high:
        reveal += " " + _("Distances that score within a tenth of the curve's spread ({spread}) of the highest count "
                          "as one answer, so that no rounding decides it: here {answer}.").format(
            spread=numbers.number(spread, 3), answer=answer)
    return Question(prompt=_("Layer {layer}, head {head}: keep the vectors of “{query}” and “{key}” and move the key. "
                             "At what distance from the query would this head score the pair highest: which of "
                             "these {n}, from {nearest} to {farthest}?").format(
                        layer=b.layer, head=b.head, query=b.query_token, key=b.key_token, n=len(options),
                        nearest=options[0], farthest=options[-1]),
                    options=tuple(options), correct=answer, reveal=reveal)
