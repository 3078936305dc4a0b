"""Every head at a glance: a layer's heads and the whole model's layer × head overview, each one picture of
thumbnails with a clickable tile per head and a frame on the chosen one; arrays in, plotly Figure out. Never calls
Streamlit.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.access import summary
from explorer.attention.overview import STATS as OVERVIEW_STATS  # the order of overview.stats' columns
from explorer.maths import pool
from explorer.plots import alt
from explorer.plots.attention import FRAME, MASKED
from explorer.plots.base import NO_TEMPLATE, figure, label
from explorer.plots.thumbnails import LEVELS, png_uri, shades
from explorer.words import numbers
from explorer.words.i18n import _

NO_FRAME = "rgba(0,0,0,0)"


def _frames(tiles: list[tuple[float, float, float, float]], selected: int | None, every: bool) -> list[dict]:
    """Rectangles (x0, x1, y0, y1) around tiles as plotly shapes: the ``selected`` tile's in orange, or with
    ``every`` one per tile, in tile order, all transparent. ``ui.show_figure(frame=i)`` then shows the i-th with a
    style rule, so the figure, and with it what the browser has drawn, stays the same when the selection moves."""
    picked = range(len(tiles)) if every else [] if selected is None or not 0 <= selected < len(tiles) else [selected]
    line = {} if every else dict(line=dict(color=FRAME))   # the rest comes from FRAMED's shapedefaults
    return [dict(x0=round(tiles[i][0], 2), x1=round(tiles[i][1], 2), y0=round(tiles[i][2], 2),
                 y1=round(tiles[i][3], 2), **line) for i in picked]


# The frames' common style, said once in the figure's template instead of in each of up to 12 shapes (plotly's
# shapes are rectangles unless told otherwise): about 60 bytes a frame less on the grid and the overview.
FRAMED = dict(layout=dict(shapedefaults=dict(line=dict(color=NO_FRAME, width=3))))


def head_grid(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], *,
              masked: np.ndarray | None = None, shared_scale: bool = True, selected: int | None = None,
              max_cols: int = 6, max_side: int = 48, title: str = "", layer: int | None = None,
              frames: bool = False) -> go.Figure:
    """Every head of one layer, ``weights[head, query, key]``, as ONE picture of thumbnails (average-pooled to
    at most ``max_side`` per side), like the overview: the browser gets a small PNG instead of every head's
    weights and twelve plotly subplots to lay out. Each thumbnail is titled "head h" (the ``selected`` one
    "head h ◀", framed); an invisible point on it names its strongest query → key link on hover and makes it
    clickable (``customdata`` = [layer, head] when ``layer`` is given, else [head]).

    ``masked`` (bool ``[query, key]``): cells a causal model cannot see, grey. ``shared_scale``: colour 0…1 for
    every head; otherwise each head is scaled to its own maximum. ``frames``: see :func:`_frames` (the figure then
    names no selected head).
    """
    w = np.asarray(weights, dtype=np.float32)
    n_heads = w.shape[0]
    n_rows = math.ceil(n_heads / max_cols)
    n_cols = math.ceil(n_heads / n_rows)
    tiles = pool(w, max_side)                                   # (head, p, q)
    p, q = tiles.shape[-2:]
    if not shared_scale:
        top = tiles.max(axis=(-1, -2), keepdims=True)
        tiles = np.divide(tiles, top, out=np.zeros_like(tiles), where=top > 0)
    hidden = None if masked is None else pool(~np.asarray(masked), max_side) == 0
    shade = shades(tiles, hidden, 1)                           # one image pixel a cell: plotly draws the
    band, gap = max(2, math.ceil(0.2 * p)), max(1, math.ceil(0.05 * q))  # image pixelated, so no upscaling
    cell_h, cell_w = band + p + gap, q + gap                    # white: a band above for the title, a gap
    image = np.full((n_rows, cell_h, n_cols, cell_w), LEVELS + 1, dtype=np.uint8)
    for h in range(n_heads):
        image[h // n_cols, band:band + p, h % n_cols, :q] = shade[h]
    image = image.reshape(n_rows * cell_h, n_cols * cell_w)
    rows, cols = np.divmod(np.arange(n_heads), n_cols)
    centre_x, centre_y = cols * cell_w + q / 2, rows * cell_h + band + p / 2
    if masked is not None:   # a causal query that sees one key gives it everything: not worth naming
        seen = ~np.asarray(masked, bool)
        w = np.where(seen & (seen.sum(-1, keepdims=True) > 1), w, -1.0)
    qi, ki = np.divmod(w.reshape(n_heads, -1).argmax(-1), w.shape[-1])
    strongest, plain = _("head {head}: strongest {query} → {key} {weight}"), _("head {head}")
    hover = [strongest.format(head=h, query=label(query_tokens[a]), key=label(key_tokens[b]),
                              weight=numbers.number(w[h, a, b], 2))
             if w[h, a, b] >= 0 else plain.format(head=h) for h, a, b in zip(range(n_heads), qi, ki)]
    picture = dict(type="image", source=png_uri(image, MASKED), x0=0.5, dx=1, y0=0.5, dy=1, hoverinfo="skip")
    points = dict(type="scatter", x=centre_x, y=centre_y, mode="markers", text=hover,
                  customdata=[[int(layer), h] if layer is not None else [h] for h in range(n_heads)],
                  marker=dict(size=12, color="rgba(0,0,0,0)", symbol="square"),
                  selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)),
                  hovertemplate="%{text}<br>" + _("click to show this head") + "<extra></extra>", showlegend=False)
    selected = None if frames else selected
    titles = [dict(x=x, y=r * cell_h + band / 2, xref="x", yref="y", showarrow=False, font=dict(size=13),
                   text=f"<b>{plain.format(head=h)} ◀</b>" if h == selected else plain.format(head=h))
              for h, (x, r) in enumerate(zip(centre_x, rows))]
    frame = _frames([(c * cell_w - gap / 2, c * cell_w + q + gap / 2, r * cell_h + band - gap / 2,
                      r * cell_h + band + p + gap / 2) for r, c in zip(rows, cols)], selected, frames)
    tile = min(170, 1100 // n_cols)                             # screen pixels a thumbnail
    scale = tile / q
    width, height = n_cols * cell_w * scale, n_rows * cell_h * scale
    hidden_axis = dict(visible=False, showgrid=False, zeroline=False)
    fig = figure([picture, points], dict(
        xaxis=dict(range=[0, n_cols * cell_w], **hidden_axis),
        yaxis=dict(range=[n_rows * cell_h, 0], **hidden_axis),
        width=int(width) + 20, height=int(height) + 38 + (24 if title else 0),
        margin=dict(l=10, r=10, t=28 + (24 if title else 0), b=10), annotations=titles,
        shapes=frame, template=FRAMED if frame else NO_TEMPLATE,
        hovermode="closest", hoverdistance=-1, dragmode=False, plot_bgcolor="white",
        title=dict(text=title, x=0.0, font=dict(size=14))))
    said = summary.strongest_links(weights, query_tokens, key_tokens, masked)
    where = (_("Layer {layer}: {n} heads.").format(layer=layer, n=n_heads) if layer is not None else
             _("{n} heads.").format(n=n_heads))
    return alt.attach(fig, where + " " + said, lambda: [(_("strongest link of each head"), _links_table(
        weights, query_tokens, key_tokens, masked, layer))])


def _links_table(weights, query_tokens, key_tokens, masked, layer) -> pd.DataFrame:
    """One row a head: its strongest query → key link and that weight (the head grid's table)."""
    w = np.asarray(weights, dtype=np.float64)
    if masked is not None:
        seen = ~np.asarray(masked, bool)
        w = np.where(seen & (seen.sum(-1, keepdims=True) > 1), w, np.nan)
    rows = []
    for h in range(w.shape[0]):
        finite = np.isfinite(w[h]).any()
        q, k = np.unravel_index(int(np.nanargmax(w[h])), w[h].shape) if finite else (0, 0)
        rows.append({**({_("layer"): layer} if layer is not None else {}), _("head"): h,
                     _("query"): f"{q} · {query_tokens[q]}" if finite else "", _("key"): f"{k} · {key_tokens[k]}"
                     if finite else "", _("weight"): round(float(w[h, q, k]), 3) if finite else np.nan})
    return pd.DataFrame(rows)


def overview(tiles: np.ndarray, masked: np.ndarray | None = None, *, selected: tuple[int, int] | None = None,
             shared_scale: bool = True, hover: list[list[str]] | None = None, title: str = "",
             stats: np.ndarray | None = None, stats_hover: str = "",
             stat_names: tuple[str, ...] = OVERVIEW_STATS, frame_row: int | None = None) -> go.Figure:
    """Every layer × head at once: ``tiles[layer, head, rows, cols]`` (already pooled thumbnails) drawn as ONE
    PNG image with white gaps, so the browser receives a picture, not the weights. An invisible point on each
    tile carries hover text ("layer 3 · head 5") and makes the tile clickable (``customdata`` = [layer, head]).

    ``shared_scale``: colour 0…1 for every tile; otherwise each tile is scaled to its own maximum.
    ``masked`` (bool ``[rows, cols]``) cells are drawn grey. ``selected`` gets an orange frame; instead, with
    ``frame_row``, every tile of that layer gets a hidden one (:func:`_frames`; shape h = head h): one layer's,
    not every tile's, since each shape costs the browser ~0.7 ms to draw.
    ``stats`` (``[layer, head, k]``) travel as numbers after [layer, head] in each point's customdata and
    ``stats_hover`` (a plotly hovertemplate over ``%{customdata[i]}``) writes them out: far fewer bytes than
    ``hover`` text for 30 × 9 heads. ``stat_names`` name them for the text alternative (the heads that are
    most focused, sinks…) and its table.
    """
    t = np.asarray(tiles, dtype=np.float32)
    n_layers, n_heads, p, q = t.shape
    if not shared_scale:
        top = t.max(axis=(-1, -2), keepdims=True)
        t = np.divide(t, top, out=np.zeros_like(t), where=top > 0)
    k = max(1, math.ceil(12 / max(p, q)))                       # at least ~12 image pixels a tile
    shade = shades(t, masked, k)                               # (L, H, p·k, q·k)
    cell_h, cell_w = p * k + 1, q * k + 1                       # one white pixel of gap right and below
    image = np.full((n_layers, cell_h, n_heads, cell_w), LEVELS + 1, dtype=np.uint8)
    image[:, :p * k, :, :q * k] = shade.transpose(0, 2, 1, 3)
    image = image.reshape(n_layers * cell_h, n_heads * cell_w)
    picture = dict(type="image", source=png_uri(image), x0=-0.5 + 0.5 / cell_w, dx=1 / cell_w,
                   y0=-0.5 + 0.5 / cell_h, dy=1 / cell_h, hoverinfo="skip")
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    # customdata as plain lists: a numpy array travels as a typed array and a click returns {"0": …, "1": …}
    customdata = [[int(a), int(b)] for a, b in zip(layer.ravel(), head.ravel())]
    if stats is not None:
        values = np.round(np.asarray(stats, dtype=np.float64).reshape(n_layers * n_heads, -1), 2).tolist()
        customdata = [ids + row for ids, row in zip(customdata, values)]
    points = dict(type="scatter", x=head.ravel(), y=layer.ravel(), mode="markers",
                  customdata=customdata, marker=dict(size=12, color="rgba(0,0,0,0)", symbol="square"),
                  selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)),
                  hovertemplate=(stats_hover if stats is not None else "%{text}")
                  + "<br>" + _("click to show this head") + "<extra></extra>", showlegend=False)
    if stats is None:   # the statistics' hover names each tile itself: no per-tile text to write then
        points["text"] = (np.array(hover, dtype=object).ravel() if hover is not None else np.array(
            [_("layer {layer} · head {head}").format(layer=a, head=b) for a, b in zip(layer.ravel(), head.ravel())],
            dtype=object))
    def around(a: int, b: int) -> tuple[float, float, float, float]:
        return b - 0.5, b + 0.5 - 1 / cell_w, a - 0.5, a + 0.5 - 1 / cell_h
    if frame_row is not None:
        frame = _frames([around(frame_row, b) for b in range(n_heads)], None, every=True)
    else:
        frame = _frames([around(*selected)], 0, every=False) if selected is not None else []
    tile = int(min(max(min(1000 / n_layers, 1000 / n_heads), 18), 72))
    fig = figure([picture, points], dict(
        xaxis=dict(range=[-0.5, n_heads - 0.5], tickmode="array", tickvals=list(range(n_heads)),
                   ticktext=[str(h) for h in range(n_heads)], side="top", title=dict(text=_("head")), showgrid=False,
                   zeroline=False),
        yaxis=dict(range=[n_layers - 0.5, -0.5], tickmode="array", tickvals=list(range(n_layers)),
                   ticktext=[str(i) for i in range(n_layers)], title=dict(text=_("layer")), showgrid=False,
                   zeroline=False),
        width=tile * n_heads + 88, height=tile * n_layers + 82 + (24 if title else 0),
        margin=dict(l=68, r=20, t=72 + (24 if title else 0), b=10),   # room for the labels: drawn once
        hovermode="closest", hoverdistance=-1,
        dragmode=False, plot_bgcolor="white", title=dict(text=title, x=0.0, font=dict(size=14)),
        shapes=frame, template=FRAMED if frame else NO_TEMPLATE))
    if stats is None:
        return alt.attach(fig, _("Every head as a thumbnail: {n_layers} layers × {n_heads} heads.").format(
            n_layers=n_layers, n_heads=n_heads))
    s = np.asarray(stats, dtype=np.float64)
    names = list(stat_names) if stat_names and len(stat_names) == s.shape[-1] else [
        f"statistic {i}" for i in range(s.shape[-1])]
    return alt.attach(fig, summary.head_traits(s, names), lambda: [(_("statistics of every head"), pd.DataFrame(
        {_("layer"): layer.ravel(), _("head"): head.ravel(),
         **{n: np.round(s[..., i].ravel(), 3) for i, n in enumerate(names)}}))])
