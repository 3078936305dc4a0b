"""The head atlas's figures: every head as one point of two measures, and one head's measures among the model's.

Arrays in, Figure out; each figure carries its text alternative (``alt.attach``). Points carry ``customdata``
``[layer, head]``, so a click opens that head's card (``alt.clickable_heads``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from explorer.access.summary import head_name
from explorer.plots import alt
from explorer.plots.base import figure, label
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

SELECTED = "#e53e3e"
OTHERS = "#718096"
NAME_COLOUR = "#4a5568"   # a measure's name above its strip (contrast 7.5:1 on white)
ROW_PX = 46               # a strip's height: its name (15 px) above its ticks (12 px), and room between
NAME_ABOVE = 0.2          # a name's baseline above its strip, in rows (9 px of 46: clear of the 12 px ticks)


def _heads(n_layers: int, n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    return layer.ravel(), head.ravel()


def head_scatter(x: np.ndarray, y: np.ndarray, x_name: str, y_name: str, *, shown: np.ndarray | None = None,
                 selected: tuple[int, int] | None = None, height: int = 460):
    """Every head of ``x``/``y`` (``[layer, head]`` each) as one point, coloured by layer; ``shown`` (bool
    ``[layer, head]``) keeps only those heads (a filter); ``selected`` rings one head."""
    n_layers, n_heads = x.shape
    layer, head = _heads(n_layers, n_heads)
    xs, ys = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    keep = np.isfinite(xs) & np.isfinite(ys)
    if shown is not None:
        keep = keep & np.asarray(shown, dtype=bool).ravel()
    said = _("{head}: {x_name} {x}, {y_name} {y}")
    hover = [said.format(head=head_name(l, h), x_name=x_name, x=numbers.number(a, 3), y_name=y_name,
                         y=numbers.number(b, 3)) for l, h, a, b in zip(layer[keep], head[keep], xs[keep], ys[keep])]
    data = [dict(type="scatter", x=xs[keep], y=ys[keep], mode="markers", name=_("heads"),
                 customdata=np.stack([layer[keep], head[keep]], 1).tolist(), hovertext=hover, hoverinfo="text",
                 marker=dict(size=9, color=layer[keep], colorscale="Viridis", cmin=0, cmax=max(n_layers - 1, 1),
                             line=dict(width=0.5, color="white"),
                             colorbar=dict(title=dict(text=_("layer")), thickness=12)),
                 showlegend=False)]
    if selected is not None and 0 <= selected[0] < n_layers and 0 <= selected[1] < n_heads:
        l, h = selected
        data.append(dict(type="scatter", x=[float(x[l, h])], y=[float(y[l, h])], mode="markers", hoverinfo="skip",
                         name=head_name(l, h), showlegend=False,
                         marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(width=3, color=SELECTED))))
    fig = figure(data, dict(height=height, margin=dict(l=60, r=20, t=30, b=60), dragmode=False,
                            clickmode="event+select", plot_bgcolor="white",
                            xaxis=dict(title=dict(text=x_name), gridcolor="#e2e8f0", zeroline=False),
                            yaxis=dict(title=dict(text=y_name), gridcolor="#e2e8f0", zeroline=False)))
    return alt.attach(fig, scatter_words(xs[keep], ys[keep], layer[keep], head[keep], x_name, y_name),
                      lambda: [(_("heads"), pd.DataFrame({_("layer"): layer[keep], _("head"): head[keep],
                                                          x_name: np.round(xs[keep], 3),
                                                          y_name: np.round(ys[keep], 3)}))])


def scatter_words(xs, ys, layers, heads, x_name: str, y_name: str) -> str:
    """The scatter in words: how many heads, the highest on each axis."""
    if len(xs) == 0:
        return _("No head matches the filter.")
    ix, iy = int(np.argmax(xs)), int(np.argmax(ys))
    return ngettext("{n} head, {x_name} across and {y_name} up. Highest {x_name}: {hx} ({x}). Highest {y_name}: "
                    "{hy} ({y}).", "{n} heads, {x_name} across and {y_name} up. Highest {x_name}: {hx} ({x}). Highest "
                    "{y_name}: {hy} ({y}).", len(xs)).format(n=numbers.integer(len(xs)), x_name=x_name, y_name=y_name,
                              hx=head_name(int(layers[ix]), int(heads[ix])), x=numbers.number(xs[ix], 3),
                              hy=head_name(int(layers[iy]), int(heads[iy])), y=numbers.number(ys[iy], 3))


def measures_strip(values: dict[str, np.ndarray], names: dict[str, str], head: tuple[int, int], height: int = 0):
    """One row per measure: every head of the model as a grey tick at its value, scaled to the measure's range
    (0 = the lowest head, 1 = the highest), and ``head`` as a red dot: where this head stands among the model's."""
    rows = list(values)
    data_x, data_y, hover, mine_x, mine_hover = [], [], [], [], []
    for i, name in enumerate(rows):
        v = np.asarray(values[name], dtype=np.float64)
        flat = v.ravel()
        lo, hi = np.nanmin(flat), np.nanmax(flat)
        span = hi - lo if hi > lo else 1.0
        finite = np.isfinite(flat)
        data_x += ((flat[finite] - lo) / span).tolist()
        data_y += [i] * int(finite.sum())
        hover += [numbers.number(a, 3) for a in flat[finite]]
        mine = float(v[head])
        mine_x.append((mine - lo) / span if np.isfinite(mine) else np.nan)
        rank = int((flat[finite] > mine).sum()) + 1
        mine_hover.append(_("{value}: rank {rank} of {n}").format(value=numbers.number(mine, 3),
                                                                  rank=numbers.integer(rank),
                                                                  n=numbers.integer(int(finite.sum()))))
    # each measure's name above its strip, not beside it: beside, the names took most of a 390 px phone's width
    # and left the strips a few pixels; "lowest"/"highest" under the ends, aligned inwards (a centred tick text at
    # the right end was cut)
    data = [dict(type="scatter", x=data_x, y=data_y, mode="markers", hovertext=hover, hoverinfo="text",
                 name=_("every head"), showlegend=False,
                 marker=dict(symbol="line-ns-open", size=12, color=OTHERS, opacity=0.5)),
            dict(type="scatter", x=mine_x, y=list(range(len(rows))), mode="markers", hovertext=mine_hover,
                 hoverinfo="text", name=head_name(*head), showlegend=False,
                 marker=dict(size=12, color=SELECTED))]
    named = [dict(x=0, xref="paper", y=i - NAME_ABOVE, yref="y", text=label(names[r]), showarrow=False,
                  xanchor="left", yanchor="bottom", font=dict(size=12, color=NAME_COLOUR))
             for i, r in enumerate(rows)]
    ends = [dict(x=x, xref="paper", y=0, yref="paper", yanchor="top", yshift=-4, xanchor=side, showarrow=False,
                 text=text, font=dict(size=12, color=NAME_COLOUR))
            for x, side, text in ((0, "left", _("lowest head")), (1, "right", _("highest head")))]
    fig = figure(data, dict(height=height or 40 + ROW_PX * len(rows), margin=dict(l=10, r=10, t=4, b=24),
                            dragmode=False, plot_bgcolor="white", annotations=named + ends,
                            xaxis=dict(range=[-0.05, 1.05], showticklabels=False, showgrid=False, zeroline=False,
                                       fixedrange=True),
                            yaxis=dict(range=[len(rows) - 0.6, -0.75], showticklabels=False, showgrid=False,
                                       zeroline=False, fixedrange=True)))
    return alt.attach(fig, strip_words(values, names, head), lambda: [(head_name(*head), strip_table(values, names,
                                                                                                       head))])


