"""Figures of one head across the class's sentences: small multiples (one heatmap per sentence, one colour scale)
and a word's row in every sentence, lined up on the word, its top key named. Arrays in, figures out; every token
and sentence is written as literal text (``base.label``), never markup. Never calls Streamlit."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.plots import alt
from explorer.plots import room as plot_room
from explorer.plots.attention import COLORSCALE
from explorer.plots.base import figure, label, labels
from explorer.sentences import head_in_words
from explorer.sentences.batch import ClassAttention
from explorer.words.i18n import _, ngettext

COLUMNS = 4   # tiles a row in the small multiples
TICKS_UP_TO = 12   # more tiles than this: the tokens are in the hover and the table, not on the axes
TOP_KEY_CHARS = 10   # a line's label names its top key cut to this many characters (its table holds it whole)
BAR_BELOW = 56   # px under the word's rows for the colour bar


def small_multiples(tiles: Sequence[np.ndarray], tokens: Sequence[Sequence[str]], numbers: Sequence[int], *,
                    title: str = "", said: str = "", sentences: Sequence[str] = ()) -> go.Figure:
    """One heatmap ``[query, key]`` per sentence (``tiles``), all on one colour scale from 0 to the largest weight,
    titled with the sentence's number (``numbers``: from 1, as the class list numbers them). ``said``: the summary
    in words, the figure's text alternative; ``sentences``: their texts, for its table."""
    n = len(tiles)
    cols = max(1, min(COLUMNS, n))
    rows = max(1, math.ceil(n / cols))
    zmax = max((float(np.max(t)) for t in tiles if t.size), default=1.0) or 1.0
    gap_x, gap_y = 0.04, 0.5 / max(rows, 1) / 6
    width, height = (1 - gap_x * (cols - 1)) / cols, (1 - gap_y * (rows - 1)) / rows
    data, layout, notes = [], {}, []
    for i, (tile, toks, number) in enumerate(zip(tiles, tokens, numbers)):
        r, c = divmod(i, cols)
        ax = "" if i == 0 else str(i + 1)
        x0, y1 = c * (width + gap_x), 1 - r * (height + gap_y)
        size = len(toks)
        ticks = dict(tickmode="array", tickvals=list(range(size)), ticktext=labels(list(toks)), tickfont=dict(size=8)) \
            if n <= TICKS_UP_TO else dict(showticklabels=False)
        layout[f"xaxis{ax}"] = dict(domain=[x0, x0 + width], anchor=f"y{ax}", showgrid=False, side="top",
                                    tickangle=-60, **ticks)
        layout[f"yaxis{ax}"] = dict(domain=[y1 - height, y1], anchor=f"x{ax}", showgrid=False, autorange="reversed",
                                    **ticks)
        data.append(dict(type="heatmap", z=np.asarray(tile, dtype=np.float32), xaxis=f"x{ax}", yaxis=f"y{ax}",
                         coloraxis="coloraxis", hovertemplate=_("sentence {n}").format(n=number)
                         + ": %{y} → %{x}: %{z:.3f}<extra></extra>"))
        notes.append(dict(text=f"<b>{number}</b>", x=x0, y=y1, xref="paper", yref="paper", xanchor="left",
                          yanchor="bottom", showarrow=False, font=dict(size=12)))
    layout.update(
        title=dict(text=label(title), x=0.0, font=dict(size=14)), annotations=notes, plot_bgcolor="white",
        coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=zmax, colorbar=dict(title=dict(text=_("weight")),
                                                                                 thickness=12)),
        height=max(260, 60 + rows * (230 if n <= TICKS_UP_TO else 150)), margin=dict(l=10, r=10, t=70, b=10))
    fig = figure(data, layout)
    return alt.attach(fig, said or title, lambda: [(_("The sentences"), sentence_table(numbers, sentences))])


def sentence_table(numbers: Sequence[int], sentences: Sequence[str], extra: dict[str, list] | None = None
                   ) -> pd.DataFrame:
    """The sentences by number (plain text), with ``extra`` columns (name -> one value a sentence)."""
    frame = pd.DataFrame({_("sentence"): list(numbers), _("text"): list(sentences) or [""] * len(numbers)})
    for name, values in (extra or {}).items():
        frame[name] = values
    return frame


