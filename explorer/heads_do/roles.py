"""Head roles: a few scores that name what a head does, and a 2-D map of heads that attend alike.

Scores per head (each a mean over queries, in [0, 1]):
- previous_token: weight on the key just before the query;
- first_token: weight on the first position (a "sink": [CLS] or the first word);
- broad: entropy of the row over the keys it can see, divided by ln(that number) (1 = uniform);
- duplicate / induction (Olsson et al. 2022): on a random token sequence repeated twice, a query in the second
  copy puts weight on the same token in the first copy (duplicate) or on the token right after it (induction).
Similar heads: Jensen–Shannon distance between two heads' rows, averaged over queries and texts, then classical
multidimensional scaling to 2-D.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from explorer.attention.result import extract
from explorer.model import families
from explorer.model.loading import LoadedModel

ROLE_NAMES = ("previous_token", "first_token", "broad", "duplicate", "induction")
TEXTS = ("The animal didn't cross the street because it was too tired.",
         "The cat sat on the mat and looked at the dog.",
         "When Mary and John went to the store, John gave a drink to Mary.")


# ---------------------------------------------------------------------------------------------- scores of arrays

def previous_token_score(w: np.ndarray) -> np.ndarray:
    """``[..., query, key]`` -> ``[...]``: mean over queries 1…n−1 of the weight on key i−1."""
    return np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(-1)


def first_token_score(w: np.ndarray) -> np.ndarray:
    return w[..., :, 0].mean(-1)


def broad_score(w: np.ndarray, causal: bool) -> np.ndarray:
    """Normalised entropy: H(row) / ln(visible keys), averaged over rows that see at least two keys."""
    n_q, n_k = w.shape[-2:]
    visible = np.arange(1, n_q + 1) + (n_k - n_q) if causal else np.full(n_q, n_k)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(w > 0, w * np.log(w), 0.0).sum(-1)            # (..., query)
    rows = visible > 1
    return (ent[..., rows] / np.log(visible[rows])).mean(-1)


def repeat_scores(w: np.ndarray, n: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """``(duplicate, induction)`` for a sequence whose tokens ``offset … offset+2n−1`` are n random tokens twice.

    A query at ``offset + n + k`` (second copy) has its earlier twin at ``offset + k`` (duplicate) and that
    twin's successor at ``offset + k + 1`` (induction); scores are mean weights over k = 0…n−1.
    """
    k = np.arange(n)
    queries = offset + n + k
    return w[..., queries, offset + k].mean(-1), w[..., queries, offset + k + 1].mean(-1)


# ---------------------------------------------------------------------------------------------- running the probes

def repeated_tokens(tokenizer, n: int = 20, seed: int = 0) -> tuple[list[int], int]:
    """``(ids, offset)``: n random non-special token ids twice, with the tokenizer's special tokens around them
    (``offset`` = where the first copy starts). Drawn without repeats when the vocabulary allows."""
    special = set(tokenizer.all_special_ids)
    pool = np.array([i for i in range(len(tokenizer)) if i not in special])
    rng = np.random.default_rng(seed)
    chosen = rng.choice(pool, size=n, replace=len(pool) < n).tolist()
    marked, plain = tokenizer("a")["input_ids"], tokenizer("a", add_special_tokens=False)["input_ids"]
    at = next(i for i in range(len(marked)) if marked[i:i + len(plain)] == plain)   # specials around a word
    return marked[:at] + chosen + chosen + marked[at + len(plain):], at


def attention_of_ids(loaded: LoadedModel, ids: list[int]) -> np.ndarray:
    """``[layer, head, query, key]`` float32 attention for a given token id sequence (no text round trip)."""
    with loaded.lock, torch.inference_mode():
        out = loaded.model(input_ids=torch.tensor([ids], device=loaded.device), output_attentions=True,
                           use_cache=False)
    return np.stack([a[0].float().cpu().numpy() for a in out.attentions])


def _frame(arrays: dict[str, np.ndarray]) -> pd.DataFrame:
    n_layers, n_heads = next(iter(arrays.values())).shape
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    frame = pd.DataFrame({"layer": layer.ravel(), "head": head.ravel()})
    for name, values in arrays.items():
        frame[name] = values.ravel().astype(np.float64)
    return frame


def head_roles(loaded: LoadedModel, texts=TEXTS, n: int = 20, seed: int = 0) -> pd.DataFrame:
    """One row per (layer, head): the ROLE_NAMES scores. previous_token, first_token and broad are averaged over
    ``texts``; duplicate and induction come from ``n`` random tokens repeated twice (fixed ``seed``)."""
    families.require(loaded.model, "roles")
    causal = loaded.kind == "decoder"
    per_text = []
    for text in texts:
        w = extract(loaded, text).weights
        per_text.append(np.stack([previous_token_score(w), first_token_score(w), broad_score(w, causal)]))
    prev, first, broad = np.mean(per_text, axis=0)
    ids, offset = repeated_tokens(loaded.tokenizer, n, seed)
    duplicate, induction = repeat_scores(attention_of_ids(loaded, ids), n, offset)
    return _frame({"previous_token": prev, "first_token": first, "broad": broad, "duplicate": duplicate,
                       "induction": induction})


# ---------------------------------------------------------------------------------------------- similar heads

def js_distance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen–Shannon distance (base 2, in [0, 1]) between distributions along the last axis (broadcasts)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    m = (p + q) / 2

    def kl(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a > 0, a * np.log2(a / m), 0.0).sum(-1)
    return np.sqrt(np.clip((kl(p) + kl(q)) / 2, 0.0, None))


def head_distances(weights: list[np.ndarray]) -> np.ndarray:
    """``[N, N]`` (N = layers·heads, row-major): mean over texts and queries of the JS distance between two heads'
    rows. ``weights``: one ``[layer, head, query, key]`` array per text."""
    total = None
    for w in weights:
        flat = np.asarray(w, dtype=np.float64).reshape(-1, *w.shape[-2:])     # (N, Q, K)
        d = np.stack([js_distance(flat[a], flat).mean(-1) for a in range(len(flat))])
        total = d if total is None else total + d
    out = total / len(weights)
    return (out + out.T) / 2


def classical_mds(distances: np.ndarray, dims: int = 2) -> np.ndarray:
    """``[N, dims]`` coordinates whose Euclidean distances approximate ``distances`` (Torgerson's method:
    double-centre the squared distances, keep the top eigenvectors scaled by √eigenvalue).

    An eigenvalue within the eigensolver's rounding of 0 (``n · eps · largest``, the backward-error bound of a
    symmetric eigensolver, times 10) is taken as 0: otherwise its square root, ~1e-7 on one BLAS and ~1e-9 on
    another, would give points on a line a small second coordinate that depends on the machine."""
    d2 = np.asarray(distances, dtype=np.float64) ** 2
    n = len(d2)
    centre = np.eye(n) - np.ones((n, n)) / n
    gram = -0.5 * centre @ d2 @ centre
    values, vectors = np.linalg.eigh(gram)
    noise = 10 * n * np.finfo(np.float64).eps * np.abs(values).max(initial=0.0)
    values = np.where(values > noise, values, 0.0)
    top = np.argsort(values)[::-1][:dims]
    return vectors[:, top] * np.sqrt(values[top])


def similar_heads(loaded: LoadedModel, texts=TEXTS) -> pd.DataFrame:
    """One row per (layer, head) with 2-D MDS coordinates ``x``, ``y``: heads close together attend alike."""
    weights = [extract(loaded, text).weights for text in texts]
    coords = classical_mds(head_distances(weights))
    n_layers, n_heads = weights[0].shape[:2]
    return _frame({"x": coords[:, 0].reshape(n_layers, n_heads), "y": coords[:, 1].reshape(n_layers, n_heads)})
