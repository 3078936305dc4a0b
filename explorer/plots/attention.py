"""Figures for real-model attention: one head's heatmap and one query's bars (a layer's heads and every head as
thumbnails are ``explorer.plots.head_grids``); arrays in, plotly Figure out. Never calls Streamlit.

Tokens are drawn on integer positions with the tokens as tick text (so repeated words like "the" … "the"
stay apart) and the query axis runs downwards (query 0 on top), as in every attention diagram.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.colors as pcolors
import plotly.graph_objects as go

from explorer.access import summary
from explorer.plots import alt
from explorer.plots import room as plot_room
from explorer.plots.base import figure, label, labels
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

COLORSCALE = pcolors.get_colorscale("Blues")   # written out: figures skip plotly's validation (base.figure)
MASKED = "#d4d4d4"       # cells a causal model cannot see
FRAME = "#dd6b20"        # the chosen cell's or tile's frame
HOVER_LABELS_UP_TO = 100  # above this many tokens per side, hover shows positions instead of tokens


def distinct(tokens: list[str]) -> list[str]:
    """``labels(tokens)`` made distinct for plotly categories: the n-th repeat of a token gets n written in
    binary with two invisible characters (zero-width space and non-joiner), so "the" … "the" stay apart
    and look alike."""
    seen: dict[str, int] = {}
    out = []
    for text in labels(tokens):
        n = seen[text] = seen.get(text, -1) + 1
        out.append(text + ("" if n == 0 else format(n, "b").replace("0", "\u200b").replace("1", "\u200c")))
    return out


def heatmap(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], *, title: str = "",
            zmax: float | None = 1.0, masked: np.ndarray | None = None, height: int | None = None,
            show_scale: bool = True, value_name: str | None = None, clickable: bool = False,
            cell: tuple[int, int] | None = None) -> go.Figure:
    """One head's ``weights[query, key]`` as a heatmap.

    ``masked`` (bool ``[query, key]``, True = hidden by the causal mask) is drawn grey, not as weight 0.
    ``zmax=None`` scales colours to this matrix's own maximum; 1.0 gives every head the same scale.
    ``clickable`` (up to ``CLICKABLE_CELLS`` cells) lays an invisible point on every cell (:func:`cell_points`).
    ``cell`` = (row, column): a frame around that cell (the score taken apart, or the one a link takes apart).
    """
    value_name = value_name or _("weight")   # what the colours are, in the session's language
    z = np.asarray(weights, dtype=np.float32)
    n_q, n_k = z.shape
    if masked is not None:
        z = np.where(masked, np.nan, z)
    trace = dict(z=z, x=np.arange(n_k), y=np.arange(n_q), colorscale=COLORSCALE, zmin=0.0,
                 zmax=float(np.nanmax(z)) if zmax is None and np.isfinite(z).any() else (zmax or 1.0),
                 showscale=show_scale, xgap=0, ygap=0, colorbar=dict(title=dict(text=value_name), thickness=12),
                 hovertemplate=_("query {query} → key {key}: {weight}").format(query="%{y}", key="%{x}",
                                                                               weight="%{z:.3f}") + "<extra></extra>")
    named = max(n_q, n_k) <= HOVER_LABELS_UP_TO
    x_at, y_at = list(range(n_k)), list(range(n_q))
    if named:   # tokens as distinct categories: hover names them from 2n labels instead of n² strings
        x_at, y_at = distinct(key_tokens), distinct(query_tokens)
        trace.update(x=x_at, y=y_at, hovertemplate="%{y} → %{x}: %{z:.3f}<extra></extra>")
    room = plot_room.heatmap_margins(labels(query_tokens), labels(key_tokens), show_scale)  # drawn once, not regrown
    top = room["t"]
    # Ticks sit at the categories themselves: on a category axis plotly reads a number as a category's *name*
    # when one matches, so integer tick positions put token 5's label on a token "5" (and lose it).
    kind = "category" if named else "linear"
    xaxis = dict(type=kind, tickmode="array", tickvals=x_at, ticktext=labels(key_tokens),
                 tickangle=-60, side="top", showgrid=False, constrain="domain")
    yaxis = dict(type=kind, tickmode="array", tickvals=y_at, ticktext=labels(query_tokens),
                 autorange="reversed", showgrid=False)
    if max(n_q, n_k) > 80:  # too many labels to read: let plotly thin them out
        xaxis.update(tickmode="auto", nticks=40)
        yaxis.update(tickmode="auto", nticks=40)
    extra = {}
    if clickable and n_q * n_k <= CLICKABLE_CELLS:
        extra = dict(xaxis2=dict(overlaying="x", range=[-0.5, n_k - 0.5], visible=False, fixedrange=True),
                     yaxis2=dict(overlaying="y", range=[n_q - 0.5, -0.5], visible=False, fixedrange=True))
        trace["hoverinfo"] = "skip"   # the points say the same, and they are on top
        trace.pop("hovertemplate")
    points = [cell_points(z, labels(query_tokens), labels(key_tokens), value_name)] if extra else []
    if cell is not None and 0 <= cell[0] < n_q and 0 <= cell[1] < n_k:
        # on the click axes when there are some (linear, cell centres at integers); else on the heatmap's own,
        # where a number on a category axis is a category's index
        refs = ("x2", "y2") if extra else ("x", "y")
        extra["shapes"] = [dict(type="rect", xref=refs[0], yref=refs[1], x0=cell[1] - 0.5, x1=cell[1] + 0.5,
                                y0=cell[0] - 0.5, y1=cell[0] + 0.5, layer="above", line=dict(color=FRAME, width=3))]
    fig = figure([dict(type="heatmap", **trace), *points], dict(**extra,
        title=dict(text=title, x=0.0, y=0.995, yref="container", yanchor="top", font=dict(size=14)),
        height=height or max(320, min(900, top + 30 + 18 * n_q)),
        margin=dict(room, t=top + (22 if title else 0), b=10),
        plot_bgcolor=MASKED if masked is not None else "white", xaxis=xaxis, yaxis=yaxis))
    said = summary.row_peaks(weights, query_tokens, key_tokens, masked)
    return alt.attach(fig, f"{alt.plain(title)}. {said}" if title else said,
                      lambda: [(value_name, alt.matrix_table(weights, query_tokens, key_tokens, masked))])


CLICKABLE_CELLS = 40 * 40   # above this, a cell is chosen with the select boxes only (~25 bytes of hover a cell)


def cell_points(z: np.ndarray, query_labels: list[str], key_labels: list[str], value_name: str) -> dict:
    """An invisible point on the centre of every cell of heatmap ``z[query, key]`` (NaN: masked), on overlaid
    linear axes (x2, y2: key, query), so that Streamlit's ``on_select``, which ignores clicks on heatmap cells,
    reports the clicked cell as the point's x (key) and y (query). A point on top takes the hover, so the points
    carry the heatmap's hover text ("it → street: 0.196") and the heatmap's own is switched off."""
    n_q, n_k = z.shape
    query, key = np.divmod(np.arange(n_q * n_k, dtype=np.int32), n_k)
    hidden = _("hidden by the causal mask")
    values = numbers.each(z.ravel(), 3)   # the locale looked up once, not per cell
    text = [f"{query_labels[a]} → {key_labels[b]}: " + (hidden if np.isnan(v) else shown)
            for a, b, v, shown in zip(query, key, z.ravel(), values)]
    return dict(type="scatter", x=key.astype(np.int16), y=query.astype(np.int16), xaxis="x2", yaxis="y2",
                mode="markers", marker=dict(size=14, color="rgba(0,0,0,0)", symbol="square"), text=text,
                hovertemplate="%{text}<extra>" + value_name + "</extra>", selected=dict(marker=dict(opacity=0)),
                unselected=dict(marker=dict(opacity=0)), showlegend=False)


def clicked_cell(selection: dict | None) -> tuple[int, int] | None:
    """``(row, column)`` of the cell clicked on a ``clickable`` heatmap, from a Streamlit plotly selection."""
    for point in ((selection or {}).get("selection") or {}).get("points") or []:
        try:
            return int(point["y"]), int(point["x"])
        except (KeyError, TypeError, ValueError):
            continue
    return None


def query_bars(weights_row: np.ndarray, key_tokens: list[str], query_token: str, top: int = 12, *,
               key_positions: list[int] | None = None, value_name: str | None = None) -> go.Figure:
    """One query's attention as ranked horizontal bars: the "it → animal 0.51, tired 0.19 …" picture.

    Each bar is named "token · position" (``key_positions[i]`` when given, else i); keys beyond ``top`` are
    summed up in the subtitle."""
    value_name = value_name or _("weight")
    row = np.asarray(weights_row, dtype=np.float64)
    order = np.argsort(-row, kind="stable")[:top]
    where = key_positions if key_positions is not None else range(len(row))
    names = [f"{label(key_tokens[i])} · {where[i]}" for i in order]
    rest = len(row) - len(order)
    bars = dict(type="bar", x=row[order], y=names, orientation="h", marker=dict(color="#2b6cb0"),
                text=[numbers.number(v, 2) for v in row[order]], textposition="outside", cliponaxis=False,
                hovertemplate="%{y}: %{x:.3f}<extra></extra>")
    others = ngettext("{n} other key has {weight}", "the other {n} keys share {weight}", rest).format(
        n=rest, weight=numbers.number(row.sum() - row[order].sum(), 2))
    subtitle = f"<br><sup>{others}</sup>" if rest > 0 else ""
    fig = figure([bars], dict(
        title=dict(text=_("Where {token} looks").format(token=label(query_token)) + subtitle, x=0.0,
                   font=dict(size=14)),
        height=(78 if subtitle else 60) + 26 * len(order), margin=dict(l=plot_room.bar_label_margin(names), r=40,
                                                                       t=58 if subtitle else 40, b=70),
        yaxis=dict(autorange="reversed"),
        xaxis=dict(range=[0, max(1e-9, float(row[order].max())) * 1.18], title=dict(text=value_name))))
    keys = [f"{key_tokens[i]} · {where[i]}" for i in range(len(row))]
    ranked = np.argsort(-row, kind="stable")
    return alt.attach(fig, summary.largest(row, keys, k=3, what=_("Where {token} looks most").format(
                          token=query_token)),
                      lambda: [(_("where {token} looks").format(token=query_token), pd.DataFrame(
                          {_("key"): [keys[i] for i in ranked], value_name: np.round(row[ranked], 3)}))])
