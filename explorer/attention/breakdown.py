"""One score taken apart: the query and key vectors of one head, their products dimension by dimension, the sum
times the model's scale, and the row's softmax that gives the weight the heatmap shows.

Everything is read from what an :class:`~explorer.attention.result.AttentionResult` already holds (each layer's
captured queries and keys after RoPE, its scale, mask and position bias): no forward pass. Written out:

    score[q, k] = scale · Σ_i query[i] · key[i]  (+ position bias)      (−inf where the mask hides the key)
                  (Gemma 2 squashes scale · q·k to cap · tanh(· / cap) before the bias and mask)
    weight[q, k] = softmax over the keys of score[q, :]

Grouped-query attention: query head h reads key head h // (n_heads / n_kv_heads).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.attention.result import AttentionResult
from explorer.labs.quiz import Question
from explorer.maths import softmax
from explorer.model import families
from explorer.words import numbers
from explorer.words.i18n import N_, _

MOST_CARRIERS = 8   # at most this many dimensions are marked as carrying the score


@dataclass(frozen=True)
class ScoreBreakdown:
    """One head's score for one (query, key) pair, step by step. Vectors are float64 ``(d_head,)``.

    ``products = query_vector * key_vector``; ``order``: dimensions from the one that pushes the score most in its
    own direction to the one that pushes least (or against it); ``carriers``: the first few of ``order`` whose
    products alone already add up to the whole dot product (see :func:`carriers`). ``score = dot · scale + bias``
    (``bias``: a relative-position bias added before softmax, 0 when the model has none; with a ``softcap``, as
    Gemma 2, ``score = softcap · tanh(dot · scale / softcap) + bias``; ``mask_bias``: what the model's mask adds
    to a key it does not hide, 0 except Falcon with ALiBi, which adds its bias there a second time). ``row_scores``: the
    whole row ``(key,)`` (``-inf`` where masked); ``weight``: our softmax of it at ``key``; ``model_weight``: the
    weight the model returned (the heatmap's cell).
    """
    layer: int
    head: int
    kv_head: int
    n_heads: int
    n_kv_heads: int
    query: int
    key: int
    query_token: str
    key_token: str
    query_vector: np.ndarray
    key_vector: np.ndarray
    products: np.ndarray
    order: np.ndarray
    carriers: np.ndarray
    dot: float
    scale: float
    bias: float
    score: float
    masked: bool
    row_scores: np.ndarray
    row_weights: np.ndarray
    weight: float
    model_weight: float
    softcap: float | None = None
    mask_bias: float = 0.0

    @property
    def capped(self) -> float:
        """scale · q·k after the soft cap (itself when the model has none)."""
        raw = self.dot * self.scale
        return raw if not self.softcap else float(np.tanh(raw / self.softcap) * self.softcap)

    @property
    def d_head(self) -> int:
        return len(self.products)

    @property
    def grouped(self) -> bool:
        """Several query heads share this key head (grouped-query attention)."""
        return self.n_kv_heads < self.n_heads

    @property
    def carried(self) -> float:
        """What the marked dimensions add up to, times the scale (their share of the score before any bias)."""
        return float(self.products[self.carriers].sum() * self.scale)

    @property
    def size(self) -> float:
        """The score's size for rounding: scale · Σ|query[i]·key[i]| (float32 rounding of the dot product is a
        few 1e-7 of it). Tolerances of the form "to 1e-5 of the score's size" read this."""
        return float(np.abs(self.products).sum() * abs(self.scale) + abs(self.bias) + abs(self.mask_bias))

    @property
    def gap(self) -> float:
        """|our softmax − the model's weight| for this cell (the fidelity check of one cell)."""
        return abs(self.weight - self.model_weight)


def carriers(products: np.ndarray, most: int = MOST_CARRIERS) -> tuple[np.ndarray, np.ndarray]:
    """``(order, marked)``: dimensions sorted by how much each pushes the dot product in its own direction
    (largest first), and the shortest run of them, at most ``most``, whose products alone reach the whole sum
    (the rest then cancel out among themselves). When no run of ``most`` reaches it, the ``most`` largest."""
    p = np.asarray(products, dtype=np.float64)
    total = float(p.sum())
    sign = 1.0 if total >= 0 else -1.0
    order = np.argsort(-sign * p, kind="stable")
    if total == 0.0:
        return order, order[:0]
    running = np.cumsum(sign * p[order])
    reached = np.flatnonzero(running >= abs(total))
    n = int(reached[0]) + 1 if reached.size else most
    return order, order[:min(n, most)]


def kv_head_of(head: int, n_heads: int, n_kv_heads: int) -> int:
    """The key/value head query head ``head`` reads under grouped-query attention (itself without grouping)."""
    return head // (n_heads // n_kv_heads)


