"""Attribution patching (Nanda 2023; Syed et al. 2023): the first-order estimate of every exact patch at once.

Patching activation a of the run's text with the other text's a′ moves the metric by about
``(a′ − a) · ∂metric/∂a``, the gradient taken on the run's text. One forward and one backward pass give it for
every layer × position of the residual stream and every head (summed over a head's output at each position); the
other text's activations are already cached by ``prepare``. Normalised as the exact grids:
``normalise(metric_run + estimate)``. The approximation is not the truth: ``compare`` puts it beside an exact grid.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.patching import hooks
from explorer.patching.contrast import Contrast
from explorer.patching.grids import Patched, check_direction, position_labels


@dataclass
class Attribution:
    """The estimate of each grid. ``residual`` ``[layer, position]``, ``heads`` ``[layer, head]`` (all positions)
    and ``heads_by_position`` ``[layer, position, head]``, normalised (0 = corrupted, 1 = clean); ``*_raw``: the
    estimated metric itself; ``seconds``: wall time of the forward and backward pass."""
    direction: str
    residual: np.ndarray
    heads: np.ndarray
    heads_by_position: np.ndarray
    residual_raw: np.ndarray
    heads_raw: np.ndarray
    positions: list[str]
    seconds: float


@dataclass
class Agreement:
    """An exact grid beside its estimate: ``pearson`` and ``spearman`` correlation of the normalised cells (NaN
    when one grid is constant), and the cells where they differ most: dicts of ``row``, ``column``, ``exact``,
    ``approx``, ``gap`` (approx − exact), largest |gap| first."""
    granularity: str
    pearson: float
    spearman: float
    disagree: list[dict] = field(default_factory=list)


def estimate(delta: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """The first-order change of the metric per cell: ``Σ_d delta[..., d] · grad[..., d]`` in float64, where
    ``delta`` = the other text's activation − the run's and ``grad`` = ∂metric/∂activation on the run."""
    return (delta.double() * grad.double()).sum(-1)


def preview(contrast: Contrast, direction: str = "denoise") -> Attribution:
    """The attribution estimate of the residual grid and the heads grid in ``direction`` (one forward and one
    backward pass on the run's text)."""
    c = contrast
    base, source = check_direction(direction)
    start = time.perf_counter()
    p, n = c.parts, c.n_heads
    resid, z = [None] * c.n_layers, [None] * c.n_layers

    def keep_input(i):
        def fn(x):
            if i == 0 and not x.requires_grad:   # weights frozen: start the graph at the first block's input
                x = x.detach().requires_grad_(True)
            resid[i] = x
            return x
        return fn

    def keep_heads(i):
        def fn(module, args):
            z[i] = args[0]
        return fn
    block_pre = [(layer, hooks.block_input_hook(keep_input(i))) for i, layer in enumerate(p.layers)]
    pre = [(proj, keep_heads(i)) for i, proj in enumerate(p.out_projs)]
    inputs = c.runs[base].inputs
    with c.loaded.lock, torch.enable_grad(), hooks.hooks(pre, (), block_pre):
        out = c.loaded.model(**inputs, use_cache=False, output_attentions=c.kind == "encoder")
        records = [{"weights": a} for a in out.attentions] if c.kind == "encoder" else []
        metric = c.metric(out.last_hidden_state, records, 0)[0]
        wanted = [(i, x) for i, x in enumerate(resid + z) if x is not None and x.requires_grad]
        grads = torch.autograd.grad(metric, [x for _i, x in wanted], allow_unused=True)
    grad = dict(zip([i for i, _x in wanted], grads))
    T = c.n_tokens
    res, heads_pos = np.zeros((c.n_layers, T)), np.zeros((c.n_layers, T, n))
    with torch.no_grad():
        for layer in range(c.n_layers):
            g = grad.get(layer)
            if g is not None:
                delta = c.runs[source].resid[layer][0] - c.runs[base].resid[layer][0]
                res[layer] = estimate(delta, g[0]).cpu().numpy()
            g = grad.get(c.n_layers + layer)
            if g is not None:
                delta = c.runs[source].z[layer][0] - c.runs[base].z[layer][0]
                heads_pos[layer] = estimate(hooks.head_columns(delta, n), hooks.head_columns(g[0], n)).cpu().numpy()
    here = c.runs[base].metric
    res_raw, heads_raw = here + res, here + heads_pos.sum(1)
    return Attribution(direction, c.normalise(res_raw), c.normalise(heads_raw), c.normalise(here + heads_pos),
                       res_raw, heads_raw, position_labels(c, base), time.perf_counter() - start)


def estimate_of(exact: Patched, approx) -> np.ndarray:
    """The estimated grid matching ``exact``: an ``Attribution``'s residual, heads or heads-at-a-position grid,
    or an array of the same shape."""
    if isinstance(approx, Attribution):
        if approx.direction != exact.direction:
            raise ValueError(f"The estimate is for {approx.direction}, the exact grid for {exact.direction}.")
        grids = {"residual": approx.residual, "heads": approx.heads}
        if exact.granularity == "heads_at":
            return approx.heads_by_position[:, exact.position]
        if exact.granularity not in grids:
            raise ValueError(f"Attribution patching estimates the residual and heads grids, not {exact.granularity}.")
        return grids[exact.granularity]
    return np.asarray(approx, dtype=np.float64)


def compare(exact: Patched, approx, k: int = 5) -> Agreement:
    """Pearson and Spearman correlation between an exact grid and its estimate (SciPy), and the ``k`` cells where
    they differ most."""
    from scipy.stats import pearsonr, spearmanr
    est = estimate_of(exact, approx)
    if est.shape != exact.values.shape:
        raise ValueError(f"Shapes differ: {est.shape} vs {exact.values.shape}")
    a, b = exact.values.ravel(), est.ravel()
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    flat = len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0
    r = float("nan") if flat else float(pearsonr(a, b).statistic)
    rho = float("nan") if flat else float(spearmanr(a, b).statistic)
    gap = np.nan_to_num(est - exact.values, nan=0.0)
    order = np.argsort(-np.abs(gap), axis=None, kind="stable")[:k]
    cells = []
    for flat_i in order:
        row, col = np.unravel_index(flat_i, gap.shape)
        cells.append(dict(row=int(row), column=int(col), row_label=exact.rows[row],
                          column_label=exact.columns[col], exact=float(exact.values[row, col]),
                          approx=float(est[row, col]), gap=float(gap[row, col])))
    return Agreement(exact.granularity, r, rho, cells)
