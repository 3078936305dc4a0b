"""Figures for real-model attention: arrays in, plotly Figure out. Never calls Streamlit.

Tokens are drawn on integer positions with the tokens as tick text (so repeated words like "the" … "the"
stay apart) and the query axis runs downwards (query 0 on top), as in every attention diagram.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.colors as pcolors
import plotly.graph_objects as go

from explorer.access import summary
from explorer.attention.overview import STATS as OVERVIEW_STATS  # the order of overview.overview_stats' columns
from explorer.maths import pool
from explorer.plots import alt
from explorer.plots import room as plot_room
from explorer.plots.base import NO_TEMPLATE, figure, label, labels
from explorer.plots.thumbnails import LEVELS, png_uri, shades
from explorer.words.i18n import _, ngettext

COLORSCALE = pcolors.get_colorscale("Blues")   # written out: figures skip plotly's validation (base.figure)
MASKED = "#d4d4d4"       # cells a causal model cannot see
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
    text = [f"{query_labels[a]} → {key_labels[b]}: " + (hidden if np.isnan(v) else f"{v:.3f}")
            for a, b, v in zip(query, key, z.ravel())]
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
                text=[f"{v:.2f}" for v in row[order]], textposition="outside", cliponaxis=False,
                hovertemplate="%{y}: %{x:.3f}<extra></extra>")
    others = ngettext("{n} other key has {weight}", "the other {n} keys share {weight}", rest).format(
        n=rest, weight=f"{row.sum() - row[order].sum():.2f}")
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

# ---------------------------------------------------------------------------------------------- grids, overview

FRAME = "#dd6b20"   # the selected tile's frame
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
                              weight=f"{w[h, a, b]:.2f}")
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
    text = (np.array(hover, dtype=object).ravel() if hover is not None else
            np.array([_("layer {layer} · head {head}").format(layer=a, head=b) for a, b in zip(layer.ravel(),
                                                                                              head.ravel())],
                     dtype=object))
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
    if stats is None:
        points["text"] = text
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
