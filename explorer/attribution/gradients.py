"""Gradient-based scores of the input tokens for one probe's score f (log-odds, or a cosine difference).

- gradient × input: ``∂f/∂e_t · e_t`` summed over the embedding dimensions of token t (``e``: the input embeddings
  the model reads; one forward and one backward pass).
- integrated gradients (Sundararajan et al. 2017), with Captum: ``(e_t − b_t) · ∫₀¹ ∂f/∂e_t(b + α(e − b)) dα``.
  Completeness: the token scores sum to ``f(e) − f(b)``; Captum's convergence delta is how far the sum of the
  computed scores is from that (the integral is a finite sum of ``steps`` gradients at evenly spaced midpoints).

The baseline ``b`` is the embedding of a blank input: the attributed tokens replaced by a blank token (the
decoder's end-of-text, the encoder's pad), everything else (special tokens, the decoder's question) kept. A zero
embedding is the textbook baseline but a poor one here: a norm layer reads the embeddings first (RMSNorm in
SmolLM2, LayerNorm in BERT's embeddings) and divides by their size, so near zero the function jumps and a few
dozen steps miss the jump (the completeness gap was of the size of f itself). Between two real embeddings the size
stays similar. One more jump was measured on SmolLM2 (no start token): blanking its FIRST token moved f by ~3.5
within 5 % of the path (the first token is where its attention rests and its activations grow large), so the
caller keeps that token in the baseline. The integrand still has narrow bumps there (64 midpoints: gap 0.6 % of
f(x) − f(b)); at 32 steps evenly spaced midpoints left a gap of 11.5 %, Captum's default Gauss–Legendre points
25.5 % (they crowd the ends of the path, the bumps sit near α ≈ 0.7), 24 steps 28 % and 67 %.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.heads_do.measures import Probe
from explorer.model.loading import LoadedModel

STEPS = 32          # SmolLM2's antecedent prompt: ~6 s of one core in all; gap 11.5 % of f(x) − f(b) (see above)
METHOD = "riemann_middle"


@dataclass
class IGResult:
    """``scores``: ``(tokens,)`` per-token attributions; ``f_input``/``f_baseline``: f at the input and at the
    baseline; ``delta``: Σ scores − (f_input − f_baseline), Captum's convergence delta."""
    scores: np.ndarray
    f_input: float
    f_baseline: float
    delta: float
    steps: int
    baseline: str

    @property
    def relative_gap(self) -> float:
        """|delta| as a share of |f_input − f_baseline| (how far completeness is from holding)."""
        span = abs(self.f_input - self.f_baseline)
        return abs(self.delta) / span if span > 0 else float("inf") if self.delta else 0.0


def _score_function(loaded: LoadedModel, probe: Probe):
    """``f(embeds (batch, T, d)) -> (batch,)`` the probe's score, with the probe's other inputs broadcast."""
    extra = {k: v for k, v in probe.inputs.items() if k != "input_ids"}

    def f(embeds: torch.Tensor) -> torch.Tensor:
        kw = {k: v.expand(embeds.shape[0], *v.shape[1:]) for k, v in extra.items()}
        hidden = loaded.model(inputs_embeds=embeds, **kw, use_cache=False).last_hidden_state
        v = probe.values_of(hidden)
        return v[:, 0] - v[:, 1]
    return f


def _embeddings(loaded: LoadedModel, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return loaded.model.get_input_embeddings()(ids).detach()


def gradient_x_input(loaded: LoadedModel, probe: Probe) -> np.ndarray:
    """``(tokens,)``: ∂f/∂e · e per token at the input embeddings."""
    f = _score_function(loaded, probe)
    with loaded.lock, torch.enable_grad():
        embeds = _embeddings(loaded, probe.inputs["input_ids"]).requires_grad_(True)
        (grad,) = torch.autograd.grad(f(embeds).sum(), embeds)
    return (grad * embeds).sum(-1)[0].double().detach().cpu().numpy()


def blank_token(loaded: LoadedModel) -> int:
    """The token of a blank input: the decoder's end-of-text (else pad, else unknown), the encoder's pad (else
    unknown), skipping a token whose embedding is all zeros (a padding index): that would be the zero baseline."""
    tok, table = loaded.tokenizer, loaded.model.get_input_embeddings().weight
    names = ("eos_token_id", "pad_token_id", "unk_token_id") if loaded.kind == "decoder" else (
        "pad_token_id", "unk_token_id")
    found = [int(i) for i in (getattr(tok, name, None) for name in names) if i is not None]
    with torch.no_grad():
        usable = [i for i in found if 0 <= i < table.shape[0] and bool(table[i].abs().sum() > 0)]
    return (usable or found or [0])[0]


def integrated_gradients(loaded: LoadedModel, probe: Probe, positions: list[int], steps: int = STEPS,
                         baseline: str = "blank") -> IGResult:
    """Integrated gradients of the probe's score at the input embeddings, with Captum.

    ``positions``: the tokens to attribute (replaced in the baseline); others are the same in input and baseline,
    so their scores are 0. ``baseline``: "blank" (those tokens replaced by ``blank_token``) or "zero" (their
    embeddings set to 0).
    """
    from captum.attr import IntegratedGradients  # imports matplotlib: only when asked

    ids = probe.inputs["input_ids"]
    embeds = _embeddings(loaded, ids)
    if baseline == "blank":
        base_ids = ids.clone()
        base_ids[0, positions] = blank_token(loaded)
        base = _embeddings(loaded, base_ids)
    elif baseline == "zero":
        base = embeds.clone()
        base[0, positions] = 0
    else:
        raise ValueError(f"baseline must be 'blank' or 'zero', not {baseline!r}")
    f = _score_function(loaded, probe)
    with loaded.lock, torch.enable_grad():
        attr, delta = IntegratedGradients(f).attribute(embeds, baselines=base, n_steps=steps, method=METHOD,
                                                       internal_batch_size=steps, return_convergence_delta=True)
        with torch.no_grad():
            ends = f(torch.cat([embeds, base])).double().cpu().numpy()
    return IGResult(attr.sum(-1)[0].double().detach().cpu().numpy(), float(ends[0]), float(ends[1]),
                    float(delta[0]), steps, baseline)
