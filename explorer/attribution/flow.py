"""Attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers").

The layers' attention, mixed with the residual stream as in rollout (``residual·I + (1−residual)·mean over
heads``, each row renormalised), is read as a graph: node ``(l, i)`` is token i after l layers (l = 0 the input),
and an edge from ``(l+1, i)`` down to ``(l, j)`` has capacity ``A_l[i, j]``. The flow of input token j into
position p is the maximum flow from ``(L, p)`` to ``(0, j)``. Rollout multiplies the layers' matrices (every path
counts, weighted by its product); flow asks how much can get through at once when every edge has a capacity, so a
single wide path cannot be counted twice.

One maximum flow per input token on a graph of ``(L+1)·T`` nodes and up to ``L·T²`` edges, so the work grows as
``L·T³``: networkx (pure Python; shortest augmenting paths on one residual network reused for every token) takes
~1 s for SmolLM2's 30 layers × 21 tokens on a busy 2-core machine. ``max_tokens(n_layers)`` bounds it (~28 tokens
for 30 layers, ~48 for 6); past the bound the caller shows a note instead of the flow.
"""
from __future__ import annotations

import os

import networkx as nx
import numpy as np
from networkx.algorithms.flow import build_residual_network, shortest_augmenting_path

from explorer.words.i18n import N_, Later

BUDGET = int(os.environ.get("EXPLORER_FLOW_BUDGET", str(30 * 28 ** 3)))   # layers × tokens³


def max_tokens(n_layers: int) -> int:
    """The longest input (in tokens) whose flow is computed for a model of ``n_layers`` layers."""
    return int(round((BUDGET / max(n_layers, 1)) ** (1 / 3)))


def mixed_layers(weights: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """``[layer, query, key]``: each layer's mean over heads mixed with the identity, rows summing to 1 (the same
    steps ``analysis.rollout`` multiplies). ``weights``: ``[layer, head, query, key]``."""
    w = np.asarray(weights, dtype=np.float64).mean(1)
    step = residual * np.eye(w.shape[-1]) + (1 - residual) * w
    return step / step.sum(-1, keepdims=True)


def flow_graph(steps: np.ndarray, eps: float = 0.0) -> nx.DiGraph:
    """The layered graph of ``steps`` (``[layer, query, key]``): edges ``(l+1, i) → (l, j)`` with capacity
    ``steps[l, i, j]`` (edges of capacity ≤ ``eps`` left out: a masked key carries nothing)."""
    n_layers = steps.shape[0]
    graph = nx.DiGraph()
    for layer in range(n_layers):
        rows, cols = np.nonzero(steps[layer] > eps)
        graph.add_edges_from(((layer + 1, int(i)), (layer, int(j)), {"capacity": float(steps[layer, i, j])})
                             for i, j in zip(rows, cols))
    return graph


def attention_flow(weights: np.ndarray, positions: list[int], residual: float = 0.5) -> np.ndarray:
    """``(key,)``: the maximum flow from the top-layer node of each position in ``positions`` down to each input
    token, averaged over ``positions`` (the query word's tokens for an encoder, the last token for a decoder).
    Each value lies in [0, 1]: one unit of capacity leaves every node."""
    steps = mixed_layers(weights, residual)
    n_layers, n = steps.shape[0], steps.shape[-1]
    if n > max_tokens(n_layers):
        raise ValueError(Later(N_("Attention flow is computed for inputs of up to {most} tokens on a model of {layers} "
                                  "layers (one maximum-flow problem per token; longer takes too long); this input has "
                                  "{n}. The other methods are shown without it."), most=max_tokens(n_layers),
                               layers=n_layers, n=n))
    graph = flow_graph(steps)
    residual_net = build_residual_network(graph, "capacity")
    out = np.zeros(n)
    for p in positions:
        for j in range(n):
            source, sink = (n_layers, int(p)), (0, j)
            if source in graph and sink in graph:
                found = shortest_augmenting_path(graph, source, sink, residual=residual_net)
                out[j] += found.graph["flow_value"]
    return out / max(len(positions), 1)
