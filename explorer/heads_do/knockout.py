"""What a head does, found by removing it: knock heads out and watch a measure of the model's answer move.

A head is knocked out with a forward pre-hook on its layer's attention output projection (where it lives, per
model family, is written in ``explorer.model.families``: ``o_proj`` for Llama, ``attention.output.dense`` for
BERT, ``attn.c_proj`` for GPT-2…): the hook replaces that head's columns
``h*d_head:(h+1)*d_head`` of the projection's input by 0 ("zero") or by their mean over the positions of a
reference run ("mean"). The measures of a minimal pair come from ``explorer.heads_do.measures``:
next-token log-odds for decoders, a cosine difference of final states for encoders.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.heads_do.measures import Measure, PairMeasure, Probe, make_probe, pair_notes
from explorer.model import anatomy, families
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import _

Progress = Callable[[float, str], None]
attention_layers = anatomy.attention_layers   # where heads live: explorer.model.anatomy finds them, per family
n_heads_of = families.n_heads


def _head_hook(n_heads: int, keep: torch.Tensor, fill: torch.Tensor | None):
    """Pre-hook: where ``keep[row, head]`` (bool, rows 1 or batch) is False, that head's columns become ``fill``
    (``(rows, width)``) or 0. ``torch.where`` leaves kept columns bit-for-bit unchanged."""
    def hook(module, args):
        x = args[0]                                            # (batch, tokens, n_heads * d_head)
        mask = keep.to(x.device).repeat_interleave(x.shape[-1] // n_heads, dim=-1)[:, None, :]
        other = torch.zeros((), dtype=x.dtype, device=x.device) if fill is None else fill.to(x)[:, None, :]
        return (torch.where(mask, x, other), *args[1:])
    return hook


def _install(model, plan: dict[int, torch.Tensor], fills: dict[int, torch.Tensor] | None) -> list:
    _layers, projs = attention_layers(model)
    n = n_heads_of(model)
    return [projs[layer].register_forward_pre_hook(_head_hook(n, keep, None if fills is None else fills[layer]))
            for layer, keep in plan.items()]


@contextmanager
def knockout(model: torch.nn.Module, heads: dict[int, list[int]], mode: str = "zero", means=None):
    """Within the block, the heads ``{layer: [head, …]}`` are knocked out in every forward pass of ``model``.

    ``mode="mean"`` replaces a head's output by ``means[layer]`` (``(n_heads * d_head,)``, see ``head_means``)
    instead of 0. Knocking out nothing installs nothing: outputs stay exactly the model's.
    """
    families.require(model, "knockout")
    if mode not in {"zero", "mean"}:
        raise ValueError(f"mode must be 'zero' or 'mean', not {mode!r}")
    if mode == "mean" and means is None:
        raise ValueError("Mean ablation needs the heads' means of a reference run: pass means=head_means(...).")
    n = n_heads_of(model)
    plan = {}
    for layer, hs in heads.items():
        if len(hs):
            keep = torch.ones(1, n, dtype=torch.bool)
            keep[0, list(hs)] = False
            plan[int(layer)] = keep
    fills = None if mode == "zero" else {layer: torch.as_tensor(means[layer])[None] for layer in plan}
    handles = _install(model, plan, fills)
    try:
        yield
    finally:
        for h in handles:
            h.remove()


# ---------------------------------------------------------------------------------------------- one clean run

@dataclass
class _Clean:
    layer_out: list          # each layer's output (batch 1), replayed for layers before a knocked-out one
    proj_in: list            # each layer's (1, tokens, n_heads * d_head) projection input
    hidden: torch.Tensor     # (1, tokens, d_model) final hidden state


def _clean_run(loaded: LoadedModel, probe: Probe) -> _Clean:
    layers, projs = attention_layers(loaded.model)
    outs, ins = [None] * len(layers), [None] * len(layers)
    handles = [layer.register_forward_hook(lambda m, a, o, i=i: outs.__setitem__(i, o)) for i, layer in
               enumerate(layers)]
    handles += [p.register_forward_pre_hook(lambda m, a, i=i: ins.__setitem__(i, a[0])) for i, p in enumerate(projs)]
    try:
        out = loaded.model(**probe.inputs, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return _Clean(outs, ins, out.last_hidden_state)


def head_means(loaded: LoadedModel, texts: list[str], probe_kw: dict | None = None) -> torch.Tensor:
    """``[layer, n_heads * d_head]``: each layer's projection input averaged over all positions of ``texts``
    (as the measure's probe reads them), the reference for mean ablation."""
    families.require(loaded.model, "knockout")
    rows = []
    with loaded.lock, torch.inference_mode():
        for text in texts:
            clean = _clean_run(loaded, make_probe(loaded, text, **(probe_kw or {})))
            rows.append(torch.stack([x[0] for x in clean.proj_in]))    # (layer, tokens, width)
    return torch.cat(rows, dim=1).mean(dim=1)


def _expand(out, rows: int):
    if isinstance(out, torch.Tensor):
        return out.expand(rows, *out.shape[1:])
    if isinstance(out, tuple):
        return tuple(_expand(x, rows) for x in out)
    return out


@contextmanager
def _replay(layers, clean: _Clean, upto: int, rows: int):
    """Layers before ``upto`` return their clean output instead of computing it: a head knocked out at layer l
    cannot change layers < l."""
    def replayed(out):
        return lambda *args, **kwargs: _expand(out, rows)
    for i in range(upto):
        layers[i].forward = replayed(clean.layer_out[i])
    try:
        yield
    finally:
        for i in range(upto):
            del layers[i].forward


# ---------------------------------------------------------------------------------------------- measures, sweep

def measure(loaded: LoadedModel, text: str, **probe_kw) -> Measure:
    """The measure of one text with the model as it is (wrap in ``knockout`` to measure a damaged model)."""
    probe = make_probe(loaded, text, **probe_kw)
    with loaded.lock, torch.inference_mode():
        hidden = loaded.model(**probe.inputs, use_cache=False).last_hidden_state
    return probe.measure(hidden)[0]


def measure_pair(loaded: LoadedModel, text_a: str, text_b: str, **probe_kw) -> PairMeasure:
    a, b = measure(loaded, text_a, **probe_kw), measure(loaded, text_b, **probe_kw)
    return PairMeasure(a, b, a.score - b.score, pair_notes(a, b))


@dataclass
class Sweep:
    """Each head knocked out alone. ``score_a``/``score_b``: ``[layer, head]`` each text's score without that head;
    ``effect``: ``(score_a − score_b) − base.shift``, how much removing the head changes the pair's shift (negative:
    the head helped the model tell the texts apart). ``seconds``: wall time of the sweep."""
    mode: str
    base: PairMeasure
    score_a: np.ndarray
    score_b: np.ndarray
    effect: np.ndarray
    seconds: float
    notes: list[str] = field(default_factory=list)


def _sweep_text(loaded, probe: Probe, clean: _Clean, mode, means, max_rows, report) -> np.ndarray:
    layers, _projs = attention_layers(loaded.model)
    n_layers, n = len(layers), n_heads_of(loaded.model)
    scores = np.zeros((n_layers, n))
    todo = [(layer, head) for layer in range(n_layers) for head in range(n)]
    for start in range(0, len(todo), max_rows):
        chunk = todo[start:start + max_rows]
        rows, first = len(chunk), chunk[0][0]
        plan = {layer: torch.ones(rows, n, dtype=torch.bool) for layer in {x[0] for x in chunk}}
        for r, (layer, head) in enumerate(chunk):
            plan[layer][r, head] = False
        fills = None if mode == "zero" else {layer: means[layer][None].expand(rows, -1) for layer in plan}
        handles = _install(loaded.model, plan, fills)
        try:
            with _replay(layers, clean, first, rows):
                inputs = {k: v.expand(rows, *v.shape[1:]) for k, v in probe.inputs.items()}
                hidden = loaded.model(**inputs, use_cache=False).last_hidden_state
        finally:
            for h in handles:
                h.remove()
        for (layer, head), m in zip(chunk, probe.scores(hidden)):
            scores[layer, head] = m
        report((start + rows) / len(todo))
    return scores


def sweep(loaded: LoadedModel, text_a: str, text_b: str, mode: str = "zero", means=None,
          progress: Progress | None = None, max_rows: int = 36, **probe_kw) -> Sweep:
    """Knock out each head alone and measure both texts: rows of one batch each lose a different head.

    ``mode="mean"`` without ``means`` uses the mean over all positions of both texts. ``max_rows``: heads per
    batch (layers before the batch's first knocked-out layer are replayed from a clean run, not recomputed).
    """
    families.require(loaded.model, "knockout")
    start = time.perf_counter()
    report = progress or (lambda fraction, message: None)
    probes = [make_probe(loaded, t, **probe_kw) for t in (text_a, text_b)]
    out = []
    with loaded.lock, torch.inference_mode():
        cleans = [_clean_run(loaded, p) for p in probes]
        base = [p.measure(c.hidden)[0] for p, c in zip(probes, cleans)]
        if mode == "mean" and means is None:
            means = torch.cat([torch.stack([x[0] for x in c.proj_in]) for c in cleans], dim=1).mean(dim=1)
        elif mode not in {"zero", "mean"}:
            raise ValueError(f"mode must be 'zero' or 'mean', not {mode!r}")
        for i, (p, c) in enumerate(zip(probes, cleans)):
            label = "AB"[i]
            out.append(_sweep_text(loaded, p, c, mode, means, max_rows,
                                   lambda f, i=i, label=label: report((i + f) / 2, _(
                                       "Text {label}: {share} of heads").format(label=label,
                                                                                share=numbers.percent(f)))))
    pair = PairMeasure(base[0], base[1], base[0].score - base[1].score, pair_notes(base[0], base[1]))
    effect = (out[0] - out[1]) - pair.shift
    report(1.0, _("Done."))
    return Sweep(mode, pair, out[0], out[1], effect, time.perf_counter() - start, list(probes[0].notes))


# ---------------------------------------------------------------------------------------------- rank agreement

def rank(x) -> np.ndarray:
    """Ranks 1…n of a flat array; tied values share the mean of their ranks (SciPy's ``rankdata``)."""
    from scipy.stats import rankdata
    return rankdata(np.asarray(x, dtype=np.float64).ravel())


def paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Two same-shaped arrays flattened, with every pair that holds a NaN dropped (ValueError if shapes differ)."""
    a, b = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"Shapes differ: {np.shape(x)} vs {np.shape(y)}")
    ok = ~(np.isnan(a) | np.isnan(b))
    return a[ok], b[ok]


def spearman(x, y) -> float:
    """Spearman's rank correlation of two same-shaped arrays (SciPy's ``spearmanr``, ties ranked by their mean;
    pairs with a NaN dropped; NaN if one is constant)."""
    from scipy.stats import spearmanr
    a, b = paired(x, y)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def size_spearman(flip, effect) -> float:
    """Spearman's ρ between how far each head's attention flips and how much its knockout moves the shift, both as
    sizes (``|flip|``, ``|effect|``): "the heads that look most are the ones that matter most" reads as ρ near +1.
    On signed values it would not: a head that helps has a negative effect (the shift shrinks without it), so
    perfect agreement there reads as ρ = −1, and a head that flips toward the other candidate counts against it."""
    return spearman(np.abs(np.asarray(flip, dtype=float)), np.abs(np.asarray(effect, dtype=float)))


def flip_map(table) -> np.ndarray:
    """``[layer, head]`` of a FlipResult table's ``flip`` column (to compare with ``Sweep.effect``)."""
    n_layers, n_heads = int(table["layer"].max()) + 1, int(table["head"].max()) + 1
    out = np.full((n_layers, n_heads), np.nan)
    out[table["layer"].to_numpy(), table["head"].to_numpy()] = table["flip"].to_numpy()
    return out
