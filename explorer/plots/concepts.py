"""Figures for the concept labs: arrays in, plotly Figure out. Never calls Streamlit.

Heatmaps are drawn on integer positions with the tokens as tick text (plotly would merge repeated labels such
as two "the"s otherwise) and the y axis reversed so row 0 (the first query) is on top.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.plots import room as plot_room
from explorer.plots.base import label as literal_label  # tokens as literal text, not plotly's HTML subset
from explorer.plots.remember import remembered_figure
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

RAW_COLOR = "#d62728"     # scores used as they are
SCALED_COLOR = "#1f77b4"  # scores divided by sqrt(d_k)


@remembered_figure
def matrix_heatmap(values: np.ndarray, row_labels: Sequence[str] | None = None,
                   col_labels: Sequence[str] | None = None, *, title: str = "", x_title: str = "", y_title: str = "",
                   fmt: str = ".2f", zmin: float | None = None, zmax: float | None = None, zmid: float | None = None,
                   colorscale: str = "RdBu", annotate: bool | None = None, height: int | None = None,
                   labels_on_top: bool = False, max_labels: int = 40) -> go.Figure:
    """The labs' one matrix picture: ``values (rows, cols)`` on integer positions (so repeated tokens stay apart),
    row 0 on top, cells written in when the matrix is small. ``labels_on_top`` reads like a matrix on paper (the
    token labels above, turned when long); otherwise labels sit below, thinned to ``max_labels``."""
    values = np.asarray(values, dtype=float)
    n_rows, n_cols = values.shape
    xl = [literal_label(x) for x in col_labels] if col_labels is not None else [str(i) for i in range(n_cols)]
    yl = [literal_label(y) for y in row_labels] if row_labels is not None else [str(i) for i in range(n_rows)]
    annotate = n_rows * n_cols <= (144 if labels_on_top else 100) if annotate is None else annotate
    fig = go.Figure(go.Heatmap(
        z=values, x=list(range(n_cols)), y=list(range(n_rows)), zmin=zmin, zmax=zmax, zmid=zmid,
        colorscale=colorscale, text=np.vectorize(lambda v: numbers.formatted(v, fmt))(values) if annotate else None,
        texttemplate="%{text}" if annotate else None,
        **cell_hover(yl if row_labels is not None else None, xl if col_labels is not None else None, values.shape,
                     " → " if labels_on_top else " · ", fmt if labels_on_top else ".4f")))
    if labels_on_top:
        rotate = n_cols > 6 and max(len(c) for c in xl) > 3
        fig.update_xaxes(tickmode="array", tickvals=list(range(n_cols)), ticktext=xl, title=x_title, side="top",
                         tickangle=-90 if rotate else 0)
        fig.update_yaxes(tickmode="array", tickvals=list(range(n_rows)), ticktext=yl, title=y_title,
                         autorange="reversed")
        top = (45 + 7 * min(max(len(c) for c in xl), 14) if rotate else 60) + (30 if title else 0)
        fig.update_layout(title=dict(text=title, y=1, yref="container", yanchor="top", pad=dict(t=10)),
                          height=height or top + max(200, 34 * n_rows),
                          margin=dict(l=plot_room.left_margin(yl, titled=bool(y_title)), r=84, t=top, b=10))
        return fig
    fig.update_xaxes(title=x_title, **position_ticks(n_cols, col_labels, max_labels),
                     tickangle=0 if n_cols <= 10 else -45)
    fig.update_yaxes(title=y_title, autorange="reversed", **position_ticks(n_rows, row_labels, max_labels))
    fig.update_layout(title=title, height=height or int(min(640, max(280, 90 + 26 * n_rows))),
                      margin=dict(l=10, r=10, t=50 if title else 20, b=10))
    return fig


def cell_hover(rows: Sequence[str] | None, cols: Sequence[str] | None, shape: tuple[int, int], sep: str,
               fmt: str) -> dict:
    """A heatmap's hover ("row · column: value"). Labels travel once per cell as customdata; a heatmap whose two
    axes are plain positions reads them from the cell's own coordinates instead, which costs no bytes (a
    100 × 128 lab matrix sent 200 kB of "12 · 34" strings before)."""
    value = "%{z:" + fmt + "}<extra></extra>"
    if rows is None and cols is None:
        return dict(hovertemplate=f"%{{y}}{sep}%{{x}}: {value}")
    rows = rows if rows is not None else [str(i) for i in range(shape[0])]
    cols = cols if cols is not None else [str(j) for j in range(shape[1])]
    return dict(customdata=np.array([[f"{r}{sep}{c}" for c in cols] for r in rows]),
                hovertemplate="%{customdata}: " + value)


def position_ticks(n: int, labels: Sequence[str] | None, max_labels: int = 40) -> dict:
    """Axis ticks for positions 0..n-1: the labels as literal text (every k-th when there are many), or plotly's
    own numbers when there are none."""
    if labels is None:
        return dict(tickmode="auto")
    step = max(1, int(np.ceil(n / max_labels)))
    vals = list(range(0, n, step))
    return dict(tickmode="array", tickvals=vals, ticktext=[literal_label(labels[i]) for i in vals])


def labelled_heatmap(values: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *,
                     title: str = "", x_title: str | None = None, y_title: str | None = None, fmt: str = ".3f",
                     zmin: float | None = 0.0, zmax: float | None = 1.0, colorscale: str = "Blues",
                     annotate: bool | None = None, height: int | None = None) -> go.Figure:
    """A query × key matrix of tokens (weights by default: 0 to 1, blues, labels on top); the axes are named "key"
    and "query" in the session's language unless named here."""
    x_title = _("key") if x_title is None else x_title
    y_title = _("query") if y_title is None else y_title
    return matrix_heatmap(values, row_labels, col_labels, title=title, x_title=x_title, y_title=y_title, fmt=fmt,
                          zmin=zmin, zmax=zmax, colorscale=colorscale, annotate=annotate, height=height,
                          labels_on_top=True)


