"""The model a class trains: attention only, written out so a reader follows it in one screen (nanoGPT's habit).

x = token embedding + learned position embedding; each layer adds its heads' outputs to x (x ← x + attn(x), with an
optional LayerNorm before each layer and before the unembedding); logits = x W_U. No MLP, no biases, so every path
through the model is a product of the matrices below, which :mod:`explorer.learning.circuits` reads.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import torch
from torch import nn

from explorer import maths
from explorer.learning.config import TrainConfig


class AttentionOnly(nn.Module):
    """Weights named as in the field: ``W_E [vocab, d_model]``, ``W_pos [context, d_model]``, per layer
    ``W_Q, W_K, W_V [n_heads, d_model, d_head]`` and ``W_O [n_heads, d_head, d_model]``, ``W_U [d_model, vocab]``."""

    def __init__(self, cfg: TrainConfig, generator: torch.Generator):
        super().__init__()
        self.cfg = cfg
        d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head

        def init(*shape: int, fan_in: int) -> nn.Parameter:
            return nn.Parameter(torch.randn(*shape, generator=generator) / math.sqrt(fan_in))

        self.W_E = init(cfg.vocab, d, fan_in=d)
        self.W_pos = init(cfg.context, d, fan_in=d)
        self.W_Q = nn.ParameterList([init(h, d, dh, fan_in=d) for _ in range(cfg.n_layers)])
        self.W_K = nn.ParameterList([init(h, d, dh, fan_in=d) for _ in range(cfg.n_layers)])
        self.W_V = nn.ParameterList([init(h, d, dh, fan_in=d) for _ in range(cfg.n_layers)])
        self.W_O = nn.ParameterList([init(h, dh, d, fan_in=d) for _ in range(cfg.n_layers)])
        self.W_U = init(d, cfg.vocab, fan_in=d)
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(cfg.n_layers + 1)]) if cfg.layer_norm else None
        self.register_buffer("causal", torch.from_numpy(maths.causal_mask(cfg.context)), persistent=False)
        self.keep = torch.ones(cfg.n_layers, h)   # 1 = head on, 0 = knocked out (see ``knocked_out``)

    def _norm(self, i: int, x: torch.Tensor) -> torch.Tensor:
        return self.norms[i](x) if self.norms is not None else x

    def forward(self, tokens: torch.Tensor, keep_patterns: bool = False):
        """``logits [batch, T, vocab]`` and, if ``keep_patterns``, each layer's weights ``[batch, head, query, key]``.
        """
        T = tokens.shape[1]
        x = self.W_E[tokens] + self.W_pos[:T]                                 # (B, T, d)
        patterns = []
        for layer in range(self.cfg.n_layers):
            h = self._norm(layer, x)
            q = torch.einsum("btd,hde->bhte", h, self.W_Q[layer])            # (B, H, T, dh)
            k = torch.einsum("btd,hde->bhte", h, self.W_K[layer])
            v = torch.einsum("btd,hde->bhte", h, self.W_V[layer])
            scores = q @ k.transpose(-1, -2) / math.sqrt(self.cfg.d_head)    # (B, H, T, T)
            scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
            weights = scores.softmax(dim=-1)
            z = (weights @ v) * self.keep[layer][None, :, None, None]       # (B, H, T, dh)
            x = x + torch.einsum("bhte,hed->btd", z, self.W_O[layer])
            if keep_patterns:
                patterns.append(weights)
        logits = self._norm(self.cfg.n_layers, x) @ self.W_U                  # (B, T, vocab)
        return (logits, patterns) if keep_patterns else logits

    @contextmanager
    def knocked_out(self, heads: list[tuple[int, int]]):
        """Within the block, each ``(layer, head)`` of ``heads`` adds nothing to the residual stream (output zeroed)."""
        saved = self.keep.clone()
        for layer, head in heads:
            self.keep[layer, head] = 0.0
        try:
            yield self
        finally:
            self.keep = saved


def next_token_losses(model: AttentionOnly, tokens: torch.Tensor) -> torch.Tensor:
    """``[batch, T − 1]``: −ln p(token t + 1 | tokens ≤ t) in nats."""
    logits = model(tokens)[:, :-1]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1),
                                             reduction="none").view(tokens.shape[0], -1)
