"""Figures of "Which words mattered?": the methods' word scores as rows, their rank agreement, their faithfulness.

Arrays in, plotly Figures out; never calls Streamlit. Words sit on integer positions with the words as tick text
(plotly would merge two "the" categories) and every label is literal text.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.plots.base import label, labels
from explorer.words import numbers
from explorer.words.i18n import _

TOP = "#1a202c"      # outline of a method's top words


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0.0, font=dict(size=14)), height=height, plot_bgcolor="white",
                      margin=dict(l=10, r=10, t=40, b=10), dragmode=False, showlegend=False)
    return fig


def method_rows(scores: np.ndarray, words: list[str], methods: list[str], tops: list[list[int]],
                title: str = "Which words mattered, by each method") -> go.Figure:
    """``scores[method, word]`` as one row per method, each row divided by its own largest ``|score|`` (so 1 is
    that method's most important word; negative: the word pushes the prediction the other way). The words in
    ``tops[m]`` get an outline and their rank (1, 2, 3) in the cell; a row of NaN reads "not computed"."""
    s = np.asarray(scores, dtype=np.float64)
    peak = np.nanmax(np.abs(s), axis=1, keepdims=True, initial=0.0) if s.size else np.ones((len(methods), 1))
    z = np.divide(s, peak, out=np.zeros_like(s), where=peak > 0)
    z[np.isnan(s)] = np.nan
    ranks = [{w: i + 1 for i, w in enumerate(top)} for top in tops]
    missing, share = _("not computed"), _("{value} ({share} of the row's largest)")
    text = [[(missing if np.isnan(s[m, w]) and w == 0 else "") if np.isnan(s[m, w])
             else (f"#{ranks[m][w]}" if w in ranks[m] else "") for w in range(s.shape[1])] for m in range(len(s))]
    hover = [[f"{label(methods[m])} · {label(words[w])}: " + (missing if np.isnan(s[m, w]) else share.format(
              value=numbers.number(s[m, w], digits=4, sign=True), share=numbers.signed(z[m, w],
                                                                                       2))) for w in range(s.shape[1])]
             for m in range(len(s))]
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(len(words)), y=np.arange(len(methods)), text=text, texttemplate="%{text}",
        customdata=hover, hovertemplate="%{customdata}<extra></extra>", colorscale="RdBu", zmid=0, zmin=-1, zmax=1,
        xgap=2, ygap=2, showscale=False))
    for m, top in enumerate(tops):
        for w in top:
            fig.add_shape(type="rect", x0=w - 0.5, x1=w + 0.5, y0=m - 0.5, y1=m + 0.5, line=dict(color=TOP, width=2))
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(words))), ticktext=labels(words), tickangle=-90,
                     showgrid=False)
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(methods))), ticktext=labels(methods),
                     autorange="reversed", showgrid=False)
    return _layout(fig, title, 140 + 42 * len(methods))


def agreement_matrix(rho: np.ndarray, tau: np.ndarray, methods: list[str],
                     title: str = "Do they rank the words alike? (Spearman ρ)") -> go.Figure:
    """Spearman's ρ between every pair of methods as a −1…1 map with the numbers written in; Kendall's τ on
    hover."""
    n = len(methods)
    text = [["–" if np.isnan(rho[a, b]) else numbers.signed(rho[a, b], 2) for b in range(n)] for a in range(n)]
    pair, missing = _("{first} vs {second}: {numbers}"), _("not computed")
    hover = [[pair.format(first=label(methods[a]), second=label(methods[b]), numbers=missing if np.isnan(rho[a, b])
                          else f"Spearman ρ {numbers.signed(rho[a, b], 3)}{numbers.list_separator()}"
                          f"Kendall τ {numbers.signed(tau[a, b], 3)}") for b in range(n)]
             for a in range(n)]
    fig = go.Figure(go.Heatmap(
        z=rho, x=np.arange(n), y=np.arange(n), text=text, texttemplate="%{text}", customdata=hover,
        hovertemplate="%{customdata}<extra></extra>", colorscale="RdBu", zmid=0, zmin=-1, zmax=1, xgap=2, ygap=2,
        showscale=False))
    ticks = dict(tickmode="array", tickvals=list(range(n)), ticktext=labels(methods), showgrid=False)
    fig.update_xaxes(tickangle=-90, **ticks)   # upright labels never collide on a phone
    fig.update_yaxes(autorange="reversed", **ticks)
    return _layout(fig, title, 200 + 45 * n)


def faithfulness_rows(moved: np.ndarray, methods: list[str], ks, score_name: str,
                      title: str = "Top k words removed: how far the score moves") -> go.Figure:
    """``moved[method, k]`` (the score after removal minus before) as one row per method (the last row: random
    orders), one column per k, the change written in; red: the score fell. (Numbers are written in every cell
    of these figures, so they carry no colour bar: a phone has no room for one.)"""
    m = np.asarray(moved, dtype=np.float64)
    bound = float(np.nanmax(np.abs(m))) if np.isfinite(m).any() else 1.0
    missing = _("not computed")
    text = [[missing if np.isnan(v) else numbers.signed(v, 2) for v in row] for row in m]
    line, moves = _("{method}, top {k} removed: {change}"), _("{score} moves by {value}")
    hover = [[line.format(method=label(methods[i]), k=k, change=missing if np.isnan(v) else moves.format(
              score=label(score_name), value=numbers.signed(v, 3))) for k, v in zip(ks,
                                                                                    row)] for i, row in enumerate(m)]
    fig = go.Figure(go.Heatmap(
        z=m, x=np.arange(len(ks)), y=np.arange(len(methods)), text=text, texttemplate="%{text}", customdata=hover,
        hovertemplate="%{customdata}<extra></extra>", colorscale="RdBu", zmid=0, zmin=-max(bound, 1e-9),
        zmax=max(bound, 1e-9), xgap=2, ygap=2, showscale=False))
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(ks))),
                     ticktext=[_("top {k} removed").format(k=k) for k in ks], showgrid=False)
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(methods))), ticktext=labels(methods),
                     autorange="reversed", showgrid=False)
    return _layout(fig, title, 130 + 40 * len(methods))
