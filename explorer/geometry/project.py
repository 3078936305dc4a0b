"""Joint 2-D projections of a head's aligned queries and keys: PCA (instant) and t-SNE (openTSNE).

Both take one array of points ``[n, d]`` (queries stacked over keys) and return float32 ``[n, 2]``; both are
deterministic (fixed signs, fixed seed), so a cached map and a fresh one agree.

t-SNE is openTSNE's FFT-accelerated version. Measured on this project's busy 2-core machine for 5,600 points
(two heads' worth of ~2,800 tokens), openTSNE needed 9 s of CPU and scikit-learn's Barnes-Hut TSNE 15–16 s
(docs/benchmarks.md); openTSNE's cost grows linearly with the points, and it lets us set the iterations, so the
map uses fewer than scikit-learn's minimum of 250. The points are first reduced to ``PCA_DIMS`` dimensions by PCA,
which keeps the neighbourhoods and makes the neighbour search cheap.
"""
from __future__ import annotations

import numpy as np

METHODS = {"pca": "PCA (instant)", "tsne": "t-SNE (a few seconds, then cached)"}
PCA_DIMS = 30
PERPLEXITY = 20
EXAGGERATED, NORMAL = 75, 150   # t-SNE iterations: early exaggeration (clusters form), then plain


def pca(points: np.ndarray, dims: int = 2) -> np.ndarray:
    """The first ``dims`` principal components of ``points [n, d]``, float32 ``[n, dims]``.

    Signs are fixed (each component's largest-magnitude coordinate is positive), so the picture never flips."""
    x = np.asarray(points, dtype=np.float64)
    x = x - x.mean(axis=0)
    variance, vectors = np.linalg.eigh(x.T @ x)                     # d × d: cheaper than an SVD of n × d
    vt = vectors[:, np.argsort(-variance, kind="stable")[:dims]].T   # rows: directions, widest first
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(axis=1)])
    out = x @ (vt * signs[:, None]).T
    if out.shape[1] < dims:                                         # fewer dimensions than asked: pad with 0
        out = np.pad(out, ((0, 0), (0, dims - out.shape[1])))
    return out.astype(np.float32)


def tsne(points: np.ndarray, seed: int = 0, threads: int = 2) -> np.ndarray:
    """A t-SNE embedding of ``points [n, d]`` in 2-D, float32 ``[n, 2]`` (openTSNE, FFT gradients)."""
    import openTSNE

    x = pca(points, min(PCA_DIMS, points.shape[1])).astype(np.float64)
    perplexity = min(PERPLEXITY, max(2.0, (len(x) - 1) / 3.0))
    affinities = openTSNE.affinity.PerplexityBasedNN(x, perplexity=perplexity, n_jobs=threads, random_state=seed,
                                                     method="annoy" if len(x) > 1000 else "exact")
    start = openTSNE.initialization.rescale(x[:, :2].copy())
    embedding = openTSNE.TSNEEmbedding(start, affinities, n_jobs=threads, negative_gradient_method="fft",
                                       random_state=seed)
    embedding = embedding.optimize(n_iter=EXAGGERATED, exaggeration=12, momentum=0.5)
    embedding = embedding.optimize(n_iter=NORMAL, momentum=0.8)
    return np.asarray(embedding, dtype=np.float32)


def project(points: np.ndarray, method: str) -> np.ndarray:
    """``pca`` or ``tsne`` of ``points`` by name (a key of ``METHODS``)."""
    if method not in METHODS:
        raise ValueError(f"Unknown projection {method!r}; use one of {', '.join(METHODS)}.")
    return pca(points) if method == "pca" else tsne(points)
