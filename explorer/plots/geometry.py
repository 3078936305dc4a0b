"""Figures of head geometry: one head's joint map of queries and keys, and a grid of a layer's heads.

Arrays in, plotly Figure out; never calls Streamlit. Queries are circles, keys crosses. Coordinates, colours and
the token index of each point (``customdata``, what a click reports) go as numpy arrays, which plotly sends as
compact binary; the only per-point strings are the hover texts (the token in its sentence) of the one-head map.
The corpus's points are WebGL traces (``Scattergl``, plotly's own advice past a thousand points): the page draws
about 20,000 of them (one head, two to four side by side, a layer's twelve, the quiz's four), which as SVG were one
element each, slow to draw on a classroom laptop and to read for a screen reader's tree (axe-core took 3.3 s on the
page, 0.7 s now). The few marks drawn over them (the chosen query, the student's own text) stay SVG.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.plots.base import figure, label
from explorer.words import numbers
from explorer.words.i18n import N_, _

COLOURS = {"position": N_("position in the sentence"), "token": N_("token"), "kind": N_("query or key")}   # English
QUERY, KEY, LINE, TEXT = "#d95f02", "#1b9e77", "#e53e3e", "#111111"
TEXT_NAME = N_("your text: queries/keys")   # the legend's name of the student's text (``_(TEXT_NAME)`` as drawn)
SYMBOLS = {"query": "circle", "key": "x-thin-open"}
PLURAL = {"query": N_("queries"), "key": N_("keys")}
ONE = {"query": N_("query"), "key": N_("key")}


def token_colour(token_ids: np.ndarray) -> np.ndarray:
    """One number in 0 … 996 per token id (the same token, the same colour), spread by a multiplicative hash."""
    return ((np.asarray(token_ids, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(997)).astype(np.int16)


def _marker(kind: str, colour: str, positions: np.ndarray, token_ids: np.ndarray, size: float) -> dict:
    base = dict(symbol=SYMBOLS[kind], size=size, line=dict(width=1.2 if kind == "key" else 0))
    if colour == "position":
        return {**base, "color": positions.astype(np.int16), "coloraxis": "coloraxis"}
    if colour == "token":
        return {**base, "color": token_colour(token_ids), "colorscale": "Turbo", "cmin": 0, "cmax": 996}
    return {**base, "color": QUERY if kind == "query" else KEY}


def joint_map(xy: np.ndarray, positions: np.ndarray, token_ids: np.ndarray, hover: list[str] | None, *,
              colour: str = "position", title: str = "", chosen: int | None = None,
              top: list[tuple[int, float, str]] = (), height: int = 560, points: np.ndarray | None = None,
              small: bool = False, text: tuple[np.ndarray, list[str]] | None = None) -> go.Figure:
    """One head's map. ``xy`` ``[2n, 2]``: queries then keys of n tokens; ``positions``, ``token_ids``,
    ``hover`` (shown as literal text; None: no hover): per token. ``points``: each token's index in the corpus (what a
    click reports; default 0 … n-1). ``chosen``: a clicked query (row of ``xy``), drawn ringed, with a line to
    each key of ``top`` (row among the keys, weight, token), the line's width following the weight. ``small``:
    no legend and no colour bar (maps side by side). ``text``: another text's points on the same map, ``[2t, 2]``
    (queries then keys) and each token's hover, drawn as one trace of large black outlines over the rest; a click on
    one reports -1 (it is no token of the corpus)."""
    n = len(positions)
    points = np.arange(n) if points is None else np.asarray(points)
    points = points.astype(np.int16 if n == 0 or points.max() < 2**15 else np.int32)   # fewer bytes to send
    size = 4 if n > 1500 else 5
    hover = None if hover is None else [label(h) for h in hover]   # plotly would render HTML in hover labels
    data = []
    for kind, part in (("query", xy[:n]), ("key", xy[n:])):
        hovering = (dict(hovertext=hover, hovertemplate="<b>" + _(ONE[kind]) + "</b> %{hovertext}<extra></extra>")
                    if hover is not None else dict(hoverinfo="skip"))
        data.append(go.Scattergl(x=part[:, 0], y=part[:, 1], mode="markers", name=_(PLURAL[kind]),
                                 customdata=points, marker=_marker(kind, colour, positions, token_ids, size),
                                 **hovering))
    if text is not None and len(text[0]):
        data.append(_text_trace(*text))
    shapes, notes = [], []
    if chosen is not None:
        qx, qy = (float(v) for v in xy[chosen])
        for key, weight, token in top:
            kx, ky = (float(v) for v in xy[n + key])
            shapes.append(dict(type="line", x0=qx, y0=qy, x1=kx, y1=ky, layer="above",
                               line=dict(color=LINE, width=1 + 5 * weight)))
            notes.append(dict(x=kx, y=ky, text=f"{label(token)} {numbers.number(weight, 2)}",
                              showarrow=False, yshift=12, font=dict(color=LINE, size=12),
                              bgcolor="rgba(255,255,255,0.8)"))
        data.append(go.Scatter(x=[qx], y=[qy], mode="markers", name=_("chosen query"), hoverinfo="skip",
                               marker=dict(symbol="circle-open", size=16, color=LINE, line=dict(width=3, color=LINE))))
    layout = dict(
        title=dict(text=title, x=0.0, font=dict(size=14)), height=height, dragmode="pan", clickmode="event+select",
        margin=dict(l=10, r=10, t=40 if title else 10, b=10), plot_bgcolor="white", shapes=shapes, annotations=notes,
        showlegend=not small, legend=dict(orientation="h", yanchor="top", y=0.0, xanchor="left", x=0.0),
        xaxis=dict(showticklabels=False, showgrid=False, zeroline=False),
        yaxis=dict(showticklabels=False, showgrid=False, zeroline=False, scaleanchor="x"),
        coloraxis=dict(colorscale="Viridis", showscale=not small,
                       colorbar=dict(title=dict(text=_("position")), thickness=12)))
    return figure(data, layout)


def _text_trace(xy: np.ndarray, hover: list[str]) -> go.Scatter:
    t = len(hover)
    words = [label(h) for h in hover]
    query, key = (_(ONE[kind]) for kind in ("query", "key"))
    return go.Scatter(x=xy[:, 0], y=xy[:, 1], mode="markers", name=_(TEXT_NAME),
                      customdata=np.full(2 * t, -1, np.int8),
                      hovertext=[f"{query} {w}" for w in words] + [f"{key} {w}" for w in words],
                      hovertemplate="<b>" + _("your text") + "</b> %{hovertext}<extra></extra>",
                      marker=dict(symbol=["circle-open"] * t + ["x-thin-open"] * t, size=11, color=TEXT,
                                  line=dict(width=2, color=TEXT)))


def layer_grid(maps: list[np.ndarray], positions: np.ndarray, *, layer: int, selected: int | None = None,
               columns: int = 4, cell: int = 190) -> go.Figure:
    """Every head of a layer as a small map (AttentionViz's matrix view), coloured by position, no hover text.

    ``maps[h]``: ``[2n, 2]`` (queries then keys) of the same n tokens (already thinned). Traces come in pairs,
    queries then keys, so a click's ``curve_number // 2`` is the head."""
    rows = -(-len(maps) // columns)
    fig = make_subplots(rows=rows, cols=columns, horizontal_spacing=0.02, vertical_spacing=0.06,
                        subplot_titles=[_("head {head}").format(head=h) for h in range(len(maps))])
    n = len(positions)
    for h, xy in enumerate(maps):
        for kind, part in (("query", xy[:n]), ("key", xy[n:])):
            name = _("head {head} {kind}").format(head=h, kind=_(PLURAL[kind]))
            hover = _("layer {layer} · head {head} ({kind}): click to open").format(layer=layer, head=h,
                                                                                   kind=_(PLURAL[kind]))
            fig.add_trace(go.Scattergl(x=part[:, 0], y=part[:, 1], mode="markers", name=name,
                                       hovertemplate=hover + "<extra></extra>",
                                       marker=dict(symbol=SYMBOLS[kind], size=3, color=positions.astype(np.int16),
                                                   coloraxis="coloraxis", line=dict(width=0.8 if kind == "key"
                                                                                    else 0))),
                          row=h // columns + 1, col=h % columns + 1)
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False)
    if selected is not None:
        ref = "" if selected == 0 else str(selected + 1)
        fig.add_shape(type="rect", xref=f"x{ref} domain", yref=f"y{ref} domain", x0=0, x1=1, y0=0, y1=1,
                      line=dict(color=LINE, width=3))
    fig.update_layout(height=rows * cell + 40, showlegend=False, plot_bgcolor="white", dragmode=False,
                      clickmode="event+select", margin=dict(l=10, r=10, t=30, b=10),
                      coloraxis=dict(colorscale="Viridis", showscale=False))
    return fig


def clicked(selection: dict | None) -> tuple[int, int] | None:
    """``(curve_number, customdata or point index)`` of the first clicked point in a Streamlit selection."""
    for point in ((selection or {}).get("selection") or {}).get("points") or []:
        curve = point.get("curve_number")
        index = point.get("customdata", point.get("point_index"))
        if isinstance(index, (list, tuple)):
            index = index[0] if index else None
        if curve is not None and index is not None:
            return int(curve), int(index)
    return None
