"""Figures of the "What heads do" page: clickable head maps for knockouts, before/after bars, the similar-heads map.

Arrays and tables in, plotly Figures out; never calls Streamlit. Every clickable point carries
``customdata = [layer, head]`` so that ``plots.heads.clicked_head`` reads the click.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.plots import alt
from explorer.plots import room as plot_room
from explorer.plots.heads import SELECTED, value_per_head
from explorer.words import numbers
from explorer.words.i18n import _

INTACT, KNOCKED = "#718096", "#dd6b20"


def knock_map(flip: np.ndarray, knocked: np.ndarray, title: str | None = None) -> go.Figure:
    """The attention flip ``[layer, head]`` as a map to click on; knocked-out heads (bool ``[layer, head]``) carry
    a dot whose hover says so."""
    return value_per_head(flip, marked=knocked, mark_name=_("knocked out"), diverging=True,
                          value_name=_("attention flip"), title=_("Click heads to knock them out") if title is None
                          else title)


def effect_map(effect: np.ndarray, knocked: np.ndarray | None = None) -> go.Figure:
    """The sweep: ``effect[layer, head]`` = change of the pair's shift when that head alone is knocked out."""
    return value_per_head(effect, marked=knocked, mark_name=_("knocked out"), diverging=True, value_name=_("effect"),
                          title=_("Knockout effect per head (each head alone)"))


def flip_map(flip: np.ndarray) -> go.Figure:
    return value_per_head(flip, diverging=True, value_name=_("flip"), title=_("Attention flip per head"))


def before_after(before: list[float], after: list[float], value_name: str, labels=None,
                 title: str = "") -> go.Figure:
    """Each sentence's score, intact and with the chosen heads knocked out, side by side (numbers on the bars)."""
    fig = go.Figure()
    labels = labels or (_("Sentence A"), _("Sentence B"))
    for name, values, colour in ((_("intact"), before, INTACT), (_("heads knocked out"), after, KNOCKED)):
        fig.add_trace(go.Bar(x=list(labels), y=list(values), name=name, marker_color=colour,
                             text=[numbers.signed(v, 3) for v in values], textposition="outside", cliponaxis=False,
                             hovertemplate=f"%{{x}} · {name}: %{{y:.4f}}<extra></extra>"))
    top = max([abs(v) for v in [*before, *after] if np.isfinite(v)] or [1.0])
    fig.update_layout(barmode="group", height=320, title=dict(text=title, x=0.0, font=dict(size=14)),
                      margin=dict(l=10, r=10, t=40 if title else 10, b=10), plot_bgcolor="white",
                      legend=dict(orientation="h", y=-0.15), font=dict(size=14))
    low = -1.25 * top if min(before + after) < 0 else 0
    fig.update_yaxes(title=html.escape(value_name, quote=False), range=[low, 1.25 * top], zeroline=True,
                     zerolinecolor="#a0aec0", gridcolor="#edf2f7")
    return fig


def similar_heads(frame: pd.DataFrame, badges: pd.Series | None = None, selected: list | None = None) -> go.Figure:
    """Heads as points (``frame``: layer, head, x, y from ``roles.similar_heads``): close points attend alike.
    Colour is the layer; ``badges`` (one string per row) join the hover; ``selected`` heads get a red ring."""
    layer, head = frame["layer"].to_numpy(int), frame["head"].to_numpy(int)
    names = badges.to_numpy() if badges is not None else [""] * len(frame)
    named = _("layer {layer} · head {head}")
    hover = [named.format(layer=i, head=j) + (f"<br>{b}" if b else "") for i, j, b in zip(layer, head, names)]
    fig = go.Figure(go.Scatter(
        x=frame["x"], y=frame["y"], mode="markers", customdata=np.stack([layer, head], 1).tolist(),
        hovertext=hover, hoverinfo="text", name=_("heads"),
        marker=dict(size=11, color=layer, colorscale="Viridis", line=dict(width=0.5, color="white"),
                    colorbar=dict(title=dict(text=_("layer")), thickness=12))))
    if selected:
        pick = frame.set_index(["layer", "head"]).reindex([tuple(s) for s in selected]).dropna()
        fig.add_trace(go.Scatter(x=pick["x"], y=pick["y"], mode="markers", hoverinfo="skip", name=_("chosen"),
                                 marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(width=2.5, color=SELECTED))))
    fig.update_layout(height=460, showlegend=False, clickmode="event+select", plot_bgcolor="white", dragmode=False,
                      title=dict(text=_("Similar heads: close points attend alike"), x=0.0, font=dict(size=14)),
                      margin=dict(l=46, r=plot_room.colorbar_margin(_("layer")), t=40, b=42))   # plotly measured
    fig.update_xaxes(showticklabels=False, title="", zeroline=False, gridcolor="#edf2f7")
    fig.update_yaxes(showticklabels=False, title="", zeroline=False, gridcolor="#edf2f7")
    table = frame[["layer", "head"]].assign(roles=list(names)).rename(
        columns={"layer": _("layer"), "head": _("head"), "roles": _("roles")})
    roles = [f"L{i}H{j} {b}" for i, j, b in zip(layer, head, names) if b]
    if not roles:
        said = _("No head has a named role.")
    elif len(roles) > 24:
        said = _("Heads with a role ({n}): {roles}; … (see the table).").format(n=len(roles),
                                                                               roles="; ".join(roles[:24]))
    else:
        said = _("Heads with a role ({n}): {roles}.").format(n=len(roles), roles="; ".join(roles))
    return alt.attach(fig, _("Similar heads: {n} heads as points, close points attend alike.").format(n=len(frame))
                      + " " + said, lambda: [(_("heads and their roles"), table)])
