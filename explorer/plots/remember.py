"""Figures remembered by their inputs, for the concept labs.

A lab's figures are the same for every student who opens it with the same settings (and for each follower of a
class), yet plotly's validated object tree took most of a lab page's run to build: the softmax lab's 2 × 2 panels
alone took ~45 ms of its ~120 ms. :func:`remembered` keeps a builder's finished figure as plain dicts, keyed by
its arguments, and hands out a :class:`~explorer.plots.attention.LightFigure` over fresh copies of the dicts'
containers, so no caller's change (``update_layout``, a projector's larger fonts) reaches the next one.
"""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable

import numpy as np

from explorer.plots.attention import LightFigure, _plain
from explorer.serving.cache import ByteLRU

MAX_BYTES = 8 * 2**20   # per builder: its figures' arrays (a lab figure holds a few kB)
MAX_CELLS = 4096   # a larger array (a long text's matrix) is not remembered: its figure would hold megabytes


class _Unkeyable(Exception):
    pass


def _key(value):
    """A hashable stand-in for a builder's argument: arrays by shape, type and a digest of their bytes."""
    if isinstance(value, np.ndarray):
        if value.size > MAX_CELLS:
            raise _Unkeyable("large array")
        data = np.ascontiguousarray(value)
        return ("array", data.shape, data.dtype.str, hashlib.blake2b(data.tobytes(), digest_size=16).digest())
    if isinstance(value, dict):
        return ("dict", tuple((_key(k), _key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if value is None or isinstance(value, (str, bytes, bool, int, float, np.generic)):
        return value
    raise _Unkeyable(type(value).__name__)


def remembered(builder: Callable) -> Callable:
    """``builder`` (returning a plotly figure) with its results kept in a :class:`~explorer.serving.cache.ByteLRU` of
    ``MAX_BYTES`` (built once even when several sessions ask at the same time); arguments it cannot key (other
    objects, arrays of more than ``MAX_CELLS``) just call it. The text alternative a builder attached travels
    with each copy."""
    memo = ByteLRU(MAX_BYTES)

    def build(args, kwargs):
        fig = builder(*args, **kwargs)
        # the traces' and layout's own values (numpy arrays kept: to_dict would turn them into base64 already)
        return ([t.to_plotly_json() for t in fig.data], fig.layout.to_plotly_json(),
                getattr(fig, "_text_alternative", None))

    @functools.wraps(builder)
    def wrapper(*args, **kwargs):
        try:
            key = _key((args, kwargs))
        except _Unkeyable:
            return builder(*args, **kwargs)
        data, layout, alt = memo.get_or_compute(key, lambda: build(args, kwargs))
        out = LightFigure(_plain(data), _plain(layout))
        if alt is not None:
            out._text_alternative = alt
        return out

    wrapper.memo = memo
    return wrapper
