"""Attention inputs the bertviz tests share (unit: the pages as text; browser: the pages drawn in Chromium)."""
import numpy as np

HOSTILE = [
    "[CLS]",
    "<script>alert(1)</script>",
    '<img src=x onerror="window.__xss=1">',
    "</script><img src=x onerror=window.__xss=2>",   # no quotes, so JSON leaves it as it is
    "<!--<script>",
    "&amp; &lt;b&gt;",
    "line\u2028sep",
    "'\"`${window.__xss=3}`",
    "[SEP]",
]


def random_weights(n_layers, n_heads, n_query, n_key=None, seed=0, causal=False):
    """Softmax rows of random scores: float32 ``[layer, head, query, key]``, each row sums to 1."""
    n_key = n_query if n_key is None else n_key
    x = np.random.default_rng(seed).normal(size=(n_layers, n_heads, n_query, n_key)) * 3
    if causal:
        x = np.where(np.tril(np.ones((n_query, n_key), bool)), x, -np.inf)
    w = np.exp(x - x.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)
