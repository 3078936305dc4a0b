"""Figures for the positions, masks and block labs: arrays in, plotly Figure out. Never calls Streamlit.

Matrices are drawn on integer positions (tick text = tokens where there are tokens, so repeated tokens such as two
"the"s stay apart) with the y axis reversed, so row 0 (the first position / query) is on top.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.plots import alt
from explorer.plots.base import label as literal_label  # tokens as literal text, not plotly's HTML subset
from explorer.plots.concepts import cell_hover
from explorer.plots.concepts import position_ticks as _ticks
from explorer.words import numbers
from explorer.words.i18n import _

MASKED_COLOR = "#1f77b4"
UNMASKED_COLOR = "#d62728"


def dimension_curves(encoding: np.ndarray, dims: Sequence[int], title: str = "") -> go.Figure:
    """Chosen columns of ``encoding (n_positions, d_model)`` as curves against position."""
    fig = go.Figure()
    pos = np.arange(encoding.shape[0])
    for j in dims:
        kind = "sin" if j % 2 == 0 else "cos"
        fig.add_scatter(x=pos, y=encoding[:, j], mode="lines",
                        name=_("dim {dim} ({kind}, pair {pair})").format(dim=j, kind=kind, pair=j // 2))
    fig.update_xaxes(title=_("position"))
    fig.update_yaxes(title=_("value"), range=[-1.1, 1.1])
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=50, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1, xanchor="right"))
    return fig


def line(x: np.ndarray, ys: dict[str, np.ndarray], *, title: str = "", x_title: str = "", y_title: str = "",
         mode: str = "lines", log_y: bool = False, vline: float | None = None, height: int = 320,
         colors: Sequence[str] | None = None) -> go.Figure:
    """A few named curves over the same x (similarity against offset, pad weight per layer, …)."""
    fig = go.Figure()
    for i, (name, y) in enumerate(ys.items()):
        fig.add_scatter(x=np.asarray(x), y=np.asarray(y), mode=mode, name=name,
                        line_color=colors[i] if colors else None)
    if vline is not None:
        fig.add_vline(x=vline, line=dict(color="gray", dash="dot"))
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title=y_title, type="log" if log_y else "linear")
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=50, b=40), showlegend=len(ys) > 1,
                      legend=dict(orientation="h", yanchor="top", y=-0.3, x=0.5, xanchor="center"))
    return fig


def rope_pair(vectors: dict[str, np.ndarray], title: str = "") -> go.Figure:
    """2-D arrows from the origin (one rotated pair of a query or key at several positions) on a square plot."""
    fig = go.Figure()
    radius = max(float(np.linalg.norm(v)) for v in vectors.values()) * 1.15 or 1.0
    t = np.linspace(0, 2 * np.pi, 200)
    fig.add_scatter(x=radius / 1.15 * np.cos(t), y=radius / 1.15 * np.sin(t), mode="lines", showlegend=False,
                    line=dict(color="lightgray", dash="dot"), hoverinfo="skip")
    for name, v in vectors.items():
        fig.add_scatter(x=[0, v[0]], y=[0, v[1]], mode="lines+markers+text", name=name, text=["", name],
                        textposition="top center", marker=dict(size=[0, 10]))
    fig.update_xaxes(range=[-radius, radius], zeroline=True, title=_("first dimension of the pair"))
    fig.update_yaxes(range=[-radius, radius], zeroline=True, scaleanchor="x", title=_("second dimension"))
    fig.update_layout(title=title, height=420, margin=dict(l=10, r=10, t=50, b=10), showlegend=False)
    return fig


def distance_bars(distances: np.ndarray, means: np.ndarray, title: str = "") -> go.Figure:
    """Mean attention weight per relative distance ``query - key`` (positive = looking back)."""
    fig = go.Figure(go.Bar(x=distances, y=means, marker_color=MASKED_COLOR,
                           hovertemplate=_("distance {d}: mean weight {w}").format(d="%{x}", w="%{y:.3f}")
                           + "<extra></extra>"))
    fig.update_xaxes(title=_("query − key (positive: the key is earlier; negative: later)"))
    fig.update_yaxes(title=_("mean weight"))
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=50, b=10))
    return fig


def side_by_side(mats: dict[str, tuple[np.ndarray, Sequence[str] | None]], *, colorscale: str = "Blues",
                 zmin: float = 0.0, zmax: float = 1.0, title: str = "", x_title: str | None = None,
                 y_title: str | None = None) -> go.Figure:
    """Two or more square matrices next to each other, each with its own tokens as tick text (None: plain numbers);
    the axes are "key" and "query" in the session's language unless named."""
    x_title = _("key") if x_title is None else x_title
    y_title = _("query") if y_title is None else y_title
    names = list(mats)
    shared = len({tuple(t) if t is not None else None for _values, t in mats.values()}) == 1  # label the first only
    many = len(names) > 3
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names,
                        horizontal_spacing=min(0.12, 0.3 / max(1, len(names) - 1)) if shared else 0.12)
    n_max = 0
    for col, name in enumerate(names, start=1):
        values, tokens = mats[name]
        values = np.asarray(values, dtype=float)
        n = values.shape[0]
        n_max = max(n_max, n)
        names_ = [literal_label(t) for t in tokens] if tokens is not None else [str(i) for i in range(n)]
        fig.add_trace(go.Heatmap(z=values, x=list(range(n)), y=list(range(n)), colorscale=colorscale,
                                 zmin=zmin, zmax=zmax, showscale=col == len(names),
                                 **cell_hover(None if tokens is None else names_, None if tokens is None else names_,
                                              values.shape, " → ", ".3f")), row=1, col=col)
        fig.update_xaxes(title=None if many else x_title, row=1, col=col,
                         tickangle=0 if many or tokens is None else -45,
                         showticklabels=not many, **_ticks(n, tokens))
        fig.update_yaxes(title=y_title if col == 1 else None, autorange="reversed", row=1, col=col,
                         showticklabels=col == 1 or not shared, **_ticks(n, tokens))
    if many:
        n_max = min(n_max, 8)  # narrow panels: keep them roughly square
    if all(t is None for _values, t in mats.values()):
        n_max = 14  # numeric axes: a fixed, roughly square size whatever n is
    fig.update_layout(title=title, height=int(min(620, max(300 if many else 340, 150 + 22 * n_max))),
                      margin=dict(l=10, r=10, t=70, b=10))
    return fig


