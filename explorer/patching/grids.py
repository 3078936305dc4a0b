"""What every exact grid shares: the ``Patched`` result, the two directions, the axis labels and the hook that
puts one head's output from the other text into each row of a batch (``exact`` and ``path`` both use it)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.patching import hooks
from explorer.patching.contrast import Contrast
from explorer.patching.minimal_pairs import refuse
from explorer.words.i18n import N_

DIRECTIONS = {"denoise": ("corrupted", "clean"), "noise": ("clean", "corrupted")}   # -> (run, patched in from)


@dataclass
class Patched:
    """An exact patching grid. ``values``: normalised ``[row, column]`` (0 = corrupted metric, 1 = clean);
    ``raw``: the metric itself; ``rows``/``columns``: axis labels (``axes`` names them: ``("layer", "position")``
    or ``("layer", "head")``); ``unpatched``: the normalised value of a cell that changes nothing (0 when
    denoising, 1 when noising); ``clean``, ``corrupted``: the raw metric of each text; ``runs``: forward passes
    made; ``seconds``: wall time."""
    granularity: str
    direction: str
    values: np.ndarray
    raw: np.ndarray
    rows: list[str]
    columns: list[str]
    axes: tuple[str, str]
    clean: float
    corrupted: float
    position: int | None = None
    receiver: tuple[int, int] | None = None
    via: str | None = None
    runs: int = 0
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def unpatched(self) -> float:
        return 0.0 if self.direction == "denoise" else 1.0

    @property
    def effect(self) -> np.ndarray:
        """How far each cell moves the normalised metric from the unpatched run."""
        return self.values - self.unpatched


def position_labels(contrast: Contrast, base: str) -> list[str]:
    return [f"{i} {t}" for i, t in enumerate(contrast.tokens[base])]


def check_direction(direction: str) -> tuple[str, str]:
    if direction not in DIRECTIONS:
        raise refuse(N_("The direction is {got}; it is 'denoise' (run the corrupted text, patch in the clean one) "
                        "or 'noise' (the other way)."), got=repr(direction))
    return DIRECTIONS[direction]



def head_fill(contrast: Contrast, layer: int, fills: torch.Tensor, heads: list[int], position: int | None):
    """A pre-hook on layer ``layer``'s output projection: row r's head ``heads[r]`` becomes ``fills[r]``
    (``(T, d_head)``, or ``(d_head,)`` at ``position`` only)."""
    n = contrast.n_heads
    rows = torch.arange(len(heads))

    def hook(module, args):
        x = args[0].clone()
        view = hooks.head_columns(x, n)                          # (rows, T, n_heads, d_head)
        if position is None:
            view[rows, :, heads] = fills.to(x)
        else:
            view[rows, position, heads] = fills.to(x)
        return (x, *args[1:])
    return contrast.parts.out_projs[layer], hook