def strip_table(values: dict[str, np.ndarray], names: dict[str, str], head: tuple[int, int]) -> pd.DataFrame:
    rows = []
    for name, v in values.items():
        flat = np.asarray(v, dtype=np.float64).ravel()
        flat = flat[np.isfinite(flat)]
        mine = float(np.asarray(v)[head])
        rows.append({_("measure"): names[name], _("this head"): round(mine, 3),
                     _("rank"): int((flat > mine).sum()) + 1, _("median head"): round(float(np.median(flat)), 3),
                     _("highest head"): round(float(flat.max()), 3)})
    return pd.DataFrame(rows)


def strip_words(values: dict[str, np.ndarray], names: dict[str, str], head: tuple[int, int]) -> str:
    parts = []
    for name, v in values.items():
        flat = np.asarray(v, dtype=np.float64).ravel()
        flat = flat[np.isfinite(flat)]
        mine = float(np.asarray(v)[head])
        parts.append(_("{measure} {value} (rank {rank} of {n})").format(
            measure=names[name], value=numbers.number(mine, 3), rank=numbers.integer(int((flat > mine).sum()) + 1),
            n=numbers.integer(len(flat))))
    return _("{head} among the model's heads: {parts}.").format(head=head_name(*head), parts="; ".join(parts))