def padding_change_bars(tokens: Sequence[str], masked: np.ndarray, unmasked: np.ndarray) -> go.Figure:
    """Relative change of each real token's final vector, mask on vs off, on a log axis (they differ ~10⁵×)."""
    x = list(range(len(tokens)))
    fig = go.Figure()
    fig.add_bar(x=x, y=unmasked, name=_("padding NOT masked"), marker_color=UNMASKED_COLOR,
                hovertemplate="%{y:.2e}<extra>" + _("not masked") + "</extra>")
    fig.add_bar(x=x, y=masked, name=_("padding masked"), marker_color=MASKED_COLOR,
                hovertemplate="%{y:.2e}<extra>" + _("masked") + "</extra>")
    fig.update_xaxes(tickmode="array", tickvals=x, ticktext=[literal_label(t) for t in tokens])
    fig.update_yaxes(type="log", title=_("relative change vs. sentence alone"), exponentformat="power")
    fig.update_layout(barmode="group", height=340, margin=dict(l=10, r=10, t=50, b=10),
                      title=_("How far each real token's final vector moved"),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1, xanchor="right"))
    return fig


def head_split(d_model: int, n_heads: int, n_tokens: int = 1) -> go.Figure:
    """A d_model-wide strip coloured by which head owns each column (Viridis: darker to lighter with the head's
    number, which stays so with red–green colour blindness; a rainbow such as Turbo does not)."""
    owner = np.repeat(np.arange(n_heads), d_model // n_heads)[None, :].repeat(n_tokens, axis=0)
    fig = go.Figure(go.Heatmap(z=owner, colorscale="Viridis" if n_heads > 1 else "Blues", showscale=False,
                               hovertemplate=_("column {column} → head {head}").format(column="%{x}", head="%{z}")
                               + "<extra></extra>"))
    fig.update_xaxes(title=_("the {d} columns of Q (and of K, V)").format(d=d_model))
    fig.update_yaxes(title=_("tokens"), autorange="reversed", showticklabels=False)
    fig.update_layout(height=140 + 10 * n_tokens, margin=dict(l=10, r=10, t=20, b=10))
    width = d_model // n_heads
    owners = "; ".join(_("head {h}: columns {first}–{last}").format(h=h, first=h * width, last=(h + 1) * width - 1)
                       for h in range(min(n_heads, 24)))
    return alt.attach(fig, _("The {d} columns of Q, K and V split among {h} heads of {width} columns each: {owners}.")
                      .format(d=d_model, h=n_heads, width=width, owners=owners + ("; …" if n_heads > 24 else "")))


def heads_side_by_side(weights: np.ndarray, tokens: Sequence[str], max_heads: int = 8) -> go.Figure:
    """Each head's ``(query, key)`` weights in a row of small heatmaps (at most ``max_heads``)."""
    h = min(weights.shape[0], max_heads)
    return side_by_side({_("head {n}").format(n=i): (weights[i], tokens) for i in range(h)})


def matrix_grid(mats: dict[str, np.ndarray], cols: int = 4, fmt: str = ".2f", row_labels: Sequence[str] | None = None,
                col_labels: Sequence[str] | None = None) -> go.Figure:
    """Small annotated heatmaps (e.g. each step of a block), ``cols`` per row, one shared diverging colour scale."""
    names = list(mats)
    rows = int(np.ceil(len(names) / cols))
    lim = max(float(np.max(np.abs(m))) for m in mats.values()) or 1.0
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, horizontal_spacing=0.05, vertical_spacing=0.12)
    for i, name in enumerate(names):
        m = np.asarray(mats[name], dtype=float)
        r, c = divmod(i, cols)
        cells = [[numbers.formatted(v, fmt) for v in row] for row in m.tolist()]   # "0,51" in German
        fig.add_trace(go.Heatmap(z=m, colorscale="RdBu", zmid=0, zmin=-lim, zmax=lim, showscale=i == 0,
                                 text=cells, texttemplate="%{text}",
                                 hovertemplate=_("row {row}, column {column}: {value}").format(
                                     row="%{y}", column="%{x}", value="%{z:.4f}") + "<extra></extra>"),
                      row=r + 1, col=c + 1)
        fig.update_yaxes(autorange="reversed", row=r + 1, col=c + 1, showticklabels=c == 0,
                         **_ticks(m.shape[0], row_labels))
        fig.update_xaxes(row=r + 1, col=c + 1, **_ticks(m.shape[1], col_labels))
    fig.update_layout(height=60 + 230 * rows, margin=dict(l=10, r=10, t=40, b=10))
    return fig
