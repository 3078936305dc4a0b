"""The sequences a run learns from. Every sequence starts with the start token 0 and then holds random tokens
1 … vocab−1. In the induction task a segment of ``n`` tokens (``repeat_min`` ≤ n ≤ ``repeat_max``) appears twice: its
first copy starts at ``first`` and its second at ``second`` = first + n + gap, where both the start and the gap are
drawn anew for every sequence, so no fixed distance or position can predict the second copy — only "find where this
token stood before and copy what came after it" can. In the contrast task (``no-repeat``) nothing is copied: the
places are drawn the same way, so both tasks are measured on the same positions.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.learning.config import TrainConfig

BOS = 0   # the start token, at position 0 of every sequence


@dataclass(frozen=True)
class Batch:
    """``tokens[batch, context]`` (int64) and, per sequence, where the segment's copies start and how long it is."""
    tokens: torch.Tensor
    first: torch.Tensor    # [batch]
    second: torch.Tensor   # [batch]
    length: torch.Tensor   # [batch]

    def copy_masks(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(first, second)``, each bool ``[batch, context − 1]``: the predictions (from position t of token t + 1)
        that fall inside the first and the second copy after its first token (the first token of a copy follows
        random tokens, so nothing can predict it)."""
        t = torch.arange(self.tokens.shape[1] - 1)[None, :]
        start_f, start_s, n = self.first[:, None], self.second[:, None], self.length[:, None]
        return (t >= start_f) & (t < start_f + n - 1), (t >= start_s) & (t < start_s + n - 1)

    def prefix_targets(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(row, query, key)``: for every token of a second copy but its last, the position of that token (query) and
        the position right after the same token's first occurrence (key) — where an induction head looks."""
        rows, queries, keys = [], [], []
        for b in range(self.tokens.shape[0]):
            n, f, s = int(self.length[b]), int(self.first[b]), int(self.second[b])
            for i in range(n - 1):
                rows.append(b)
                queries.append(s + i)
                keys.append(f + i + 1)
        return torch.tensor(rows), torch.tensor(queries), torch.tensor(keys)


def batch(cfg: TrainConfig, size: int, generator: torch.Generator, task: str | None = None) -> Batch:
    """``size`` sequences of ``cfg``'s task (or ``task``), drawn from ``generator`` (the same generator state gives the
    same batch)."""
    task = task or cfg.task
    tokens = torch.randint(1, cfg.vocab, (size, cfg.context), generator=generator)
    tokens[:, 0] = BOS
    length = torch.randint(cfg.repeat_min, cfg.repeat_max + 1, (size,), generator=generator)
    slack = (cfg.context - 1) - 2 * length                      # positions left outside the two copies
    u = torch.rand(size, 2, generator=generator, dtype=torch.float64)
    before = torch.floor(u[:, 0] * (slack + 1)).long()          # 0 … slack
    gap = torch.floor(u[:, 1] * (slack - before + 1)).long()    # 0 … slack − before
    first = 1 + before
    second = first + length + gap
    if task == "induction":
        span = torch.arange(cfg.repeat_max)[None, :].expand(size, -1)
        inside = span < length[:, None]
        src = (first[:, None] + span).clamp(max=cfg.context - 1)
        dst = (second[:, None] + span).clamp(max=cfg.context - 1)
        rows = torch.arange(size)[:, None].expand(-1, cfg.repeat_max)
        tokens[rows[inside], dst[inside]] = tokens[rows[inside], src[inside]]
    return Batch(tokens, first, second, length)


def generator(seed: int, stream: int) -> torch.Generator:
    """A generator for one of a run's streams (0 weights, 1 training data, 2 evaluation, 3 the probe), so that
    changing how many batches one stream draws never changes another."""
    return torch.Generator().manual_seed(seed * 4 + stream)


def probe(cfg: TrainConfig) -> Batch:
    """The one sequence every checkpoint's heatmaps show: the same for every seed of a config, with a repeat."""
    return batch(cfg, 1, torch.Generator().manual_seed(20221208), task="induction")
