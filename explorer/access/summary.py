"""A chart in words: short summaries a screen reader reads in place of a figure, computed from its arrays.

Each function takes the numbers a figure draws and returns one plain-text paragraph (no markdown; the UI
escapes it): where each query of a heatmap looks most, the largest bars, the heads at either end of a
``[layer, head]`` map. Long lists stop after ``most`` items and say how many more the table holds. The words are
in the session's language (``explorer.words.i18n``); a ``what`` or ``name`` a caller passes is already translated.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext

MOST = 12   # items named in one summary (every byte is sent on each rerun); the chart's table holds them all


def _more(shown: int, total: int, what: str) -> str:
    """"; … and 4 more rows (see the table)" (``what``: "rows" or "heads"), or "" when nothing was left out."""
    if total <= shown:
        return ""
    n = total - shown
    if what == "heads":
        return ngettext("; … and {n} more head (see the table)", "; … and {n} more heads (see the table)",
                        n).format(n=n)
    return ngettext("; … and {n} more row (see the table)", "; … and {n} more rows (see the table)", n).format(n=n)


def row_peaks(matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str], masked: np.ndarray | None = None,
              *, row_word: str = "query", col_word: str = "key", most: int = MOST) -> str:
    """Where each row of ``matrix[row, col]`` peaks: "Where each query looks most: it → animal 0.51; …".

    ``masked`` (bool ``[row, col]``, True = hidden) and NaN cells are never named; a row with nothing left is
    skipped. Values are written with two decimals, as the heatmap's hover does. ``row_word`` "query" (a heatmap of
    attention, the default) or "row" (any other matrix: "Largest value in each row")."""
    z = np.asarray(matrix, dtype=np.float32)
    seen = np.isfinite(z) if masked is None else np.isfinite(z) & ~np.asarray(masked, dtype=bool)
    rows_seen = np.flatnonzero(seen.any(axis=1))
    grid = row_word != "query" or col_word != "key"
    if rows_seen.size == 0:
        return _("No row has a visible column.") if grid else _("No query has a visible key.")
    shown = rows_seen[:most]
    peak = np.where(seen[shown], z[shown], -np.inf).argmax(axis=1)   # only the rows written out
    parts = [f"{rows[r]} → {cols[c]} {numbers.number(z[r, c], 2)}" for r, c in zip(shown, peak)]
    heading = (_("Largest value in each row ({rows} rows, {cols} columns): {peaks}") if grid
               else _("Where each query looks most ({rows} rows, {cols} keys): {peaks}"))
    return heading.format(rows=rows_seen.size, cols=z.shape[1],
                          peaks="; ".join(parts) + _more(len(parts), rows_seen.size, "rows")) + "."


def largest(values: Sequence[float], labels: Sequence[str], *, k: int = 3, what: str | None = None) -> str:
    """"Largest: animal 0.51, tired 0.19, the 0.08 (of 12)." over the finite ``values`` (``what``: the heading,
    already in the session's language; "Largest" when None)."""
    v = np.asarray(values, dtype=np.float64)
    keep = np.flatnonzero(np.isfinite(v))
    if keep.size == 0:
        return _("No values to show.")
    order = keep[np.argsort(-v[keep], kind="stable")][:k]
    named = numbers.joined(f"{labels[i]} {numbers.number(v[i], 2)}" for i in order)
    of = " " + _("(of {n}).").format(n=keep.size) if keep.size > len(order) else "."
    return (what or _("Largest")) + ": " + named + of


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def head_extremes(values: np.ndarray, name: str, *, k: int = 3, signed: bool = False,
                  marked: np.ndarray | None = None, mark_name: str = "") -> str:
    """``values[layer, head]`` in words: the ``k`` largest heads (and, ``signed``, the ``k`` most negative), and
    which heads carry a mark (e.g. "flips")."""
    z = np.asarray(values, dtype=np.float64)
    layer, head = np.meshgrid(np.arange(z.shape[0]), np.arange(z.shape[1]), indexing="ij")
    names = [head_name(a, b) for a, b in zip(layer.ravel(), head.ravel())]
    flat = z.ravel()
    text = [largest(flat, names, k=k, what=_("Highest {name}").format(name=name))]
    if signed and np.isfinite(flat).any() and np.nanmin(flat) < 0:
        text.append(_negated(flat, names, k, name))
    if marked is not None:
        hit = [n for n, m in zip(names, np.asarray(marked, dtype=bool).ravel()) if m]
        if hit:
            text.append(_("Marked {what} ({n}): {heads}").format(
                what=mark_name or _("heads"), n=len(hit),
                heads=", ".join(hit[:MOST]) + _more(min(len(hit), MOST), len(hit), "heads")) + ".")
    return " ".join(text)


def _negated(flat: np.ndarray, names: list[str], k: int, name: str) -> str:
    return _smallest(np.where(flat < 0, flat, np.nan), names, k, _("Lowest {name}").format(name=name))


def _smallest(values: np.ndarray, names: Sequence[str], k: int, what: str) -> str:
    """Like ``largest`` from the other end, with the values as they are."""
    keep = np.flatnonzero(np.isfinite(values))
    order = keep[np.argsort(values[keep], kind="stable")][:k]
    return f"{what}: " + numbers.joined(f"{names[i]} {numbers.number(values[i], 2)}" for i in order) + "."


# What a high (or, for entropy, low) value of each overview statistic says about a head.
HEAD_TRAITS = {"entropy": (N_("Most focused (lowest entropy, nats)"), False),   # English (N_), shown through _()
               "sink": (N_("Most on special or first tokens (sinks)"), True),
               "previous_token": (N_("Most on the previous token"), True),
               "self": (N_("Most on themselves"), True),
               "mean_distance": (N_("Looking farthest (mean distance, tokens)"), True)}


def head_traits(stats: np.ndarray, names: Sequence[str], *, k: int = 3) -> str:
    """``stats[layer, head, len(names)]`` in words: for each known statistic, the ``k`` heads that show it most."""
    s = np.asarray(stats, dtype=np.float64)
    n_layers, n_heads = s.shape[:2]
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    heads = [head_name(a, b) for a, b in zip(layer.ravel(), head.ravel())]
    parts = []
    for i, stat in enumerate(names):
        what, high = HEAD_TRAITS.get(stat, (stat, True))
        what = _(what)
        column = s[..., i].ravel()
        parts.append(largest(column, heads, k=k, what=what) if high else _smallest(column, heads, k, what))
    return _("{layers} layers × {heads} heads.").format(layers=n_layers, heads=n_heads) + " " + " ".join(parts)


def strongest_links(weights: np.ndarray, rows: Sequence[str], cols: Sequence[str],
                    masked: np.ndarray | None = None, most: int = MOST) -> str:
    """``weights[head, query, key]``: each head's single strongest query → key link, e.g. "head 3: it → animal
    0.62". A query that can see one key only (a causal model's first token) gives it everything: not named."""
    w = np.asarray(weights, dtype=np.float32)
    n_heads, n_q, n_k = w.shape
    ok = np.isfinite(w)
    if masked is not None:
        seen = ~np.asarray(masked, dtype=bool)
        ok &= seen & (seen.sum(-1, keepdims=True) > 1)
    best = np.where(ok, w, -np.inf).reshape(n_heads, -1).argmax(axis=1)
    parts = []
    for h, flat in enumerate(best[:most]):
        q, c = divmod(int(flat), n_k)
        weight = numbers.number(w[h, q, c], 2)
        parts.append(_("head {head}: {query} → {key} {weight}").format(head=h, query=rows[q], key=cols[c],
                                                                        weight=weight) if ok[h, q, c]
                     else _("head {head}: nothing to name").format(head=h))
    return _("Each head's strongest link: {links}").format(
        links="; ".join(parts) + _more(len(parts), n_heads, "heads")) + "."


def number(v) -> str:
    """A number as a reader wants it: two decimals in the usual range, three significant digits outside it."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if isinstance(v, (int, np.integer)):   # positions, counts, sizes
        return str(int(v))
    return numbers.number(f, 2) if f == 0 or 0.01 <= abs(f) < 1000 else numbers.number(f, digits=3)


def series_ends(x: Sequence, y: Sequence[float], name: str) -> str:
    """A line in words: where it starts and ends, and where it is highest."""
    yv = np.asarray(y, dtype=np.float64)
    keep = np.flatnonzero(np.isfinite(yv))
    if keep.size == 0:
        return _("{name}: no values.").format(name=name)
    a, b, top = keep[0], keep[-1], keep[np.argmax(yv[keep])]
    at = [x[i] if isinstance(x[i], str) else number(x[i]) for i in (a, b, top)]
    return _("{name}: {start} at {start_at} to {end} at {end_at}, highest {top} at {top_at}.").format(
        name=name, start=number(yv[a]), start_at=at[0], end=number(yv[b]), end_at=at[1], top=number(yv[top]),
        top_at=at[2])
