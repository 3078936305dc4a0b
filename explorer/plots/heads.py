"""Figures over heads: a layers × heads map of any per-head value, and marks on ``plots.heatmap`` figures.

Arrays in, plotly Figure out; never calls Streamlit. The map has an invisible marker on every cell so that
Streamlit's ``on_select`` (which ignores clicks on heatmap cells) can report which head was clicked: each
point's ``customdata`` is ``[layer, head]``.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.access import summary
from explorer.maths import causal_mask
from explorer.plots import alt
from explorer.plots import attention as plots
from explorer.plots import room as plot_room
from explorer.words import numbers
from explorer.words.i18n import _, pgettext

SELECTED = "#e53e3e"     # outline of the chosen head / highlighted rows
MARK = "#1a202c"


def value_per_head(values: np.ndarray, *, title: str = "", value_name: str = "value",
                   selected: tuple[int, int] | None = None, marked: np.ndarray | None = None, mark_name: str = "",
                   diverging: bool = False, height: int | None = None) -> go.Figure:
    """``values[layer, head]`` as a grid: heads across, layers down (layer 0 on top).

    ``diverging`` centres a red–blue scale on 0 (for signed values such as a flip size).
    ``marked`` (bool ``[layer, head]``) puts a dot on those cells (their hover says ``mark_name``);
    ``selected`` outlines one head.
    """
    z = np.asarray(values, dtype=np.float64)
    n_layers, n_heads = z.shape
    finite = z[np.isfinite(z)]
    height = height or max(300, min(820, 110 + 26 * n_layers))
    scale = dict(colorscale="RdBu", zmid=0.0) if diverging else dict(colorscale="Viridis")
    if diverging:
        bound = max(float(np.abs(finite).max()), 1e-9) if finite.size else 1.0
        scale.update(zmin=-bound, zmax=bound)
    fig = go.Figure(go.Heatmap(z=z, x=np.arange(n_heads), y=np.arange(n_layers), hoverinfo="skip", xgap=1, ygap=1,
                               colorbar=dict(title=dict(text=value_name), thickness=12), **scale))
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    said = _("layer {layer} head {head}: {value}")
    text = [said.format(layer=l, head=h, value=numbers.number(v, 3))
            for l, h, v in zip(layer.ravel(), head.ravel(), z.ravel())]
    if marked is not None:
        flags = np.asarray(marked, dtype=bool).ravel()
        text = [t + (f" · {mark_name}" if f and mark_name else "") for t, f in zip(text, flags)]
    cell = max(6, min(40, int((height - 110) / max(n_layers, 1))))
    fig.add_trace(go.Scatter(  # invisible, one per cell: hover text and click target
        x=head.ravel(), y=layer.ravel(), mode="markers", customdata=np.stack([layer.ravel(), head.ravel()], 1).tolist(),
        marker=dict(symbol="square", size=cell, opacity=0), hovertext=text, hoverinfo="text",
        selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)), showlegend=False,
        name=_("heads")))
    if marked is not None and np.any(marked):
        ml, mh = np.nonzero(np.asarray(marked, dtype=bool))
        fig.add_trace(go.Scatter(x=mh, y=ml, mode="markers", hoverinfo="skip", showlegend=False,
                                 name=mark_name or _("marked"),
                                 marker=dict(symbol="circle", size=max(5, cell // 3), color=MARK)))
    if selected is not None:
        l, h = selected
        fig.add_shape(type="rect", x0=h - 0.5, x1=h + 0.5, y0=l - 0.5, y1=l + 0.5,
                      line=dict(color=SELECTED, width=3), layer="above")
    fig.update_layout(title=dict(text=title, x=0.0, font=dict(size=14)), height=height, clickmode="event+select",
                      margin=dict(l=68, r=plot_room.colorbar_margin(value_name), t=40 if title else 10, b=74),
                      plot_bgcolor="white", dragmode=False,
                      showlegend=False)
    fig.update_xaxes(title=_("head"), tickmode="array", tickvals=list(range(n_heads)), range=[-0.5, n_heads - 0.5],
                     showgrid=False, zeroline=False)
    fig.update_yaxes(title=_("layer"), tickmode="array", tickvals=list(range(n_layers)), range=[n_layers - 0.5, -0.5],
                     showgrid=False, zeroline=False)
    said = summary.head_extremes(z, value_name, signed=diverging, marked=marked, mark_name=mark_name)
    grid = _("{title}: {n_layers} layers × {n_heads} heads.").format(title=alt.plain(title), n_layers=n_layers,
                                                                     n_heads=n_heads)
    return alt.attach(fig, f"{grid} {said}" if title else said,
                      lambda: [(value_name, _heads_table(z, value_name, marked, mark_name))])


def _heads_table(z: np.ndarray, value_name: str, marked, mark_name: str):
    import pandas as pd

    layer, head = np.meshgrid(np.arange(z.shape[0]), np.arange(z.shape[1]), indexing="ij")
    frame = pd.DataFrame({pgettext("table column", "layer"): layer.ravel(),
                          pgettext("table column", "head"): head.ravel(), value_name: z.ravel()})
    if marked is not None:
        frame[mark_name or _("marked")] = np.asarray(marked, dtype=bool).ravel()
    return frame


def clicked_head(selection: dict | None) -> tuple[int, int] | None:
    """The ``(layer, head)`` of the first clicked point in a Streamlit plotly selection, if any."""
    points = ((selection or {}).get("selection") or {}).get("points") or []
    for point in points:
        data = point.get("customdata")
        if isinstance(data, dict):  # a typed array arrives as {"0": layer, "1": head}
            data = [data[k] for k in sorted(data, key=int)]
        try:
            if data is not None and len(data) >= 2:
                return int(data[0]), int(data[1])
            if point.get("x") is not None and point.get("y") is not None:  # heads across, layers down
                return int(point["y"]), int(point["x"])
        except (KeyError, TypeError, ValueError):
            continue
    return None


def outline(fig: go.Figure, *, rows: list[int] = (), cols: list[int] = (), n_rows: int = 0, n_cols: int = 0,
            color: str = SELECTED, label: str = "") -> go.Figure:
    """Draw boxes around whole rows (queries) and columns (keys) of a ``plots.heatmap`` figure, in place."""
    for r in rows:
        fig.add_shape(type="rect", x0=-0.5, x1=n_cols - 0.5, y0=r - 0.5, y1=r + 0.5, layer="above",
                      line=dict(color=color, width=2.5))
    for c in cols:
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=-0.5, y1=n_rows - 0.5, layer="above",
                      line=dict(color=color, width=2, dash="dot"))
    if label and len(rows):
        fig.add_annotation(x=n_cols - 0.5, y=max(rows) + 0.5, text=label, showarrow=False, xanchor="right",
                           yanchor="top", font=dict(color=color, size=12), bgcolor="rgba(255,255,255,0.85)")
    return fig


def same_x_range(*figs: go.Figure) -> None:
    """Give bar charts one x range (the largest), so two sentences' bars can be compared by length."""
    top = max((float(np.max(t.x)) for f in figs for t in f.data if t.x is not None and len(t.x)), default=1.0)
    for fig in figs:
        fig.update_xaxes(range=[0, max(top, 1e-9) * 1.18])


