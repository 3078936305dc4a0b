"""Joint 2-D projections of a head's aligned queries and keys: PCA (instant) and t-SNE (scikit-learn).

Both take one array of points ``[n, d]`` (queries stacked over keys) and return float32 ``[n, 2]``; both are
deterministic (fixed signs, fixed seed), so a cached map and a fresh one agree.

t-SNE is scikit-learn's Barnes-Hut ``TSNE``. Measured on this project's busy 2-core machine on a real head's 3,000
aligned points (1,500 tokens of the corpus), it needed 2.9 s of CPU for 250 iterations against openTSNE's 5.4 s
(one thread; 9–10 s with two), whose FFT gradients only pay off for far more points (docs/benchmarks.md). The
points are first reduced to ``PCA_DIMS`` dimensions by PCA, which keeps the neighbourhoods and makes the neighbour
search cheap; ``ITERATIONS`` = scikit-learn's 250 early-exaggeration steps, then 150 plain ones.
"""
from __future__ import annotations

import numpy as np

from explorer.words.i18n import N_

METHODS = {"pca": N_("PCA (instant)"), "tsne": N_("t-SNE (a few seconds, then cached)")}   # English: _() where shown
NAMES = {"pca": "PCA", "tsne": "t-SNE"}   # each method's own name
PCA_DIMS = 30
PERPLEXITY = 20
ITERATIONS = 400


def fit_pca(points: np.ndarray, dims: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The mean ``[d]`` of ``points [n, d]`` and its first ``dims`` principal directions ``[dims, d]`` (float64,
    unit length, widest first), each signed so that its largest-magnitude coordinate is positive: the picture
    never flips. Fewer rows than ``dims`` when the points have fewer dimensions."""
    x = np.asarray(points, dtype=np.float64)
    mean = x.mean(axis=0)
    x = x - mean
    variance, vectors = np.linalg.eigh(x.T @ x)                     # d × d: cheaper than an SVD of n × d
    vt = vectors[:, np.argsort(-variance, kind="stable")[:dims]].T   # rows: directions, widest first
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(axis=1)])
    return mean, vt * signs[:, None]


def pca_transform(points: np.ndarray, fit: tuple[np.ndarray, np.ndarray], dims: int = 2) -> np.ndarray:
    """``points [n, d]`` placed by a fitted PCA (``fit_pca``'s mean and directions), float32 ``[n, dims]``: the
    same linear map for the points it was fitted on and for new ones."""
    mean, directions = fit
    out = (np.asarray(points, dtype=np.float64) - mean) @ directions.T
    if out.shape[1] < dims:                                         # fewer dimensions than asked: pad with 0
        out = np.pad(out, ((0, 0), (0, dims - out.shape[1])))
    return out.astype(np.float32)


def pca(points: np.ndarray, dims: int = 2) -> np.ndarray:
    """The first ``dims`` principal components of ``points [n, d]``, float32 ``[n, dims]`` (signs fixed)."""
    return pca_transform(points, fit_pca(points, dims), dims)


def tsne(points: np.ndarray, seed: int = 0, threads: int = 2) -> np.ndarray:
    """A t-SNE embedding of ``points [n, d]`` in 2-D, float32 ``[n, 2]`` (scikit-learn, Barnes-Hut)."""
    from sklearn.manifold import TSNE

    x = pca(points, min(PCA_DIMS, points.shape[1])).astype(np.float64)
    perplexity = min(PERPLEXITY, max(1.0, (len(x) - 1) / 3.0))
    return TSNE(n_components=2, perplexity=perplexity, max_iter=ITERATIONS, init="pca", learning_rate="auto",
                random_state=seed, n_jobs=threads).fit_transform(x).astype(np.float32)


def project(points: np.ndarray, method: str) -> np.ndarray:
    """``pca`` or ``tsne`` of ``points`` by name (a key of ``METHODS``)."""
    if method not in METHODS:
        raise ValueError(f"Unknown projection {method!r}; use one of {', '.join(METHODS)}.")
    return pca(points) if method == "pca" else tsne(points)
