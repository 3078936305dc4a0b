"""Figures of a training run (Watch heads learn): arrays in, plotly Figure out. Never calls Streamlit.

Curves over the recorded steps (the losses, each head's score) with the phase change and the step on screen marked,
every head's attention on the probe sequence at one step, the knockout bars, the K-composition matrix against its
random baseline, and a head's OV or QK circuit over the vocabulary. Heads are named "L1H0" (layer 1, head 0).
Matrices are drawn on integer positions with the y axis reversed, so row 0 is on top.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.words.i18n import _

PHASE_COLOUR, NOW_COLOUR = "#d62728", "gray"
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
           "#d62728", "#aec7e8", "#ffbb78")


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def _marks(fig: go.Figure, phase: int | None, now: int | None) -> None:
    if phase is not None:
        fig.add_vline(x=phase, line=dict(color=PHASE_COLOUR, dash="dash"),
                      annotation=dict(text=_("phase change"), font=dict(color=PHASE_COLOUR)))
    if now is not None:
        fig.add_vline(x=now, line=dict(color=NOW_COLOUR, dash="dot"))


def curves(steps: np.ndarray, ys: dict[str, np.ndarray], *, title: str, y_title: str, phase: int | None = None,
           now: int | None = None, last_step: int | None = None, y_range: Sequence[float] | None = None,
           height: int = 300) -> go.Figure:
    """Named curves over the recorded ``steps``; ``phase``: the phase change's step (dashed, red), ``now``: the step
    on screen (dotted); ``last_step``: the run's last step, so a growing run's x axis does not rescale."""
    fig = go.Figure()
    for i, (name, y) in enumerate(ys.items()):
        fig.add_scatter(x=np.asarray(steps), y=np.asarray(y, dtype=np.float64), mode="lines", name=name,
                        line=dict(color=COLOURS[i % len(COLOURS)]))
    _marks(fig, phase, now)
    fig.update_xaxes(title=_("training step"), range=[0, last_step] if last_step else None)
    fig.update_yaxes(title=y_title, range=list(y_range) if y_range is not None else None)
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=50, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0.5, xanchor="center"))
    return fig


def loss_curves(steps, loss, first, second, **marks) -> go.Figure:
    """The loss overall and on the first and second copy of the repeated segment, in nats."""
    return curves(steps, {_("overall"): loss, _("first copy"): first, _("second copy"): second},
                  title=_("Loss (nats): overall, first copy, second copy"), y_title=_("loss (nats)"), **marks)


def head_curves(steps, scores: np.ndarray, *, title: str, **marks) -> go.Figure:
    """``scores[checkpoint, layer, head]`` as one curve a head, between 0 and 1."""
    _c, layers, heads = scores.shape
    return curves(steps, {head_name(l, h): scores[:, l, h] for l in range(layers) for h in range(heads)},
                  title=title, y_title=_("score"), y_range=(0, 1), **marks)


def probe_grid(probe: np.ndarray, tokens: Sequence[int], *, title: str) -> go.Figure:
    """``probe[layer, head, query, key]``: every head's attention on the probe sequence, a panel a head (rows:
    layers, columns: heads); the ticks are the probe's token ids."""
    layers, heads, t, _t = probe.shape
    names = [head_name(l, h) for l in range(layers) for h in range(heads)]
    fig = make_subplots(rows=layers, cols=heads, subplot_titles=names, horizontal_spacing=0.04,
                        vertical_spacing=0.08)
    ticks = [str(int(x)) for x in tokens]
    for l in range(layers):
        for h in range(heads):
            fig.add_heatmap(z=np.asarray(probe[l, h], dtype=np.float64), zmin=0, zmax=1, colorscale="Blues",
                            showscale=(l, h) == (0, 0), name=head_name(l, h), row=l + 1, col=h + 1,
                            hovertemplate=_("query {q} → key {k}: {w}").format(q="%{y}", k="%{x}", w="%{z:.2f}")
                            + "<extra></extra>")
            fig.update_yaxes(autorange="reversed", showticklabels=h == 0, tickvals=list(range(t)), ticktext=ticks,
                             tickfont=dict(size=8), row=l + 1, col=h + 1)
            fig.update_xaxes(showticklabels=False, row=l + 1, col=h + 1)
    fig.update_layout(title=title, height=160 + 260 * layers, margin=dict(l=10, r=10, t=70, b=10))
    return fig


def bars(labels: Sequence[str], values: Sequence[float], *, title: str, y_title: str,
         highlight: Sequence[bool] | None = None) -> go.Figure:
    """One bar a label (knockout costs); ``highlight``: bars drawn in the phase change's colour."""
    colours = [PHASE_COLOUR if h else COLOURS[0] for h in (highlight or [False] * len(labels))]
    fig = go.Figure(go.Bar(x=list(labels), y=np.asarray(values, dtype=np.float64), marker=dict(color=colours),
                           name=y_title))
    fig.update_yaxes(title=y_title)
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=50, b=40), showlegend=False)
    return fig


def matrix(z: np.ndarray, rows: Sequence[str], cols: Sequence[str], *, title: str, x_title: str, y_title: str,
           colorscale: str = "RdBu", centre: bool = True, text: bool = False, height: int = 420) -> go.Figure:
    """A labelled matrix (rows top to bottom); ``centre``: a diverging scale around 0; ``text``: values in cells;
    a NaN cell (a pair that does not exist) is left empty."""
    z = np.asarray(z, dtype=np.float64)
    finite = np.abs(z[np.isfinite(z)])
    most = float(finite.max()) if finite.size else 0.0
    most = most or 1.0
    fig = go.Figure(go.Heatmap(z=z, x=list(range(len(cols))), y=list(range(len(rows))), colorscale=colorscale,
                               zmin=-most if centre else 0, zmax=most, zmid=0 if centre else None,
                               texttemplate="%{z:.2f}" if text else None,
                               name=title))
    fig.update_xaxes(title=x_title, tickvals=list(range(len(cols))), ticktext=list(cols))
    fig.update_yaxes(title=y_title, tickvals=list(range(len(rows))), ticktext=list(rows), autorange="reversed")
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=50, b=40))
    return fig