def flip_heatmap(weights: np.ndarray, tokens: list[str], keys: list[str], *, query_rows: list[int],
                 changed: int | None = None, causal: bool = False, title: str = "", row_label: str = "",
                 cell: tuple[int, int] | None = None) -> go.Figure:
    """One sentence's head for the flip page: the query's rows boxed, the changed word's column dotted,
    and (for a causal model) the keys each query cannot see in grey; ``cell`` framed (``plots.heatmap``)."""
    hidden = ~causal_mask(len(tokens), len(keys)) if causal else None
    fig = plots.heatmap(weights, tokens, keys, masked=hidden, title=title, cell=cell)
    cols = [changed] if changed is not None and changed < len(keys) else []
    return outline(fig, rows=query_rows, cols=cols, n_rows=len(tokens), n_cols=len(keys), label=row_label)


def flip_map(table, n_layers: int, n_heads: int, selected: tuple[int, int] | None = None) -> go.Figure:
    """``analysis.flip``'s table as a layers × heads map of the flip size, with a dot on each head that flips."""
    flip, flips = np.full((n_layers, n_heads), np.nan), np.zeros((n_layers, n_heads), dtype=bool)
    layer, head = table["layer"].to_numpy(), table["head"].to_numpy()
    flip[layer, head], flips[layer, head] = table["flip"].to_numpy(dtype=float), table["flips"].to_numpy(dtype=bool)
    return value_per_head(flip, marked=flips, mark_name=_("flips"), selected=selected, diverging=True,
                          value_name=_("flip"), title=_("Flip per head"))


def difference_heatmap(a: np.ndarray, b: np.ndarray, tokens: list[str], keys: list[str]) -> go.Figure:
    """|a − b| for one causal head on two texts of equal length: zero in every row before the first change."""
    return plots.heatmap(np.abs(np.asarray(a) - np.asarray(b)), tokens, keys, zmax=None, value_name="|A−B|",
                         masked=~causal_mask(len(tokens), len(keys)),
                         title=_("|A − B|: every row before the changed word is exactly 0"))
