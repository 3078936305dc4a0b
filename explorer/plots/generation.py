"""Figures for the "Watch it write" page: arrays in, plotly Figure out. Never calls Streamlit.

Tokens sit on integer positions with the tokens as tick text (repeated tokens stay apart); every label and title
goes through ``attention.label`` so a token is shown as literal text (titles take plain text, not markup).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.plots.base import figure, label, labels
from explorer.words import numbers
from explorer.words.i18n import _, ngettext, pgettext

BLUE, ORANGE, GREY = "#2b6cb0", "#dd6b20", "#a0aec0"


def context_bars(row: np.ndarray, tokens: list[str], n_prompt: int, title: str = "") -> go.Figure:
    """One step's attention ``row[key]`` over the context in reading order: prompt tokens blue, tokens the
    model wrote itself orange."""
    row = np.asarray(row, dtype=np.float64)
    x = np.arange(len(row))
    colours = [BLUE if i < n_prompt else ORANGE for i in x]
    bars = dict(type="bar", x=x, y=row, marker=dict(color=colours), customdata=labels(tokens[:len(row)]),
                hovertemplate="%{x} · %{customdata}: %{y:.3f}<extra></extra>")
    many = len(row) > 60
    return figure([bars], dict(
        title=dict(text=label(title), x=0.0, font=dict(size=14)), height=300, margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(tickmode="auto" if many else "array", tickvals=None if many else list(x),
                   ticktext=None if many else labels(tokens[:len(row)]), tickangle=-60),
        yaxis=dict(title=dict(text=_("weight")), range=[0, max(1e-9, float(row.max())) * 1.1]), bargap=0.15))


def considered_bars(names: list[str], before: np.ndarray, after: np.ndarray, picked: int | None,
                    title: str = "") -> go.Figure:
    """The top candidates of a step: probability before (the model's own, grey) and after temperature / top-k /
    top-p (blue); the ``picked`` index (or None when the picked token is not among them) is orange."""
    n = len(names)
    y = [f"{i + 1}. {label(t)}" for i, t in enumerate(names)]
    colours = [ORANGE if i == picked else BLUE for i in range(n)]
    traces = [dict(type="bar", orientation="h", x=np.asarray(before), y=y, name=_("model's own (T = 1)"),
                   marker=dict(color=GREY), hovertemplate="%{y}: %{x:.3f}<extra>" + _("before") + "</extra>"),
              dict(type="bar", orientation="h", x=np.asarray(after), y=y, name=_("after the settings"),
                   marker=dict(color=colours), text=[numbers.number(v, 2) for v in after], textposition="outside",
                   cliponaxis=False, hovertemplate="%{y}: %{x:.3f}<extra>" + _("after") + "</extra>")]
    top = float(max(np.max(before, initial=0), np.max(after, initial=0), 1e-9))
    return figure(traces, dict(
        title=dict(text=label(title), x=0.0, font=dict(size=14)), barmode="group", height=130 + 34 * n,
        margin=dict(l=10, r=40, t=40, b=70), yaxis=dict(autorange="reversed"),
        xaxis=dict(range=[0, top * 1.2], title=dict(text=_("probability"))),
        legend=dict(orientation="h", yanchor="top", y=-0.18, x=0)))


def effect_map(heads: np.ndarray, title: str = "") -> go.Figure:
    """Each head's direct effect on the logit, ``heads[layer, head]``, red up, blue down, centred on 0."""
    z = np.asarray(heads, dtype=np.float64)
    top = max(float(np.abs(z).max()), 1e-9)
    n_layers, n_heads = z.shape
    trace = dict(type="heatmap", z=z, x=np.arange(n_heads), y=np.arange(n_layers), zmin=-top, zmax=top, zmid=0,
                 colorscale=[[0, "#2b6cb0"], [0.5, "#ffffff"], [1, "#c53030"]],
                 colorbar=dict(title=dict(text="logit"), thickness=12),
                 hovertemplate=_("layer {layer} · head {head}: {value}").format(
                     layer="%{y}", head="%{x}", value="%{z:+.3f}") + "<extra></extra>")
    return figure([trace], dict(
        title=dict(text=label(title), x=0.0, font=dict(size=14)), height=min(760, 120 + 16 * n_layers),
        margin=dict(l=10, r=10, t=40, b=10), xaxis=dict(title=dict(text=pgettext("axis", "head")), dtick=1),
        yaxis=dict(title=dict(text=pgettext("axis", "layer")), autorange="reversed")))


def parts_bars(names: list[str], values: np.ndarray, title: str = "") -> go.Figure:
    """Named parts of a logit (embeddings, all heads, each MLP, biases) as signed horizontal bars."""
    v = np.asarray(values, dtype=np.float64)
    bars = dict(type="bar", orientation="h", x=v, y=names, marker=dict(color=[ORANGE if x < 0 else BLUE for x in v]),
                hovertemplate="%{y}: %{x:+.3f}<extra></extra>")
    return figure([bars], dict(
        title=dict(text=label(title), x=0.0, font=dict(size=14)), height=min(900, 80 + 18 * len(names)),
        margin=dict(l=10, r=10, t=40, b=10), yaxis=dict(autorange="reversed"),
        xaxis=dict(title=dict(text=_("contribution to the logit")), zeroline=True)))


def cache_growth(tokens: np.ndarray, sizes: np.ndarray, step: int | None = None) -> go.Figure:
    """The key/value cache's size (kB) after each step; the chosen ``step`` marked."""
    kb = np.asarray(sizes, dtype=np.float64) / 1024
    steps = np.arange(len(kb))
    cached = [ngettext("{n} token cached", "{n} tokens cached", int(n)).format(n=n) for n in tokens]
    traces = [dict(type="scatter", x=steps, y=kb, mode="lines+markers", marker=dict(color=BLUE), customdata=cached,
                   hovertemplate=_("step {step}: {cached}, {size} kB").format(
                       step="%{x}", cached="%{customdata}", size="%{y:,.0f}") + "<extra></extra>")]
    if step is not None and 0 <= step < len(kb):
        traces.append(dict(type="scatter", x=[step], y=[kb[step]], mode="markers", showlegend=False,
                           marker=dict(color=ORANGE, size=12), hoverinfo="skip"))
    return figure(traces, dict(
        height=260, margin=dict(l=10, r=10, t=20, b=10), showlegend=False,
        xaxis=dict(title=dict(text=pgettext("axis", "step"))),
        yaxis=dict(title=dict(text=_("cache size (kB)")), rangemode="tozero")))
