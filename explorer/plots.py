"""Figures for real-model attention: arrays in, plotly Figure out. Never calls Streamlit.

Tokens are drawn on integer positions with the tokens as tick text (so repeated words like "the" … "the"
stay apart) and the query axis runs downwards (query 0 on top), as in every attention diagram.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

COLORSCALE = "Blues"
MASKED = "#d4d4d4"       # cells a causal model cannot see
HOVER_LABELS_UP_TO = 160  # above this many tokens per side, hover shows positions instead of tokens


def label(token: str) -> str:
    """A token as literal text for plotly, which would otherwise render a subset of HTML in labels."""
    return html.escape(str(token), quote=False)


def labels(tokens: list[str]) -> list[str]:
    return [label(t) for t in tokens]


def heatmap(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], *, title: str = "",
            zmax: float | None = 1.0, masked: np.ndarray | None = None, height: int | None = None,
            show_scale: bool = True, value_name: str = "weight") -> go.Figure:
    """One head's ``weights[query, key]`` as a heatmap.

    ``masked`` (bool ``[query, key]``, True = hidden by the causal mask) is drawn grey, not as weight 0.
    ``zmax=None`` scales colours to this matrix's own maximum; 1.0 gives every head the same scale.
    """
    z = np.asarray(weights, dtype=np.float32)
    n_q, n_k = z.shape
    if masked is not None:
        z = np.where(masked, np.nan, z)
    trace = dict(z=z, x=np.arange(n_k), y=np.arange(n_q), colorscale=COLORSCALE, zmin=0.0,
                 zmax=float(np.nanmax(z)) if zmax is None and np.isfinite(z).any() else (zmax or 1.0),
                 showscale=show_scale, xgap=0, ygap=0, colorbar=dict(title=dict(text=value_name), thickness=12))
    if max(n_q, n_k) <= HOVER_LABELS_UP_TO:
        q_lab, k_lab = np.array(labels(query_tokens), dtype=object), np.array(labels(key_tokens), dtype=object)
        trace["customdata"] = np.dstack(np.broadcast_arrays(q_lab[:, None], k_lab[None, :]))
        trace["hovertemplate"] = "%{customdata[0]} → %{customdata[1]}: %{z:.3f}<extra></extra>"
    else:
        trace["hovertemplate"] = "query %{y} → key %{x}: %{z:.3f}<extra></extra>"
    fig = go.Figure(go.Heatmap(**trace))
    top = 24 + min(110, 6 * max((len(t) for t in key_tokens), default=1))  # room for the slanted key labels
    fig.update_layout(
        title=dict(text=title, x=0.0, y=0.995, yref="container", yanchor="top", font=dict(size=14)),
        height=height or max(320, min(900, top + 30 + 18 * n_q)),
        margin=dict(l=10, r=10, t=top + (22 if title else 0), b=10),
        plot_bgcolor=MASKED if masked is not None else "white")
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_k)), ticktext=labels(key_tokens), tickangle=-60,
                     side="top", showgrid=False, title=None, constrain="domain")
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_q)), ticktext=labels(query_tokens),
                     autorange="reversed", showgrid=False, title=None)
    if max(n_q, n_k) > 80:  # too many labels to read: let plotly thin them out
        fig.update_xaxes(tickmode="auto", nticks=40)
        fig.update_yaxes(tickmode="auto", nticks=40)
    return fig


def causal_hidden(n_query: int, n_key: int) -> np.ndarray:
    """True above the diagonal: the keys a causal query cannot see."""
    return np.triu(np.ones((n_query, n_key), dtype=bool), k=1 + n_key - n_query)


def query_bars(weights_row: np.ndarray, key_tokens: list[str], query_token: str, top: int = 12) -> go.Figure:
    """One query's attention as ranked horizontal bars: the "it → animal 0.51, tired 0.19 …" picture."""
    row = np.asarray(weights_row, dtype=np.float64)
    order = np.argsort(-row)[:top]
    names = [f"{label(key_tokens[i])} · {i}" for i in order]
    fig = go.Figure(go.Bar(x=row[order], y=names, orientation="h", marker_color="#2b6cb0",
                           text=[f"{v:.2f}" for v in row[order]], textposition="outside", cliponaxis=False,
                           hovertemplate="%{y}: %{x:.3f}<extra></extra>"))
    fig.update_layout(title=dict(text=f"Where {label(query_token)!s} looks", x=0.0, font=dict(size=14)),
                      height=60 + 26 * len(order), margin=dict(l=10, r=40, t=40, b=10))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, max(1e-9, float(row[order].max())) * 1.18], title="weight")
    return fig