@remembered_figure
def weights_bars(labels: Sequence[str], series: dict[str, np.ndarray], title: str = "",
                 colors: Sequence[str] = (RAW_COLOR, SCALED_COLOR)) -> go.Figure:
    """Grouped bars of several weight vectors over the same keys (e.g. softmax with and without scaling)."""
    fig = go.Figure()
    for (name, values), color in zip(series.items(), colors):
        fig.add_bar(x=list(range(len(labels))), y=np.asarray(values), name=name, marker_color=color,
                    hovertemplate="%{y:.4f}<extra>" + name + "</extra>")
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(labels))), ticktext=[literal_label(t) for t in labels])
    fig.update_yaxes(range=[0, 1.02], title=_("weight"))
    fig.update_layout(title=title, barmode="group", height=380, margin=dict(l=70, r=10, t=50, b=72),  # measured room
                      legend=dict(orientation="h", yanchor="top", y=-0.12, x=0.5, xanchor="center"))
    return fig


@remembered_figure
def saturation_figure(curves: dict[str, np.ndarray], selected_d_k: int | None = None) -> go.Figure:
    """Four panels (2 x 2) against d_k on a log axis: score spread vs sqrt(d_k), entropy, largest weight and
    softmax gradient size, each for raw and scaled scores. ``curves`` is :func:`explorer.maths.saturation_curves`.
    """
    d_k = curves["d_k"]
    cells = ((1, 1), (1, 2), (2, 1), (2, 2))
    fig = make_subplots(rows=2, cols=2, horizontal_spacing=0.12, vertical_spacing=0.2, subplot_titles=(
        _("std of raw q·k"), _("entropy (nats)"), _("largest weight"), _("gradient size")))   # short: two fit a phone
    fig.add_scatter(x=d_k, y=curves["score_std"], name=_("measured std of q·k"), mode="lines+markers",
                    line_color=RAW_COLOR, row=1, col=1)
    fig.add_scatter(x=d_k, y=curves["sqrt_d_k"], name="√d_k", mode="lines", line=dict(color="gray", dash="dot"),
                    row=1, col=1)
    for (row, col), stem in zip(cells[1:], ("entropy", "max_weight", "grad")):
        first = stem == "entropy"
        fig.add_scatter(x=d_k, y=curves[f"{stem}_raw"], name="softmax(q·k)", mode="lines+markers",
                        line_color=RAW_COLOR, legendgroup="raw", showlegend=first, row=row, col=col)
        fig.add_scatter(x=d_k, y=curves[f"{stem}_scaled"], name="softmax(q·k / √d_k)", mode="lines+markers",
                        line_color=SCALED_COLOR, legendgroup="scaled", showlegend=first, row=row, col=col)
    fig.update_xaxes(type="log", tickvals=[1, 4, 16, 64, 256, 1024], ticktext=["1", "4", "16", "64", "256", "1024"])
    fig.update_xaxes(title="d_k", row=2)
    if selected_d_k is not None:
        for row, col in cells:
            fig.add_vline(x=selected_d_k, line=dict(color="black", width=1, dash="dash"), row=row, col=col)
    fig.update_layout(height=600, margin=dict(l=36, r=10, t=40, b=98),   # the room plotly measured for labels
                      legend=dict(orientation="h", yanchor="top", y=-0.12, x=0.5, xanchor="center"))
    return fig


