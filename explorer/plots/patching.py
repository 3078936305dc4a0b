"""Figures of the patching page: arrays in, plotly Figure out; never calls Streamlit.

A patched value is normalised: 0 is the corrupted run's metric, 1 the clean run's (a value past either end is drawn
as it is). ``layer_positions`` draws the residual grid, layers down and positions across, on integer positions
with the tokens as tick text (repeated tokens stay apart) and the y axis reversed so layer 0 is on top;
``heads`` draws a layers × heads map that a click reads (``plots.heads.value_per_head``: ``customdata`` =
``[layer, head]``); ``agreement`` puts the attribution preview against the exact values, one point a cell. Each
carries its text alternative: the cells that restore most, in words, and every cell as a table.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.access import summary
from explorer.plots import alt
from explorer.plots import room as plot_room
from explorer.plots.base import label
from explorer.plots.heads import value_per_head
from explorer.words import numbers
from explorer.words.i18n import _, pgettext

SCALE = [[0.0, "#2166ac"], [0.5, "#f7f7f7"], [1.0, "#b2182b"]]   # blue below 0, white at 0, red toward 1
TOP = 5   # cells named in a figure's text alternative


def _bound(z: np.ndarray, centre: float = 0.0) -> float:
    """The colour scale's half-width around ``centre``: at least 1 (the distance between the two runs), more when
    a cell lies further from ``centre``."""
    finite = z[np.isfinite(z)]
    return max(1.0, float(np.abs(finite - centre).max())) if finite.size else 1.0


def centred(fig: go.Figure, z: np.ndarray, centre: float) -> go.Figure:
    """The patching scale with white at ``centre``: the value of the run a map starts from (0 when denoising: the
    corrupted run; 1 when noising: the clean run), so that white is "patching this changed nothing" in both
    directions, blue moves toward the corrupted answer and red toward the clean one. (A noising map on a scale
    white at 0 was red from edge to edge: the cells that matter were the slightly paler ones.)"""
    bound = _bound(z, centre)
    return fig.update_traces(selector=dict(type="heatmap"), colorscale=SCALE, zmin=centre - bound,
                             zmax=centre + bound, zmid=centre)


def bar_on_top(fig: go.Figure, value_name: str) -> go.Figure:
    """The colour bar's title written along the bar, so that the grid keeps most of the chart's width (on a 390 px
    phone a bar with its title above took more than half of it); the title wrapped to a phone's width, with the
    room its lines take above the plot."""
    fig.update_traces(selector=dict(type="heatmap"), colorbar=dict(thickness=10, title=dict(text=value_name,
                                                                                             side="right")))
    title, lines = plot_room.wrapped_title(fig.layout.title.text or "")
    fig.update_layout(title=dict(text=title, **plot_room.TITLE_TOP), margin=dict(r=64, t=plot_room.title_margin(lines)))
    return fig


def tick_labels(tokens: Sequence[str]) -> list[str]:
    """The positions' tick text: each token as literal text, with its position (two equal tokens stay apart)."""
    return [f"{label(t)} ·{i}" for i, t in enumerate(tokens)]


