"""Figures of one score taken apart (``explorer.attention.breakdown`` and ``score_origin``): arrays in, figures out.

Each figure carries its own text alternative (``alt.attach``) with its numbers as a table.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.colors as pcolors
import plotly.graph_objects as go

from explorer.access import summary
from explorer.attention.breakdown import ScoreBreakdown
from explorer.attention.by_distance import RotaryView
from explorer.attention.score_origin import PositionSplit
from explorer.plots import alt
from explorer.plots.base import figure, label
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

CARRIER = "#c05621"   # the dimensions that carry the score
OTHER = "#90cdf4"
QUERY, KEY = "#2b6cb0", "#9c4221"
DIVERGING = pcolors.get_colorscale("RdBu")   # written out: figures skip plotly's validation
SHOWN = 24            # product bars shown; the rest are summed in the subtitle


def _title(text: str) -> dict:
    return dict(text=text, x=0.0, font=dict(size=14))


def products(b: ScoreBreakdown, shown: int = SHOWN) -> go.Figure:
    """query[i] × key[i] for the ``shown`` dimensions that push the score most (``b.order``), largest first, the
    carriers coloured; the dimensions left out are summed in the subtitle."""
    order = b.order[:shown]
    values = b.products[order]
    marked = set(int(i) for i in b.carriers)
    names = [f"d{i}" for i in order]
    rest = b.products[b.order[shown:]].sum() if len(b.order) > shown else 0.0
    left = len(b.order) - shown
    more = ("; " + ngettext("{n} more adds {rest}", "{n} more add {rest}", left).format(
        n=left, rest=numbers.signed(rest, 3)) if left > 0 else "")
    sub = "<br><sup>" + ngettext("the {n} marked adds {sum} of {dot}", "the {n} marked add {sum} of {dot}",
                                 len(marked)).format(n=len(marked), sum=numbers.signed(b.products[b.carriers].sum(), 3),
                                                     dot=numbers.signed(b.dot, 3)) + more + "</sup>"
    bars = dict(type="bar", x=names, y=values, marker=dict(color=[CARRIER if i in marked else OTHER for i in order]),
                customdata=np.stack([b.query_vector[order], b.key_vector[order]], axis=-1).round(4).tolist(),
                hovertemplate=_("{dimension}: query {query} × key {key} = {product}").format(
                    dimension="%{x}", query="%{customdata[0]:+.3f}", key="%{customdata[1]:+.3f}", product="%{y:+.3f}")
                              + "<extra></extra>")
    fig = figure([bars], dict(
        title=_title(_("q·k, dimension by dimension") + sub),
        height=300, margin=dict(l=50, r=10, t=60, b=50), bargap=0.15,
        xaxis=dict(type="category", tickangle=-90, title=dict(text=_("dimension (sorted)"))),
        yaxis=dict(title=dict(text=_("query × key")), zeroline=True)))
    table = pd.DataFrame({_("dimension"): b.order, _("query"): b.query_vector[b.order], _("key"): b.key_vector[b.order],
                          _("product"): b.products[b.order], _("marked"): [int(i) in marked for i in b.order]})
    dimension = _("dimension {i} ({product})")
    text = _("Products of the query and key, dimension by dimension, sorted. Marked: {marked}; they add {sum} of the "
             "dot product {dot}.").format(
        marked=", ".join(dimension.format(i=int(i), product=numbers.signed(b.products[i], 3)) for i in b.carriers),
        sum=numbers.signed(b.products[b.carriers].sum(), 3), dot=numbers.signed(b.dot, 3))
    return alt.attach(fig, text, lambda: [(_("every dimension"), table.round(4))])


def vectors(b: ScoreBreakdown) -> go.Figure:
    """The query and key vectors (``d_head`` numbers each) as two rows of colour, red-blue around 0, with the
    carriers outlined."""
    z = np.stack([b.query_vector, b.key_vector])
    top = float(np.abs(z).max()) or 1.0
    heat = dict(type="heatmap", z=z.round(4), x=list(range(b.d_head)), y=[0, 1], colorscale=DIVERGING, zmid=0,
                zmin=-top, zmax=top, colorbar=dict(thickness=10, len=1.0),
                hovertemplate=_("{vector} dimension {dimension}: {value}").format(vector="%{y}", dimension="%{x}",
                                                                                   value="%{z:+.3f}")
                + "<extra></extra>")
    shapes = [dict(type="rect", x0=i - 0.5, x1=i + 0.5, y0=-0.5, y1=1.5, line=dict(color=CARRIER, width=2))
              for i in b.carriers]
    q_name, k_name = _("query · {token}").format(token=label(b.query_token)), _("key · {token}").format(
        token=label(b.key_token))
    fig = figure([heat], dict(
        title=_title(_("Query and key, {n} numbers each").format(n=b.d_head) + "<br><sup>"
                     + _("framed: the dimensions that carry the score") + "</sup>"),
        height=200, margin=dict(l=10, r=10, t=50, b=30), shapes=shapes,
        xaxis=dict(title=dict(text=_("dimension")), showgrid=False),
        yaxis=dict(tickmode="array", tickvals=[0, 1], ticktext=[q_name, k_name], autorange="reversed",
                   automargin=True, showgrid=False)))
    text = _("Query vector of “{query}” (head {head}) and key vector of “{key}” (key head {kv_head}), {n} numbers "
             "each.").format(query=b.query_token, head=b.head, key=b.key_token, kv_head=b.kv_head, n=b.d_head)
    text += " " + summary.largest(np.abs(b.query_vector), [_("dimension {i}").format(i=i) for i in range(b.d_head)],
                                  what=_("Largest query entries (size)"))
    return alt.attach(fig, text, lambda: [(_("the two vectors"), pd.DataFrame(
        {_("dimension"): range(b.d_head), _("query"): b.query_vector, _("key"): b.key_vector}).round(4))])


def split_parts(split: PositionSplit) -> go.Figure:
    """The learned-position split: one bar per part and the total beside the score it must equal."""
    names = {"token·token": _("token · token"), "token·position": _("token · position"),
             "position·token": _("position · token"), "position·position": _("position · position"),
             "rest": _("touching the rest"), "position bias": _("position bias")}
    y = [names[k] for k in split.parts] + [_("sum of the parts")]
    x = [*split.parts.values(), split.total]
    bars = dict(type="bar", x=x, y=y, orientation="h", text=[numbers.signed(v, 3) for v in x],
                textposition="outside",
                cliponaxis=False, marker=dict(color=[QUERY] * len(split.parts) + ["#2f855a"]),
                hovertemplate="%{y}: %{x:+.4f}<extra></extra>")
    span = max(abs(v) for v in x) or 1.0
    fig = figure([bars], dict(
        title=_title(_("Where the score {score} comes from").format(score=numbers.signed(split.score, 3)) + "<br><sup>"
                     + _("query part · key part") + "</sup>"),
        height=270, margin=dict(l=140, r=50, t=50, b=40), yaxis=dict(autorange="reversed"),
        xaxis=dict(range=[-span * 1.35, span * 1.35], zeroline=True, title=dict(text=_("part of the score")))))
    table = pd.DataFrame({_("query part"): [a for a, _key in split.terms],
                          _("key part"): [b for _query, b in split.terms], _("term"): list(split.terms.values())})
    text = _("The score split by where the query and key vectors come from: {parts}. They add up to {total}; the "
             "score is {score}.").format(parts="; ".join(f"{names[k]} {numbers.signed(v, 4)}"
                                                             for k, v in split.parts.items()),
                                         total=numbers.signed(split.total, 4), score=numbers.signed(split.score, 4))
    return alt.attach(fig, text, lambda: [(_("every term"), table.round(5))])


def rotary_curve(r: RotaryView, within: int) -> go.Figure:
    """The same two vectors' score at every distance (query − key), the pair's own distance marked, the distances
    this text allows shaded, and the score without rotation as a dotted line."""
    line = dict(type="scatter", x=r.distances, y=r.curve.round(5), mode="lines", line=dict(color=QUERY),
                name=_("rotated"),
                hovertemplate=_("distance {distance}: {score}").format(distance="%{x}", score="%{y:+.3f}")
                + "<extra></extra>")
    own = dict(type="scatter", x=[r.own], y=[round(r.at_own, 5)], mode="markers", name=_("this pair"),
               marker=dict(color=CARRIER, size=10),
               hovertemplate=_("this pair, distance {distance}: {score}").format(distance="%{x}", score="%{y:+.3f}")
               + "<extra></extra>")
    flat = dict(type="scatter", x=[int(r.distances.min()), int(r.distances.max())], y=[r.before, r.before],
                mode="lines",
                line=dict(color="gray", dash="dot"), name=_("not rotated"), hoverinfo="skip")
    fig = figure([line, own, flat], dict(
        title=_title(_("The same two vectors at every distance") + "<br><sup>"
                     + _("highest at {peak}; this pair at {own}").format(peak=r.peak(), own=r.own) + "</sup>"),
        height=330, margin=dict(l=50, r=10, t=55, b=95),
        legend=dict(orientation="h", yanchor="top", y=-0.42, x=0.5, xanchor="center"),
        shapes=[dict(type="rect", xref="x", yref="paper", x0=r.earliest, x1=within, y0=0, y1=1, line=dict(width=0),
                     fillcolor="rgba(43,108,176,0.08)", layer="below")],
        xaxis=dict(title=dict(text=_("distance: query − key (positions)"))),
        yaxis=dict(title=dict(text=_("score")))))
    text = _("The same query and key vectors scored at every distance from {low} to {high}: highest at {peak} "
             "({max}), lowest at {bottom} ({min}); at their own distance {own} it is {at_own}. Without rotation: "
             "{before} at every distance.").format(
        low=int(r.distances.min()), high=int(r.distances.max()), peak=r.peak(), max=numbers.signed(r.curve.max(), 3),
        bottom=int(r.distances[np.argmin(r.curve)]), min=numbers.signed(r.curve.min(), 3), own=r.own,
        at_own=numbers.signed(r.at_own, 3), before=numbers.signed(r.before, 3))
    return alt.attach(fig, text, lambda: [(_("score by distance"), pd.DataFrame(
        {_("distance"): r.distances, _("score"): r.curve}).round(5))])


def several_queries(frame: pd.DataFrame, title: str = "") -> go.Figure:
    """The summed attention of several queries per key (``matrices.several_queries``), with the mean as hover."""
    bars = dict(type="bar", x=frame["sum"].to_numpy(), y=list(frame.index), orientation="h",
                customdata=frame["mean"].round(4).tolist(), marker=dict(color=QUERY),
                hovertemplate=_("{key}: sum {sum}, mean {mean}").format(key="%{y}", sum="%{x:.3f}",
                                                                         mean="%{customdata:.3f}")
                + "<extra></extra>")
    n = frame.shape[1] - 2
    title = title or ngettext("Attention of {n} query summed (mean = sum / {n})",
                              "Attention of {n} queries summed (mean = sum / {n})", n).format(n=n)
    fig = figure([bars], dict(title=_title(title),
                              height=80 + 20 * len(frame), margin=dict(l=10, r=20, t=40, b=40),
                              yaxis=dict(autorange="reversed", automargin=True, type="category"),
                              xaxis=dict(title=dict(text=_("summed weight (of {n})").format(n=n)))))
    text = summary.largest(frame["sum"].to_numpy(), list(frame.index), k=3,
                           what=ngettext("Where the {n} chosen query looks most (sum; divide by {n} for the mean)",
                                         "Where the {n} chosen queries look most together (sum; divide by {n} for the "
                                         "mean)", n).format(n=n))
    return alt.attach(fig, text, lambda: [(_("summed and mean attention"), frame.round(4))])