def word_rows(rows: Sequence[np.ndarray], tokens: Sequence[Sequence[str]], queries: Sequence[int],
              tops: Sequence[int], numbers: Sequence[int], word: str, *, title: str = "", said: str = "",
              sentences: Sequence[str] = ()) -> go.Figure:
    """The word's row of weights in every sentence, one line each (top to bottom in the given order), lined up on
    the word (column 0; the columns to its left are the tokens before it). Each cell shows its token, in a size
    and length that fit the cell on a phone (``room.cell_labels``: the figure is drawn once for every screen, so
    it is laid out for the narrowest); the hover and the table hold every token whole. The line's label names
    the sentence's number and its top key; the colour bar lies under the rows, where a phone has room for it."""
    left = max(queries, default=0)
    right = max((len(t) - q for t, q in zip(tokens, queries)), default=1)
    names = [_("{n}: → “{token}”").format(n=number, token=label(_short(toks[top].strip())))
             for number, toks, top in zip(numbers, tokens, tops)]
    margin = dict(l=plot_room.left_margin(names, titled=False), r=10, t=70, b=BAR_BELOW)
    cell_px = (plot_room.PHONE_WIDTH - margin["l"] - margin["r"]) / max(left + right, 1)
    shown, size = plot_room.cell_labels([tok.strip() for toks in tokens for tok in toks], cell_px)
    z = np.full((len(rows), left + right), np.nan, dtype=np.float32)
    text = [[""] * (left + right) for _r in rows]
    whole = [[""] * (left + right) for _r in rows]
    at = 0
    for i, (row, toks, q) in enumerate(zip(rows, tokens, queries)):
        z[i, left - q:left - q + len(row)] = row
        for j, tok in enumerate(toks):
            text[i][left - q + j], whole[i][left - q + j] = label(shown[at]), label(tok.strip())
            at += 1
    height = max(240, 90 + 28 * len(rows)) + BAR_BELOW
    trace = dict(type="heatmap", z=z, x=list(range(-left, right)), y=list(range(len(rows))), text=text,
                 customdata=whole, texttemplate="%{text}", textfont=dict(size=size), colorscale=COLORSCALE,
                 zmin=0.0, zmax=float(np.nanmax(z)) if np.isfinite(z).any() else 1.0, xgap=1, ygap=2,
                 colorbar=dict(title=dict(text=_("weight"), side="right"), orientation="h", thickness=10, len=0.6,
                               x=1.0, xanchor="right", y=-16 / (height - margin["t"] - margin["b"]),
                               yanchor="top"),
                 hovertemplate="%{customdata}: %{z:.3f}<extra></extra>")
    layout = dict(title=dict(text=label(title), x=0.0, font=dict(size=14)), plot_bgcolor="white",
                  xaxis=dict(showgrid=False, zeroline=False, tickmode="array", tickvals=[0],
                             ticktext=[label(word)], side="top"),
                  yaxis=dict(tickmode="array", tickvals=list(range(len(rows))), ticktext=names, autorange="reversed",
                             showgrid=False),
                  height=height, margin=margin)
    fig = figure([trace], layout)
    tops_named = [toks[top].strip() for toks, top in zip(tokens, tops)]
    weights = [round(float(row[top]), 3) for row, top in zip(rows, tops)]
    return alt.attach(fig, said or title, lambda: [(_("The sentences"), sentence_table(
        numbers, sentences, {_("looks most at"): tops_named, _("weight"): weights}))])


def _short(token: str, chars: int = TOP_KEY_CHARS) -> str:
    return token if len(token) <= chars else token[:chars - 1] + plot_room.ELLIPSIS


def head_across(ca: ClassAttention, layer: int, head: int, word: str = "") -> go.Figure:
    """One head across the class's sentences (``batch.ClassAttention``): the word's rows when some sentence holds
    it, else one heatmap per sentence; the sentences that differ first, the summary in words as the text
    alternative."""
    n = len(ca.sentences)
    title = ngettext("Layer {layer}, head {head} across {n} sentence", "Layer {layer}, head {head} across {n} "
                     "sentences", n).format(layer=layer, head=head, n=n)
    rows = head_in_words.word_rows(ca, layer, head, word) if word else []
    s = head_in_words.summarise([r and r.kind for r in rows]) if word else None
    if s is not None and s.total:
        said = head_in_words.summary_text(s, word, rows)
        shown = [rows[i] for i in s.order if rows[i] is not None]
        return word_rows([r.row for r in shown], [ca.tokens[r.sentence] for r in shown], [r.query for r in shown],
                         [r.top for r in shown], [r.sentence + 1 for r in shown], word, title=title, said=said,
                         sentences=[ca.sentences[r.sentence] for r in shown])
    s = head_in_words.summarise(head_in_words.sentence_kinds(ca, layer, head))
    said = head_in_words.summary_text(s)
    tiles = ca.head(layer, head)
    return small_multiples([tiles[i] for i in s.order], [ca.tokens[i] for i in s.order], [i + 1 for i in s.order],
                           title=title, said=said, sentences=[ca.sentences[i] for i in s.order])
