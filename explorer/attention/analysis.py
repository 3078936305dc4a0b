"""What can be read off attention weights: per-head statistics, views of a matrix, and the minimal-pair flip.

Everything here takes arrays ``[..., query, key]`` (or an AttentionResult) and returns arrays or DataFrames.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer import maths
from explorer.attention.result import AttentionResult
from explorer.words.i18n import _, ngettext

# ---------------------------------------------------------------------------------------------- head statistics

STAT_NAMES = ("entropy", "max_weight", "mean_distance", "sink", "previous_token", "self")


def head_stat_arrays(weights: np.ndarray, special: np.ndarray | None = None,
                     names: tuple[str, ...] = STAT_NAMES) -> np.ndarray:
    """``[layer, head, len(names)]``: the statistics ``names`` (see ``head_stats``) of ``weights[layer, head,
    query, key]``, each a mean over queries. Computed in the weights' own float32 (sums are pairwise, so the
    error stays near 1e-7, far below the two decimals shown): the heatmap page computes them for every text."""
    w = np.asarray(weights, dtype=np.float32)
    n_layers, n_heads, n_q, n_k = w.shape
    sinks = np.zeros(n_k, dtype=bool)
    if special is not None and np.any(special):
        sinks[:] = np.asarray(special, dtype=bool)[:n_k]
    else:
        sinks[0] = True

    def mean_distance():
        distance = np.abs(np.arange(n_q)[:, None] - np.arange(n_k)[None, :]).astype(np.float32)
        return np.einsum("lhqk,qk->lhq", w, distance).mean(-1)   # no product array (76 MB for 512 tokens)

    def previous_token():
        if min(n_q, n_k) < 2:
            return np.zeros((n_layers, n_heads), np.float32)
        return np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(-1)

    def entropy():   # a layer at a time: its temporary is reused, where one for every layer would be new memory
        return np.stack([maths.entropy(layer, dtype=np.float32).mean(-1) for layer in w])

    compute = {"entropy": entropy,
               "max_weight": lambda: w.max(-1).mean(-1), "mean_distance": mean_distance,
               "sink": lambda: w[..., sinks].sum(-1).mean(-1), "previous_token": previous_token,
               "self": lambda: np.diagonal(w, axis1=-2, axis2=-1).mean(-1)}
    out = np.empty((n_layers, n_heads, len(names)), dtype=np.float32)
    for i, name in enumerate(names):
        out[..., i] = compute[name]()
    return out


def head_stats(weights: np.ndarray, special: np.ndarray | None = None) -> pd.DataFrame:
    """One row per (layer, head) of ``weights[layer, head, query, key]``; each number is a mean over queries.

    - entropy: nats of each query's distribution (0 = all weight on one key; ln n = uniform)
    - max_weight: the largest weight in the row
    - mean_distance: expected |query − key| in tokens
    - sink: weight on special tokens ([CLS], [SEP], …), or on the first token when there are none
    - previous_token: weight on the key just before the query (queries 1…n−1)
    - self: weight on the query's own position
    """
    stats = head_stat_arrays(weights, special)
    n_layers, n_heads = stats.shape[:2]
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    frame = pd.DataFrame({"layer": layer.ravel(), "head": head.ravel()})
    for i, name in enumerate(STAT_NAMES):
        frame[name] = stats[..., i].ravel().astype(np.float64)
    return frame


# ---------------------------------------------------------------------------------------------- views of a matrix

def without_special(weights: np.ndarray, special: np.ndarray, key_special: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop special-token rows and columns and renormalise each row to sum to 1.

    Returns ``(weights, kept_query_positions, kept_key_positions)``.
    """
    key_special = special if key_special is None else key_special
    rows, cols = np.flatnonzero(~np.asarray(special)), np.flatnonzero(~np.asarray(key_special))
    kept = np.asarray(weights)[..., rows, :][..., cols]
    total = kept.sum(-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0), rows, cols


def group_matrix(weights: np.ndarray, row_groups: list[int], col_groups: list[int]) -> np.ndarray:
    """Merge sub-tokens into words: rows averaged within a group, columns summed (rows still sum to 1).

    Groups are integers per position; -1 marks positions that stay on their own (special tokens).
    """
    def labels(groups):
        out, seen = [], {}
        for pos, g in enumerate(groups):
            key = ("w", g) if g >= 0 else ("t", pos)
            out.append(seen.setdefault(key, len(seen)))
        return np.array(out), len(seen)

    r, n_r = labels(row_groups)
    c, n_c = labels(col_groups)
    w = np.asarray(weights, dtype=np.float64)
    summed = np.zeros(w.shape[:-1] + (n_c,))
    for j in range(n_c):
        summed[..., j] = w[..., c == j].sum(-1)
    out = np.zeros(w.shape[:-2] + (n_r, n_c))
    for i in range(n_r):
        out[..., i, :] = summed[..., r == i, :].mean(-2)
    return out


def group_labels(tokens: list[str], groups: list[int], words: list[str]) -> list[str]:
    """Labels matching ``group_matrix``'s order: the word for a group, the token for a -1 position."""
    out, seen = [], set()
    for pos, g in enumerate(groups):
        if g < 0:
            out.append(tokens[pos])
        elif g not in seen:
            seen.add(g)
            out.append(words[g])
    return out


