"""The figure base every plot uses, and every private plotly name the plots need, in one module.

Arrays in, plotly Figure out: ``figure`` builds a :class:`LightFigure` (plotly's object tree built only when
something looks inside it), ``at_shown_precision`` sends float64 arrays as float32, ``plain_copy`` copies a kept
figure's containers, ``label`` writes a token as literal text. Never calls Streamlit.

A plotly upgrade that moves a private name breaks every chart at once, so no other module of explorer/, pages/ or
app.py names one (tests/unit/test_plotly_internals.py fails if one does; tests/unit/test_plots.py checks that a
LightFigure sends the same JSON as plotly's own validated figure). What is used, and why no public API serves:

- ``_plotly_utils.utils.convert_to_base64``: plotly's own step in ``Figure.to_dict`` that turns numpy arrays into
  typed-array specs ({"dtype", "bdata"}: 4 bytes a float32 instead of its decimal text). ``LightFigure.to_dict``
  answers from the dicts it was given and must send exactly what plotly would; the function is not exported.
- ``plotly.basedatatypes.BasePlotlyType``: the base class of every plotly object (a trace, a layout, a marker):
  ``plain_copy`` turns any one met inside a kept figure's dicts into its plain dict (``to_plotly_json``).
  ``plotly.graph_objects`` exports only the concrete classes.
- ``go.Figure.__init__(..., _validate=False)``: builds the object tree without walking every property through
  plotly's validators (~4 ms against ~12 ms for the heatmap page's figures); ``LightFigure._built`` calls it the
  first time something looks inside. The public constructor always validates.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from _plotly_utils.utils import convert_to_base64
from plotly.basedatatypes import BasePlotlyType

from explorer.words.numbers import plotly_separators


def label(token: str) -> str:
    """A token as literal text for plotly, which would otherwise render a subset of HTML in labels."""
    return html.escape(str(token), quote=False)


NO_TEMPLATE = go.layout.Template()   # an empty template: see figure()


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A light figure built in one call, without plotly's validation.

    Validation walks every property through plotly's validators: a heatmap built by ``update_*`` calls took ~14 ms
    and a layer's grid ~100 ms; given whole, the heatmap page's four figures took ~12 ms, and ~4 ms unvalidated
    (the page's rerun is ~60 ms in all). What validation would change is done here by hand (colour scales are
    written out, never named), and tests/unit/test_plots.py checks that the attention figures validate to the
    same JSON. The template is empty: plotly's default one is ~6 kB of JSON a figure, and Streamlit's theme styles
    the chart in the browser anyway, so the chart and its PNG look the same without it. ``separators`` is the
    session's locale's (",." in German: ticks, colour bars and ``%{z:.3f}`` hovers read "0,5"), unless ``layout``
    names its own. The figure is a
    :class:`LightFigure`: plotly's object tree is built only if something looks inside it."""
    for part in [layout, *data]:   # plotly's constructor would expand marker_color into marker.color; this one won't
        magic = [k for k in part if "_" in k and k not in _UNDERSCORED]
        if magic:
            raise ValueError(f"write {magic[0]!r} out as nested dicts (marker=dict(color=…)), not with an underscore")
    return LightFigure(data, {**layout, "template": layout.get("template", NO_TEMPLATE),
                              "separators": layout.get("separators", plotly_separators())})


_UNDERSCORED = {"plot_bgcolor", "paper_bgcolor", "error_x", "error_y", "error_z"}   # real names with an underscore


class LightFigure(go.Figure):
    """A go.Figure that builds plotly's object tree only when something looks inside it.

    ``st.plotly_chart`` needs nothing but ``to_dict()``, which this answers from the dicts it was given: their
    containers are copied (arrays are not: plotly's base64 step replaces them in the copy), so a page's figures
    skip both the object tree and plotly's deep copy of it (~40% of the heatmap page's figure time). Anything else
    (``fig.layout``, ``fig.data``, ``update_layout``, ``to_json``…) first builds the figure exactly as
    ``go.Figure(data, layout, _validate=False)`` would; tests/unit/test_plots.py checks that both send the same JSON."""

    def __init__(self, data: list[dict], layout: dict):   # plotly's __init__ runs later, in _built()
        self.__dict__["_light"] = (data, layout)

    def _built(self) -> bool:
        light = self.__dict__.pop("_light", None)
        if light is not None:
            go.Figure.__init__(self, data=light[0], layout=light[1], _validate=False)
        return light is not None

    def __getattr__(self, name: str):   # only for attributes not found: plotly's own, before it has run
        if name == "_light" or not self._built():
            raise AttributeError(name)
        return getattr(self, name)

    def light_traces(self) -> list[dict] | None:
        """The traces as given (read-only), while the object tree is not built yet; else None (use ``.data``)."""
        light = self.__dict__.get("_light")
        return None if light is None else light[0]

    def set_meta(self, value) -> LightFigure:
        """layout.meta (free data that plotly.js keeps and never draws) = ``value``, without building the figure."""
        light = self.__dict__.get("_light")
        if light is None:
            self.layout.meta = value
        else:
            self.__dict__["_light"] = (light[0], {**light[1], "meta": value})
        return self

    def to_dict(self) -> dict:
        light = self.__dict__.get("_light")
        if light is None:
            return super().to_dict()
        out = {"data": plain_copy(light[0]), "layout": plain_copy(light[1])}
        convert_to_base64(out)
        return out


SHOWN_ARRAYS = ("x", "y", "z", "customdata", "text")   # a trace's array properties that can hold float64


def at_shown_precision(fig: go.Figure) -> go.Figure:
    """``fig`` with every float64 array of its traces sent as float32: plotly sends numpy arrays as typed arrays,
    4 bytes a number instead of 8, and no chart shows more than 4 significant digits (float32 keeps 7). The
    positional-encodings lab's step sent 1.5 MB to each student before. Returns a :class:`LightFigure`: its
    traces are changed as given (they are a caller's copies); a built figure is first copied into one, since
    plotly's own trace objects turn a float32 array back into float64 (the numbers rounded, the bytes not).

    Every chart the app shows passes here, so a figure built with plotly's own constructor (not :func:`figure`)
    gets the session's number separators here too, unless it names its own (``layout.separators``)."""
    traces = fig.light_traces() if isinstance(fig, LightFigure) else None
    light = fig.__dict__.get("_light") if traces is not None else None
    if light is not None and "separators" not in light[1]:   # a light figure not made by figure()
        fig.__dict__["_light"] = (light[0], {**light[1], "separators": plotly_separators()})
    if traces is None:
        alt = getattr(fig, "_text_alternative", None)
        layout = fig.layout.to_plotly_json()
        fig = LightFigure([t.to_plotly_json() for t in fig.data],
                          {**layout, "separators": layout.get("separators") or plotly_separators()})
        if alt is not None:
            fig._text_alternative = alt
        traces = fig.light_traces()
    for trace in traces:
        for name in SHOWN_ARRAYS:
            value = trace.get(name)
            if isinstance(value, np.ndarray) and value.dtype == np.float64:
                trace[name] = value.astype(np.float32)
    return fig


def plain_copy(value):
    """``value`` with every dict and list copied (tuples become lists) and plotly objects as their dicts; arrays
    and scalars as they are (shared). What a :class:`LightFigure` is given from a kept figure, so a caller's
    change to its copy reaches no other."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_copy(v) for v in value]
    if isinstance(value, BasePlotlyType):
        return plain_copy(value.to_plotly_json())
    return value


def labels(tokens: list[str]) -> list[str]:
    return [label(t) for t in tokens]
