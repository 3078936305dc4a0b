"""What one head does on one window of text, query by query: the standard measures of a head across a corpus.

For a window's weights ``w[layer, head, query, key]`` (post-softmax, rows sum to 1) and its token ids, each
measure is a per-query number; the atlas averages each over every query of the corpus where it is defined.
Queries start at position 1 (a decoder's first row is always 1.0 on itself and would only add a constant).

- ``entropy``: −Σ w·ln w over the row, in nats (0: one key takes everything);
- ``first``: the weight on position 0 (a "sink": the encoder's [CLS], the decoder's first token);
- ``previous``: the weight on the key just before the query;
- ``self``: the weight on the query's own position;
- ``duplicate``: the weight on earlier positions holding the same token (queries with such an earlier twin only);
- ``induction``: the weight on the tokens right after those earlier twins (prefix matching on natural repeats,
  Olsson et al. 2022; queries with a twin whose successor comes before the query only);
- ``punctuation``: the weight on keys that are punctuation marks;
- ``distance``: Σ w·|query − key|, the mean distance in tokens the head looks.

Each ``top_*`` share says on how many queries that key kind gets the row's largest weight (ties: the first key).
"""
from __future__ import annotations

import unicodedata

import numpy as np

MEASURES = ("entropy", "first", "previous", "self", "duplicate", "induction", "punctuation", "distance")
SHARES = ("top_first", "top_previous", "top_induction")
EXAMPLE_MEASURES = ("first", "previous", "self", "duplicate", "induction", "punctuation")
WEIGHT_MEASURES = frozenset(MEASURES) - {"entropy", "distance"}   # sums of weights: in [0, 1]


def is_punctuation(token: str) -> bool:
    """True for a token made only of punctuation characters (Unicode category P…), ignoring spaces."""
    text = token.strip()
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def twin_masks(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(duplicate, induction)``, bool ``[query, key]``: key k < q holds the query's token (duplicate); key k < q
    follows a position holding the query's token (induction: ids[k−1] == ids[q], 1 ≤ k < q)."""
    ids = np.asarray(ids)
    n = len(ids)
    same = ids[:, None] == ids[None, :]
    earlier = np.tril(np.ones((n, n), dtype=bool), -1)
    duplicate = same & earlier
    induction = np.zeros((n, n), dtype=bool)
    induction[:, 1:] = same[:, :-1]
    return duplicate, induction & earlier


def per_query(w: np.ndarray, ids, punctuation) -> dict[str, np.ndarray]:
    """Every measure per query: ``{name: [layer, head, query]}`` float64 for queries 1…n−1, NaN where a measure is
    undefined (no earlier twin); plus the ``top_*`` shares as 0/1 (NaN where undefined).

    ``w``: ``[layer, head, n, n]``; ``ids``: ``[n]`` token ids; ``punctuation``: bool ``[n]`` (keys)."""
    w = np.asarray(w, dtype=np.float64)
    n = w.shape[-1]
    q = np.arange(1, n)
    rows = w[..., 1:, :]                                                        # (L, H, n-1, n)
    duplicate, induction = (m[1:] for m in twin_masks(ids))                      # (n-1, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(rows > 0, rows * np.log(rows), 0.0).sum(-1)
    top = rows.argmax(-1)                                                      # (L, H, n-1)
    has_dup, has_ind = duplicate.any(-1), induction.any(-1)
    out = {
        "entropy": entropy,
        "first": rows[..., 0],
        "previous": w[..., q, q - 1],
        "self": w[..., q, q],
        "duplicate": np.where(has_dup, (rows * duplicate).sum(-1), np.nan),
        "induction": np.where(has_ind, (rows * induction).sum(-1), np.nan),
        "punctuation": (rows * np.asarray(punctuation, dtype=bool)).sum(-1),
        "distance": (rows * np.abs(q[:, None] - np.arange(n)[None, :])).sum(-1),
        "top_first": (top == 0).astype(np.float64),
        "top_previous": (top == q - 1).astype(np.float64),
        "top_induction": np.where(has_ind, np.take_along_axis(
            np.broadcast_to(induction, rows.shape), top[..., None], -1)[..., 0], np.nan),
    }
    return out


def sums(values: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """``(sums, counts)`` of :func:`per_query`'s values over queries (NaN skipped): ``[layer, head]`` each."""
    total = {k: np.nansum(v, axis=-1) for k, v in values.items()}
    count = {k: (~np.isnan(v)).sum(-1).astype(np.int64) for k, v in values.items()}
    return total, count


def means(total: dict[str, np.ndarray], count: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each measure's mean over the queries where it is defined (NaN where none was)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return {k: np.where(count[k] > 0, total[k] / np.maximum(count[k], 1), np.nan) for k in total}
