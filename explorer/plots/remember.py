"""Figures remembered by their inputs, for the concept labs.

A lab's figures are the same for every student who opens it with the same settings (and for each follower of a
class), yet plotly's validated object tree took most of a lab page's run to build: the softmax lab's 2 × 2 panels
alone took ~45 ms of its ~120 ms. :func:`remembered_figure` keeps a builder's finished figure as plain dicts,
keyed by its arguments (:func:`explorer.serving.regions.remembered`, in the ``figures`` region), and hands out a
:class:`~explorer.plots.base.LightFigure` over fresh copies of the dicts' containers, so no caller's change
(``update_layout``, a projector's larger fonts) reaches the next one.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from explorer.plots.base import LightFigure, plain_copy
from explorer.serving import regions
from explorer.serving.cache import MAX_CELLS  # noqa: F401 - MAX_CELLS: the largest array keyed
from explorer.serving.regions import remembered
from explorer.words import i18n

MAX_BYTES = 8 * 2**20   # per builder: its figures' arrays (a lab figure holds a few kB)
BY_VIEW = regions.store("figures")   # figures kept by the view they draw (their arrays' bytes; serving/regions.py)


def _parts(fig) -> tuple:
    """The traces' and layout's own values (numpy arrays kept: to_dict would turn them into base64 already) and
    the text alternative the builder attached."""
    return ([t.to_plotly_json() for t in fig.data], fig.layout.to_plotly_json(),
            getattr(fig, "_text_alternative", None))


def _copy(parts: tuple) -> LightFigure:
    data, layout, alt = parts
    out = LightFigure(plain_copy(data), plain_copy(layout))
    if alt is not None:
        out._text_alternative = alt
    return out


def remembered_figure(builder: Callable) -> Callable:
    """``builder`` (returning a plotly figure) with its figures kept in a store of ``MAX_BYTES``; arguments it cannot
    key (other objects, arrays of more than ``MAX_CELLS``) just call it. The text alternative a builder attached
    travels with each copy. The language the figure is made in is part of the key: a builder writes its own axis
    titles and legend names with ``_()``."""
    @remembered(MAX_BYTES, keep=_parts, give=_copy, region="figures")
    def in_language(lang: str, *args, **kwargs):
        return builder(*args, **kwargs)

    @functools.wraps(builder)
    def wrapper(*args, **kwargs):
        return in_language(i18n.current(), *args, **kwargs)

    wrapper.memo = in_language.memo
    return wrapper


def figure_for_view(key, build: Callable):
    """The figure ``build()`` makes for the view ``key`` (a digest of everything it is made of), built once and
    handed out as copies: for charts a click acts on, which each session draws itself (a click is that session's
    own), while the figure is the same for all of them."""
    return _copy(BY_VIEW.get_or_compute(key, lambda: _parts(build())))