def _row_extra(record: dict, head: int, query: int, n_q: int,
               n_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(bias, mask_bias, hidden)`` for one query row: the position bias added before softmax (zeros when none),
    what the additive mask adds where it does not hide the key (zeros, except Falcon with ALiBi, whose mask carries
    the ALiBi bias a second time), and where the mask hides a key, each ``(key,)``; the record's tensors are
    ``(1, 1 or heads, Q or 1, K)``."""
    def row(extra) -> np.ndarray | None:
        if extra is None:
            return None
        t = extra[0]
        t = t[head if t.shape[0] > 1 else 0][..., -n_q:, -n_k:]
        return t[query if t.shape[0] > 1 else 0].double().numpy()   # ALiBi's bias: one row for every query
    bias, mask = row(record.get("bias")), row(record.get("mask"))
    hidden = np.zeros(n_k, bool)
    for extra in (bias, mask):
        if extra is not None:
            hidden |= extra <= np.finfo(np.float32).min / 2   # the model's additive mask: float32's minimum
    bias = np.zeros(n_k) if bias is None else np.where(hidden, 0.0, bias)
    mask_bias = np.zeros(n_k) if mask is None else np.where(hidden, 0.0, mask)
    return bias, mask_bias, hidden


def breakdown(result: AttentionResult, layer: int, head: int, query: int, key: int) -> ScoreBreakdown:
    """Take apart ``result``'s score of query token ``query`` for key token ``key`` in (``layer``, ``head``).

    Raises ``ValueError`` with what to do when the result holds no captured queries and keys (a family that
    computes attention in its own code), or when an index is out of range.
    """
    if result.score_records is None:
        family = families.FAMILIES.get(result.facts.family)
        raise ValueError(_("{model} ({family}) computes attention in its own code: its queries and keys could not be "
                           "captured, so no score can be taken apart (only the weights it returns are shown).").format(
            model=result.facts.name, family=family.name if family else result.facts.family))
    n_layers, n_heads, n_q, n_k = result.weights.shape
    for name, value, top in ((N_("layer"), layer, n_layers), (N_("head"), head, n_heads), (N_("query"), query, n_q),
                             (N_("key"), key, n_k)):
        if not 0 <= value < top:
            raise ValueError(_("{name} {value} is out of range (0–{last})").format(name=_(name), value=value,
                                                                                   last=top - 1))
    record = result.score_records[layer]
    q_all, k_all = record["q"][0], record["k"][0]               # (n_heads, Q, d_head), (n_kv_heads, K, d_head)
    n_kv = k_all.shape[0]
    kv = kv_head_of(head, n_heads, n_kv)
    qv = q_all[head, query].double().numpy()                    # (d_head,)
    keys = k_all[kv].double().numpy()                           # (K, d_head)
    scale = float(record["scaling"] if record["scaling"] is not None else qv.shape[-1] ** -0.5)
    bias, mask_bias, hidden = _row_extra(record, head, query, q_all.shape[1], keys.shape[0])
    softcap = record.get("softcap") or None
    row = keys @ qv * scale                                     # (K,)
    if softcap:                                                 # Gemma 2: squashed into (−cap, cap)
        row = np.tanh(row / softcap) * softcap
    row = row + bias + mask_bias
    row = np.where(hidden, -np.inf, row)
    weights = softmax(row)
    products = qv * keys[key]
    order, marked = carriers(products)
    dot = float(products.sum())
    return ScoreBreakdown(
        layer=layer, head=head, kv_head=kv, n_heads=n_heads, n_kv_heads=n_kv, query=query, key=key,
        query_token=result.tokens[query], key_token=result.keys[key], query_vector=qv, key_vector=keys[key].copy(),
        products=products, order=order, carriers=marked, dot=dot, scale=scale, bias=float(bias[key]),
        score=float(row[key]) if not hidden[key] else dot * scale + float(bias[key]), masked=bool(hidden[key]),
        row_scores=row, row_weights=weights, weight=float(weights[key]),
        model_weight=float(result.weights[layer, head, query, key]), softcap=softcap,
        mask_bias=float(mask_bias[key]))


def group_note(b: ScoreBreakdown) -> str:
    """One sentence on which key head this query head reads."""
    if not b.grouped:
        return _("Each query head has its own key head: head {head} reads key head {head}.").format(head=b.head)
    share = b.n_heads // b.n_kv_heads
    first = b.kv_head * share
    return _("Grouped-query attention: {n_heads} query heads share {n_kv} key heads, so query head {head} reads key "
             "head {kv_head} (shared by query heads {first}–{last}).").format(
        n_heads=b.n_heads, n_kv=b.n_kv_heads, head=b.head, kv_head=b.kv_head, first=first, last=first + share - 1)


def dimension_question(b: ScoreBreakdown, n_options: int = 4) -> Question:
    """"Which dimension carries most of this score?" (the one pushing it furthest in its own direction), with the
    dimensions where the query or the key alone is largest among the wrong answers: a large product needs both."""
    order = [int(i) for i in b.order]
    correct = order[0]
    tempting = [int(np.argmax(np.abs(b.query_vector))), int(np.argmax(np.abs(b.key_vector))), *order[1:]]
    picks = list(dict.fromkeys([correct, *tempting]))[:n_options]
    label = {i: _("dimension {i}").format(i=i) for i in picks}
    share = b.products[correct] / b.dot if b.dot else float("nan")
    reveal = _("Dimension {d}: query {q} × key {k} = **{product}**, {share} of the whole dot product {dot}. The query "
               "alone is largest in dimension {query_top} and the key alone in dimension {key_top}: a dimension "
               "carries the score only where both are large (and of matching sign).").format(
        d=correct, q=numbers.signed(b.query_vector[correct], 3), k=numbers.signed(b.key_vector[correct], 3),
        product=numbers.signed(b.products[correct],
                               3), share=numbers.percent(share), dot=numbers.signed(b.dot, 3), query_top=tempting[0],
        key_top=tempting[1])
    return Question(prompt=_("“{query}” → “{key}”, layer {layer}, head {head}: which of these {n} dimensions of q·k "
                             "(it has {d_head}) adds most to this score?").format(
                        query=b.query_token, key=b.key_token, layer=b.layer, head=b.head, n=len(picks),
                        d_head=b.d_head),
                    options=tuple(label[i] for i in sorted(picks)), correct=label[correct], reveal=reveal)