def rollout(weights: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): ``[layer, query, key]``, how much each input token reaches each
    position after 1…L layers, mixing in the residual stream as ``residual·I + (1−residual)·mean over heads``."""
    w = np.asarray(weights, dtype=np.float64).mean(1)  # (L, Q, K)
    eye = np.eye(w.shape[-1])
    out, acc = np.zeros_like(w), eye
    for layer in range(w.shape[0]):
        step = residual * eye + (1 - residual) * w[layer]
        step = step / step.sum(-1, keepdims=True)
        acc = step @ acc
        out[layer] = acc
    return out


# ---------------------------------------------------------------------------------------------- minimal pairs

def word_key(word: str) -> str:
    """How words are matched: lower case without punctuation ("It," matches "it"); "" for punctuation alone."""
    return re.sub(r"[^\w]", "", word.lower())


def _key_or_word(word: str) -> str:
    return word_key(word) or word.strip()   # a word that is only punctuation can still be asked for by itself


def find_word(result: AttentionResult, word: str, last: bool = False) -> int:
    """Index of the first (or last) word equal to ``word`` (case and punctuation ignored).

    Raises ValueError listing the text's words when there is none.
    """
    target = _key_or_word(word)
    found = [i for i, w in enumerate(result.words) if target and _key_or_word(w) == target]
    if found:
        return found[-1] if last else found[0]
    raise ValueError(_("{word} is not a word of {text}. Its words are: {words}.").format(
        word=repr(word), text=repr(result.text), words=", ".join(result.words)))


def word_positions(result: AttentionResult, word_index: int) -> list[int]:
    return [p for p, w in enumerate(result.word_ids) if w == word_index]


def query_rows(result: AttentionResult, query: str) -> list[int]:
    """Token positions of the last occurrence of the word ``query`` (the rows the flip page averages)."""
    return word_positions(result, find_word(result, query, last=True))


def leaned_candidate(result: AttentionResult, layer: int, head: int, query_rows: list[int],
                     candidates: list[str]) -> int:
    """Token position (its first token) of the candidate word that head (``layer``, ``head``) weights most from the
    query's rows, counted as ``flip`` counts it (rows averaged, the word's sub-tokens summed)."""
    row = result.weights[layer, head, query_rows].mean(0)   # (key,)
    words = [word_positions(result, find_word(result, c)) for c in candidates]
    return max(words, key=lambda positions: float(row[positions].sum()))[0]


@dataclass
class FlipResult:
    """Per head: attention from the query word to each candidate in text A and in text B.

    ``table`` columns: layer, head, ``A:<cand>``, ``B:<cand>`` per candidate, lean_a, lean_b (first candidate
    minus second), flip = lean_a − lean_b, flips (A leans to the first candidate and B to the second).
    ``query_sees_change`` is False when a causal model's query comes before the words that differ: its row is
    then identical in both texts, which ``message`` explains. ``changed``: the first differing token in A and in B.
    The result is shared by every session (``ui.cached.flip``): ``message`` is written when read, in the language of
    the session reading it.
    """
    query: str
    candidates: list[str]
    table: pd.DataFrame
    query_sees_change: bool
    first_difference: int
    changed: tuple[str, str] = ("", "")

    @property
    def message(self) -> str:
        """What the table says in one sentence (or why the query's row cannot change)."""
        c1, c2 = self.candidates[0], self.candidates[1]
        if not self.query_sees_change:
            return _("{query} comes before the first word that differs ({a} vs {b}). This model is causal: a token "
                     "only sees the tokens before it, so {query}'s attention is the same in both texts. Pick a query "
                     "after the change to see a difference.").format(query=repr(self.query),
                                                                      a=repr(self.changed[0]), b=repr(self.changed[1]))
        n = int(self.table["flips"].sum())
        if not n:
            return _("No head leans to {c1} in A and to {c2} in B.").format(c1=repr(c1), c2=repr(c2))
        return ngettext("{n} of {total} heads lean to {c1} in A and to {c2} in B.",   # English: "1 of 4 heads lean"
                        "{n} of {total} heads lean to {c1} in A and to {c2} in B.", n).format(
            n=n, total=len(self.table), c1=repr(c1), c2=repr(c2))


def flip(a: AttentionResult, b: AttentionResult, query: str, candidates: list[str]) -> FlipResult:
    """Minimal-pair analysis: how each head's attention from ``query`` to ``candidates`` changes from a to b.

    The query is the last occurrence of its word (so a decoder pair can ask a later "it"); each candidate is its
    first occurrence. Sub-tokens are merged into words: query rows averaged, candidate columns summed.
    """
    if len(candidates) < 2:
        raise ValueError(_("Pick at least two candidate words to compare."))
    diff = next((i for i, (x, y) in enumerate(zip(a.token_ids, b.token_ids)) if x != y),
                min(len(a.token_ids), len(b.token_ids)))
    rows = {}
    for label, res in (("A", a), ("B", b)):
        q_pos = word_positions(res, find_word(res, query, last=True))
        row = res.weights[:, :, q_pos, :].mean(2)  # (L, H, K): mean over the query's sub-tokens
        for cand in candidates:
            rows[f"{label}:{cand}"] = row[..., word_positions(res, find_word(res, cand))].sum(-1)
    last_query = max(word_positions(a, find_word(a, query, last=True)))
    sees = not (a.facts.causal and last_query < diff)
    n_layers, n_heads = a.weights.shape[:2]
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    table = pd.DataFrame({"layer": layer.ravel(), "head": head.ravel()})
    for key, values in rows.items():
        table[key] = values.ravel()
    c1, c2 = candidates[0], candidates[1]
    table["lean_a"] = table[f"A:{c1}"] - table[f"A:{c2}"]
    table["lean_b"] = table[f"B:{c1}"] - table[f"B:{c2}"]
    table["flip"] = table["lean_a"] - table["lean_b"]
    table["flips"] = (table["lean_a"] > 0) & (table["lean_b"] < 0)
    changed = (a.tokens[diff], b.tokens[diff]) if not sees else ("", "")
    return FlipResult(query, list(candidates), table, sees, diff, changed)
