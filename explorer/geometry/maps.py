"""One head's joint map: its aligned queries and keys projected together, and what a click on a query shows.

A map draws m tokens of the corpus (``HeadMap.tokens``: all of them for PCA, an even sample of ``TSNE_TOKENS``
for t-SNE, whose cost grows with the points): rows ``0 … m-1`` of ``xy`` are their queries, rows ``m … 2m-1``
their keys. A query lies near the keys it attends to: their dot product is large.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.geometry.align import Alignment, align, sentence_weights, weight_change
from explorer.geometry.corpus_pass import CorpusPass
from explorer.geometry.project import fit_pca, pca_transform, project

TSNE_TOKENS = 1500   # t-SNE maps this many tokens (3,000 points), evenly spread over the corpus


@dataclass(frozen=True)
class HeadMap:
    """``tokens``: the m token indices drawn; ``xy``: float32 ``[2m, 2]``, their queries then their keys;
    ``alignment``: the shift and scale applied (computed on every token); ``max_change``: the largest attention
    weight difference they caused over the whole corpus; ``pca``: the fitted mean and directions of a PCA map (so
    other points can be placed on it, ``overlay.place``), None for t-SNE."""
    layer: int
    head: int
    method: str
    tokens: np.ndarray
    xy: np.ndarray
    alignment: Alignment
    max_change: float
    pca: tuple[np.ndarray, np.ndarray] | None = None


def head_map(run: CorpusPass, layer: int, head: int, method: str = "pca") -> HeadMap:
    """The joint map of query head ``head`` of ``layer`` (with the key head it reads) by ``method``."""
    q, k = run.head_qk(layer, head)                                 # (n, d_head) each
    q2, k2, info = align(q, k)
    change = weight_change(q, k, q2, k2, run.starts, float(run.scaling[layer]), run.facts.causal)
    tokens = np.arange(run.n_points) if method == "pca" else evenly(run.n_points, TSNE_TOKENS)
    points = np.concatenate([q2[tokens], k2[tokens]])
    fit = fit_pca(points) if method == "pca" else None
    xy = pca_transform(points, fit) if fit is not None else project(points, method)
    xy.setflags(write=False)
    return HeadMap(layer, head, method, tokens, xy, info, change, fit)


def evenly(n: int, most: int) -> np.ndarray:
    """At most ``most`` of the indices ``0 … n-1``, evenly spread, in order."""
    return np.unique(np.linspace(0, n - 1, min(most, n)).round().astype(np.int64))


def top_keys(run: CorpusPass, layer: int, head: int, point: int, top: int = 3,
             least: float = 0.01) -> list[tuple[int, float]]:
    """The keys query ``point`` (a token index) gives most weight to, as ``(token index, weight)`` pairs, largest
    first, at most ``top`` of them and only those with at least ``least`` of the weight (the largest always);
    recomputed from the stored queries and keys of its sentence."""
    s = int(run.sentence[point])
    a, b = int(run.starts[s]), int(run.starts[s + 1])
    q, k = run.head_qk(layer, head)
    row = sentence_weights(q[a:b], k[a:b], float(run.scaling[layer]), run.facts.causal)[point - a]
    order = np.argsort(-row, kind="stable")[:top]
    return [(a + int(i), float(row[i])) for n, i in enumerate(order) if n == 0 or row[i] >= least]


def context(run: CorpusPass, point: int, around: int = 2) -> str:
    """The token at ``point`` in its sentence, a few tokens either side: ``... sat on [the] mat ...`` (ASCII dots:
    a map sends thousands of these, and JSON would write each "…" as six characters)."""
    s = int(run.sentence[point])
    a, b = int(run.starts[s]), int(run.starts[s + 1])
    left, right = max(a, point - around), min(b, point + around + 1)
    words = [run.tokens[i] if i != point else f"[{run.tokens[i]}]" for i in range(left, right)]
    return ("... " if left > a else "") + " ".join(words) + (" ..." if right < b else "")


def layer_maps(run: CorpusPass, layer: int, method: str = "pca") -> list[HeadMap]:
    """The map of every head of ``layer`` (the matrix view)."""
    return [head_map(run, layer, h, method) for h in range(run.facts.n_heads)]