@remembered_figure
def path_length_figure(recurrent: np.ndarray, attention: np.ndarray, pair: tuple[int, int] | None = None) -> go.Figure:
    """Side-by-side heatmaps of path lengths between positions, recurrent vs attention, same colour scale."""
    n = recurrent.shape[0]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=(_("recurrent model: |i − j| steps"), _("self-attention: 1 step")))
    zmax = max(int(recurrent.max()), 1)
    for col, z in ((1, recurrent), (2, attention)):
        fig.add_heatmap(z=z, x=list(range(1, n + 1)), y=list(range(1, n + 1)), zmin=0, zmax=zmax,
                        colorscale="Oranges", showscale=col == 2, colorbar=dict(title=_("steps")),
                        texttemplate="%{z}" if n <= 16 else None,
                        customdata=[[ngettext("{n} step", "{n} steps", int(v)).format(n=int(v)) for v in r] for r in z],
                        hovertemplate=_("from {i} to {j}: {steps}").format(i="%{y}", j="%{x}", steps="%{customdata}")
                        + "<extra></extra>", row=1, col=col)
        if pair is not None:
            i, j = pair
            fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                          line=dict(color="black", width=3), row=1, col=col)
    fig.update_yaxes(autorange="reversed", title=_("position i"))
    fig.update_xaxes(title=_("position j"))
    fig.update_layout(height=430, margin=dict(l=10, r=10, t=50, b=10))
    return fig


@remembered_figure
def cost_figure(table: dict[str, np.ndarray], d_model: int, selected_n: int | None = None) -> go.Figure:
    """Log-log lines of work per layer (n²·d vs n·d²) and memory for the attention weights, against n."""
    n = table["n"]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
        _("multiply-adds per layer"), _("attention weights, MiB per sequence")))
    fig.add_scatter(x=n, y=table["attention_macs"], name=_("attention n²·d"), mode="lines+markers",
                    line_color=SCALED_COLOR, row=1, col=1)
    fig.add_scatter(x=n, y=table["recurrent_macs"], name=_("recurrent n·d²"), mode="lines+markers",
                    line_color=RAW_COLOR, row=1, col=1)
    fig.add_scatter(x=n, y=table["attention_memory_bytes"] / 2 ** 20, name=_("attention weights (MiB)"),
                    mode="lines+markers", line_color="#2ca02c", row=1, col=2)
    fig.add_vline(x=d_model, line=dict(color="gray", dash="dot"), row=1, col=1)
    fig.add_annotation(x=np.log10(d_model), y=0.02, xref="x", yref="y domain", text=f" n = d = {d_model}",
                       showarrow=False, xanchor="left", font=dict(color="gray", size=11))
    if selected_n is not None:
        for col in (1, 2):
            fig.add_vline(x=selected_n, line=dict(color="black", width=1, dash="dash"), row=1, col=col)
    ticks = [v for v in (16, 64, 256, 1024, 4096, 16384, 65536) if n.min() <= v <= n.max()]
    fig.update_xaxes(type="log", title=_("sequence length n"), tickvals=ticks, ticktext=[str(v) for v in ticks])
    fig.update_yaxes(type="log")
    fig.update_yaxes(title="MiB", row=1, col=2)
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.22, x=0.5, xanchor="center"))
    return fig
