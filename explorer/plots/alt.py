"""Text alternatives of figures: the summary a screen reader reads and the figure's numbers as tables.

A builder that knows what it draws attaches its own (``attach``: "where each query looks most", the heads that
are most focused…); any other figure is described from its traces (``text_alternative``): heatmaps by where
each row peaks, bars by their largest values, lines by their ends. ``ui.show_figure`` shows both under every
chart. Tables are built only when asked for (a callable), since most students never open them.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.access import summary
from explorer.words.i18n import _

Tables = Callable[[], list[tuple[str, pd.DataFrame]]]


@dataclass(frozen=True)
class TextAlternative:
    """``summary``: plain text (the UI escapes it); ``tables()``: (caption, DataFrame) pairs of the numbers."""
    summary: str
    tables: Tables = field(default=lambda: [])


def attach(fig: go.Figure, text: str, tables: Tables | None = None) -> go.Figure:
    """Give ``fig`` its own text alternative (kept on the Python object; nothing more is sent to the browser)."""
    fig._text_alternative = TextAlternative(text, tables or (lambda: []))
    return fig


def matrix_table(matrix: np.ndarray, rows, cols, masked: np.ndarray | None = None, digits: int = 3) -> pd.DataFrame:
    """A ``[row, col]`` matrix as a frame labelled "position · token" both ways; hidden cells left empty."""
    z = np.round(np.asarray(matrix, dtype=np.float64), digits)
    if masked is not None:
        z = np.where(np.asarray(masked, dtype=bool), np.nan, z)
    return pd.DataFrame(z, index=_unique(rows), columns=_unique(cols))


def _unique(names) -> list[str]:
    """Labels prefixed with their position, so repeated tokens ("the" … "the") stay apart as table headers."""
    return [f"{i} · {n}" for i, n in enumerate(names)]


def clickable_heads(fig: go.Figure) -> list[tuple[int, int]]:
    """The (layer, head) of every point whose ``customdata`` starts with [layer, head]: the heads a click on this
    figure can choose, in order, each once."""
    found: dict[tuple[int, int], None] = {}
    light = getattr(fig, "light_traces", lambda: None)()   # a LightFigure's dicts: no object tree built for this
    for trace in fig.data if light is None else light:
        custom = trace.get("customdata") if isinstance(trace, dict) else getattr(trace, "customdata", None)
        for data in (() if custom is None else custom):
            try:
                if len(data) >= 2:
                    found[(int(data[0]), int(data[1]))] = None
            except (TypeError, ValueError):
                break
    return list(found)


# ---------------------------------------------------------------------------------------------- from the traces

_TAGS = re.compile(r"<[^>]+>")


_SUBTITLE = re.compile(r"<br\s*/?>\s*<sup>", re.IGNORECASE)   # a title's second line, in smaller type
_ENDS_A_SENTENCE = (".", "!", "?", ":", "…")


def plain(text) -> str:
    """Plotly label text as plain words: tags dropped (<br>, <sup>), entities and invisible characters undone. A
    subtitle (``<br><sup>``) is read as a clause of its own, after a dash where the line above ends without a stop
    ("Where the score 1.2 comes from — the 3 marked add 0.9"); a ``<br>`` that only wraps a long line is a space."""
    import html

    lines = _SUBTITLE.split("" if text is None else str(text))
    out = ""
    for line in lines:
        words = html.unescape(_TAGS.sub(" ", line))
        words = re.sub(r"\s+", " ", words.replace("\u200b", "").replace("\u200c", "")).strip()
        if out and words:
            out += (" " if out.endswith(_ENDS_A_SENTENCE) else " — ") + words
        else:
            out = out or words
    return out


def _title(fig: go.Figure) -> str:
    title = fig.layout.title
    return plain(title.text if title is not None else "")


def _ticks(axis, values, n: int) -> list[str]:
    """The labels a reader sees along an axis for ``values`` (positions 0…n-1 when None): the tick text at each
    value where the axis names it (``tickvals``/``ticktext``, or ``ticktext`` alone for every position), else the
    value itself."""
    values = list(range(n)) if values is None else list(values)
    text = list(axis.ticktext) if axis is not None and axis.ticktext is not None else []
    where = list(axis.tickvals) if axis is not None and axis.tickvals is not None else []
    if text and len(where) == len(text):
        named = {_key(v): plain(t) for v, t in zip(where, text)}
        return [named.get(_key(v), plain(v)) for v in values]
    if len(text) == n:
        return [plain(t) for t in text]
    return [plain(v) for v in values]


def _key(value):
    """Tick values compare as numbers when they are numbers (3 == 3.0 == numpy's 3), else as text."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def text_alternative(fig: go.Figure) -> TextAlternative:
    """The figure's own text alternative if a builder attached one, else one read from its traces."""
    own = getattr(fig, "_text_alternative", None)
    if own is not None:
        return own
    parts, tables = [], []
    panels = [plain(a.text) for a in fig.layout.annotations or ()]   # make_subplots' titles, one a panel
    if len(panels) != len(fig.data):
        panels = []
    for i, trace in enumerate(fig.data):
        name = plain(getattr(trace, "name", None)) or (panels[i] if panels else "" if len(fig.data) == 1
                                                        else _("trace {n}").format(n=i + 1))
        axes = _axes(fig, trace)
        if trace.type == "heatmap" and trace.z is not None:
            z = np.asarray(trace.z, dtype=np.float64)
            if z.ndim != 2:
                continue
            rows, cols = _ticks(axes[1], trace.y, z.shape[0]), _ticks(axes[0], trace.x, z.shape[1])
            said = summary.row_peaks(z, rows, cols, row_word="row", col_word="column", most=8)
            parts.append(f"{name}: {said}" if name else said)
            tables.append((name or _("values"), matrix_table(z, rows, cols)))
        elif trace.type == "bar" and trace.y is not None and trace.x is not None:
            values, where = (trace.x, trace.y) if trace.orientation == "h" else (trace.y, trace.x)
            labels = _ticks(axes[1] if trace.orientation == "h" else axes[0], where, len(where))
            parts.append(f"{name}: " * bool(name) + summary.largest(values, labels, k=4))
            tables.append((name or _("bars"), pd.DataFrame({_("label"): labels,
                                                             _("value"): np.asarray(values, dtype=float)})))
        elif trace.type == "scatter" and trace.y is not None and trace.x is not None and len(trace.x) > 1 \
                and "lines" in (trace.mode or "lines"):
            parts.append(summary.series_ends(_ticks(axes[0], trace.x, len(trace.x)), trace.y,
                                             name or _("the line")))
            tables.append((name or _("line"), pd.DataFrame({"x": list(trace.x),
                                                            "y": np.asarray(trace.y, dtype=float)})))
    title = _title(fig)
    text = " ".join(parts) or _("A figure without numbers to read out.")
    return TextAlternative(f"{title}. {text}" if title else text, lambda: tables)


def _axes(fig: go.Figure, trace):
    """The (x axis, y axis) layout objects a trace is drawn on (subplots use xaxis2, yaxis3…)."""
    def axis(ref, kind):
        ref = ref or kind
        try:
            return fig.layout[kind + "axis" + ref[1:]]
        except (KeyError, ValueError):
            return None
    return axis(getattr(trace, "xaxis", None), "x"), axis(getattr(trace, "yaxis", None), "y")
