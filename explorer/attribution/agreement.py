"""Do the methods rank the words alike? Spearman's ρ and Kendall's τ between every pair, and top-k choices.

Importance is the size of a score (``|score|``): attention-based scores are never negative, while gradient-based
ones carry a sign (a word can push the prediction away); the ranking compares how much each word matters.
Both come from SciPy through ``heads_do.knockout.spearman`` (ranks with ties averaged) and :func:`kendall`
(``kendalltau``'s τ-b, which corrects for ties); pairs with a NaN are dropped first.
"""
from __future__ import annotations

import math

import numpy as np

from explorer.heads_do.knockout import paired, spearman
from explorer.words import numbers
from explorer.words.i18n import _


def top_k(scores, k: int) -> list[int]:
    """Indices of the ``k`` largest ``|scores|``, largest first (ties: the earlier position first; NaN last)."""
    s = np.abs(np.asarray(scores, dtype=np.float64))
    s = np.where(np.isnan(s), -np.inf, s)
    order = sorted(range(len(s)), key=lambda i: (-s[i], i))
    return [i for i in order[:max(int(k), 0)] if np.isfinite(s[i])]


def kendall(x, y) -> float:
    """Kendall's τ-b of two same-length arrays: (concordant − discordant) / sqrt((n0 − ties x)(n0 − ties y)) over
    all n0 pairs (SciPy's ``kendalltau``); NaN when either is constant. Pairs with a NaN are dropped."""
    from scipy.stats import kendalltau
    a, b = paired(x, y)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(kendalltau(a, b).statistic)


def agreement(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(spearman, kendall)``, each ``[method, method]``, between the rows of ``scores`` ``[method, word]``
    compared by ``|score|``. A row that is all NaN (a method not computed) gives NaN rows and columns."""
    s = np.abs(np.asarray(scores, dtype=np.float64))
    m = s.shape[0]
    rho, tau = np.full((m, m), np.nan), np.full((m, m), np.nan)
    for a in range(m):
        for b in range(m):
            if not (np.isnan(s[a]).all() or np.isnan(s[b]).all()):
                rho[a, b], tau[a, b] = spearman(s[a], s[b]), kendall(s[a], s[b])
    return rho, tau


def summary(rho: np.ndarray, labels: list[str]) -> str:
    """One sentence on a Spearman matrix: the pair that agrees most, the pair that agrees least, and what the
    numbers mean (1: the same order of words, 0: unrelated orders, −1: reversed)."""
    pairs = [(rho[a, b], a, b) for a in range(len(labels)) for b in range(a + 1, len(labels))
             if math.isfinite(rho[a, b])]
    if not pairs:
        return _("No two methods could be compared on this text.")
    best, worst = max(pairs), min(pairs)
    mean = float(np.mean([p[0] for p in pairs]))
    return _("The closest pair is {a} and {b} (ρ = {rho_best}), the furthest {c} and {d} (ρ = {rho_worst}); across "
             "all pairs ρ averages {mean}, where 1 would mean every method orders the words the same way and 0 that "
             "their orders are unrelated.").format(a=labels[best[1]], b=labels[best[2]],
                                                   rho_best=numbers.signed(best[0], 2),
                                                   c=labels[worst[1]], d=labels[worst[2]],
                                                   rho_worst=numbers.signed(worst[0], 2), mean=numbers.signed(mean, 2))