def layer_positions(values: np.ndarray, tokens: Sequence[str], *, title: str, value_name: str,
                    other_tokens: Sequence[str] | None = None, centre: float = 0.0) -> go.Figure:
    """``values[layer, position]`` (normalised: 0 corrupted, 1 clean) as a grid: positions across (ticks: the clean
    text's tokens; ``other_tokens``, the corrupted text's, join each hover where they differ), layers down; white
    at ``centre``, the value of the run patched into (``centred``)."""
    z = np.asarray(values, dtype=np.float64)
    n_layers, n_positions = z.shape
    if len(tokens) != n_positions:
        raise ValueError(f"{len(tokens)} tokens for {n_positions} positions")
    other = list(other_tokens) if other_tokens is not None else list(tokens)
    said = _("layer {layer} · position {position} “{token}”: {value}")
    swapped = _("layer {layer} · position {position} “{token}” (corrupted: “{other}”): {value}")
    hover = [[(said if other[p] == tokens[p] else swapped).format(
        layer=l, position=p, token=label(tokens[p]), other=label(other[p]), value=numbers.number(z[l, p], 3))
        for p in range(n_positions)] for l in range(n_layers)]
    height = max(320, min(800, 160 + 20 * n_layers))
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(n_positions), y=np.arange(n_layers), text=hover, hoverinfo="text", xgap=1, ygap=1,
        colorbar=dict(title=dict(text=value_name), thickness=12)))
    centred(fig, z, centre)
    fig.update_layout(title=dict(text=title, x=0.0, font=dict(size=14)), height=height, plot_bgcolor="white",
                      dragmode=False, margin=dict(l=60, r=plot_room.colorbar_margin(value_name), t=40, b=90))
    fig.update_xaxes(title=_("position"), tickmode="array", tickvals=list(range(n_positions)),
                     ticktext=tick_labels(tokens), tickangle=-60, showgrid=False, zeroline=False)
    fig.update_yaxes(title=_("layer"), tickmode="array", tickvals=list(range(0, n_layers, max(1, n_layers // 15))),
                     range=[n_layers - 0.5, -0.5], showgrid=False, zeroline=False)
    bar_on_top(fig, value_name)
    cell = _("L{layer} · {position} “{token}”")   # the patching page's cell names, quoted the reader's way
    names = [[cell.format(layer=l, position=p, token=tokens[p]) for p in range(n_positions)] for l in range(n_layers)]
    text = _("{title}: {n_layers} layers × {n_positions} positions; 0 is the corrupted run, 1 the clean run.").format(
        title=alt.plain(title), n_layers=n_layers, n_positions=n_positions) + " " + summary.largest(
        z.ravel(), [n for row in names for n in row], k=TOP, what=_("Restoring most"))
    return alt.attach(fig, text, lambda: [(value_name, position_table(z, tokens))])


def position_table(values: np.ndarray, tokens: Sequence[str]) -> pd.DataFrame:
    """``values[layer, position]`` as a frame: a row a layer, a column a position ("3 · John")."""
    z = np.asarray(values, dtype=np.float64)
    frame = pd.DataFrame(z, columns=[f"{p} · {t}" for p, t in enumerate(tokens)])
    frame.insert(0, pgettext("table column", "layer"), np.arange(z.shape[0]))
    return frame


def heads(values: np.ndarray, *, title: str, value_name: str,
          selected: tuple[int, int] | None = None, centre: float = 0.0) -> go.Figure:
    """``values[layer, head]`` (normalised) as the clickable map every head page draws, on the patching scale white
    at ``centre`` (``centred``)."""
    z = np.asarray(values, dtype=np.float64)
    fig = value_per_head(z, title=title, value_name=value_name, diverging=True, selected=selected)
    return bar_on_top(centred(fig, z, centre), value_name)


def agreement(exact: np.ndarray, approx: np.ndarray, names: Sequence[str], *, title: str,
              disagreeing: Sequence[int] = ()) -> go.Figure:
    """The attribution preview against exact patching, one point a cell (``names``: each cell's name, flat order);
    the diagonal is where they would agree; ``disagreeing`` (flat indices) are ringed."""
    x = np.asarray(exact, dtype=np.float64).ravel()
    y = np.asarray(approx, dtype=np.float64).ravel()
    if not (x.size == y.size == len(names)):
        raise ValueError(f"{x.size} exact values, {y.size} approximations and {len(names)} names")
    said = _("{cell}: exact {exact}, preview {preview}")
    hover = [said.format(cell=label(n), exact=numbers.number(a, 3), preview=numbers.number(b, 3))
             for n, a, b in zip(names, x, y)]
    finite = np.concatenate([x[np.isfinite(x)], y[np.isfinite(y)], [0.0, 1.0]])
    low, high = float(finite.min()), float(finite.max())
    pad = 0.05 * (high - low or 1.0)
    fig = go.Figure(go.Scatter(x=[low - pad, high + pad], y=[low - pad, high + pad], mode="lines", hoverinfo="skip",
                               line=dict(color="#a0aec0", dash="dash"), name=_("agreement")))
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", hovertext=hover, hoverinfo="text", name=_("cells"),
                             marker=dict(size=7, color="#2b6cb0", opacity=0.7)))
    ring = [i for i in disagreeing if 0 <= i < x.size]
    if ring:
        fig.add_trace(go.Scatter(x=x[ring], y=y[ring], mode="markers", hoverinfo="skip", name=_("disagree most"),
                                 marker=dict(size=15, color="rgba(0,0,0,0)", line=dict(width=2, color="#c53030"))))
    fig.update_layout(title=dict(text=title, x=0.0, font=dict(size=14)), height=380, plot_bgcolor="white",
                      showlegend=False, dragmode=False, margin=dict(l=60, r=20, t=40, b=50))
    fig.update_xaxes(title=_("exact patching"), range=[low - pad, high + pad], gridcolor="#edf2f7")
    fig.update_yaxes(title=_("attribution preview"), range=[low - pad, high + pad], gridcolor="#edf2f7")
    worst = numbers.joined(f"{names[i]} ({numbers.number(x[i], 2)} / {numbers.number(y[i], 2)})" for i in ring)
    text = _("{title}: {n} cells, exact patching across, the attribution preview up; on the dashed line they "
             "agree.").format(title=alt.plain(title), n=x.size)
    if ring:
        text += " " + _("Disagreeing most (exact / preview): {cells}.").format(cells=worst)
    table = pd.DataFrame({_("cell"): list(names), _("exact patching"): x, _("attribution preview"): y})
    return alt.attach(fig, text, lambda: [(title, table)])
