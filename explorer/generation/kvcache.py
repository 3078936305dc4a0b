"""Why the key/value cache makes generation fast, and the check that it changes nothing.

Without a cache, every new token would recompute the keys and values of the whole sequence; with it, a step
computes them for one token and appends them. The cache holds, for each layer, the keys and the values of every
token so far for each key/value head: layers × kv heads × tokens × d_head × 2 numbers.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from explorer.model import families
from explorer.model.capture import recording
from explorer.model.loading import LoadedModel


def cache_bytes(n_layers: int, n_kv_heads: int, tokens: int | np.ndarray, d_head: int, dtype_bytes: int):
    """Bytes of a key/value cache holding ``tokens`` tokens: layers × kv heads × tokens × d_head × 2 × bytes."""
    return n_layers * n_kv_heads * np.asarray(tokens) * d_head * 2 * dtype_bytes


def cache_growth(gen) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens held, bytes)`` after each step of ``gen``: step s has cached the prompt and s more tokens."""
    held = gen.n_prompt + np.arange(gen.steps)
    return held, cache_bytes(gen.n_layers, gen.n_kv_heads, held, gen.d_head, gen.dtype_bytes)


def full_forward(loaded: LoadedModel, ids: list[int]) -> tuple[np.ndarray, float]:
    """One forward pass over ``ids`` without a cache: ``weights[layer, head, query, key]`` (float32) and its
    milliseconds, what every step would cost if nothing were cached."""
    x = torch.tensor([ids], device=loaded.device)
    own = not families.captured(loaded.model)   # attention in the family's own code: read the returned weights
    with recording() as records, loaded.lock, torch.inference_mode():
        start = time.perf_counter()
        out = loaded.model(input_ids=x, use_cache=False, **({"output_attentions": True} if own else {}))
        ms = (time.perf_counter() - start) * 1e3
    weights = out.attentions if own else [r["weights"] for r in records]
    return np.stack([w[0].float().cpu().numpy() for w in weights]), ms
