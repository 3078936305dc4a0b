"""Figures for the classroom: the class's answers to a question, and larger type for a projector. Never calls
Streamlit."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from explorer.plots import alt
from explorer.plots import room as plot_room
from explorer.plots.base import label
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

BAR = "#1f77b4"
RIGHT = "#2ca02c"
WRONG = "#b0b0b0"
BASE_FONT = 12  # plotly's default font size, used where a figure sets none
TYPED_BARS = 5  # typed answers drawn one bar each; the rest share an "other words" bar
SIDES = dict(l=50, r=20, t=50)   # the answer charts' margins but the bottom, which their labels set
LEGEND_PX = 50   # the rounds' legend under the labels: two rows on a phone


def _level_ticks(labels: Sequence[str], extra: Sequence[str] = ()) -> tuple[list[str], int]:
    """(the options' tick labels, escaped and wrapped level to fit a phone's chart, each followed by its ``extra``
    line when given; the most lines any takes)."""
    ticks, lines = plot_room.category_ticks([label(o) for o in labels], plot_room.PHONE_WIDTH - SIDES["l"]
                                            - SIDES["r"])
    if any(extra):
        ticks, lines = [t + ("<br>" + e if e else "") for t, e in zip(ticks, extra)], lines + 1
    return ticks, lines


def typed_answers(options: Sequence[str], counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """(label, count) of the answers students typed (those not among ``options``), most frequent first, ties in
    alphabetical order. A typed word's label is the word in quotes; past TYPED_BARS words, all but the first
    TYPED_BARS - 1 share one bar, "other words (n)"."""
    typed = sorted(((a, int(n)) for a, n in counts.items() if a not in options and n), key=lambda p: (-p[1], p[0]))
    bars = [(f"“{a}”", n) for a, n in typed]
    if len(bars) <= TYPED_BARS:
        return bars
    rest = bars[TYPED_BARS - 1:]
    return bars[:TYPED_BARS - 1] + [(_("other words ({n})").format(n=len(rest)), sum(n for _w, n in rest))]


def _rights(correct: str | Sequence[str] | None) -> tuple[str, ...]:
    """The right answers: one, several (a near-tie: every one the page treats as right), or none before the
    reveal."""
    return () if correct is None else (correct,) if isinstance(correct, str) else tuple(correct)


def answer_bars(options: Sequence[str], counts: Mapping[str, int], correct: str | Sequence[str] | None = None,
                title: str = "", typed: bool = False) -> go.Figure:
    """One bar per option (in the question's order) with how many students chose it.

    Before the reveal (``correct`` None) every bar has the same colour; after it the right option is green and the
    others grey (several right options, a near-tie: each green). Answers that are not among ``options`` are drawn
    after them only on a question that takes typed answers (``typed``; see :func:`typed_answers`), as literal
    text."""
    extra = typed_answers(options, counts) if typed else []
    options = [*options, *(a for a, _n in extra)]
    counts = {**{o: counts.get(o, 0) for o in options}, **dict(extra)}
    values = [int(counts.get(o, 0)) for o in options]
    total = sum(values)
    rights = _rights(correct)
    colours = [BAR if correct is None else RIGHT if o in rights else WRONG for o in options]
    share = [numbers.percent(v / total) if total else "" for v in values]
    ticks, lines = _level_ticks(options)
    below = max(40, plot_room.tick_lines_px(lines) + 8)
    fig = go.Figure(go.Bar(
        x=ticks, y=values, marker_color=colours, text=[f"{v} ({s})" if s else str(v) for v, s in zip(values, share)],
        textposition="outside", customdata=[students(v) for v in values],
        hovertemplate="%{x}: %{customdata}<extra></extra>", cliponaxis=False))
    fig.update_layout(
        title=dict(text=title or ngettext("Class answers ({n} student)", "Class answers ({n} students)", total)
                   .format(n=total), x=0.0),
        xaxis=dict(tickangle=0, automargin=True),
        yaxis=dict(title=_("students"), rangemode="tozero", dtick=max(1, (max(values, default=0) + 4) // 5)),
        height=280 + below, margin=dict(**SIDES, b=below), showlegend=False)
    said = "; ".join(f"{o}: {v}" + (f" ({s})" if s else "") for o, v, s in zip(options, values, share))
    right = " " + _("The right answer: {answer}.").format(answer=numbers.joined(rights)) if correct is not None else ""
    return alt.attach(fig, ngettext("Class answers, {n} student: {said}.", "Class answers, {n} students: {said}.",
                                    total).format(n=total, said=said) + right)


def _round_columns(options: Sequence[str], rounds: Sequence[Mapping[str, int]], typed: bool
                   ) -> tuple[list[str], list[list[int]]]:
    """Labels (the options, then the typed answers of both rounds as ``typed_answers`` names them) and each
    round's count under every label."""
    labels, values = list(options), [[int(c.get(o, 0)) for o in options] for c in rounds]
    if not typed:
        return labels, values
    both: dict[str, int] = {}
    for counts in rounds:
        for answer, n in counts.items():
            if answer not in options:
                both[answer] = both.get(answer, 0) + int(n)
    bars = typed_answers(options, both)
    named = {f"“{a}”": a for a in both}
    rest = [a for a in both if f"“{a}”" not in {name for name, _n in bars}]
    for name, _n in bars:
        labels.append(name)
        for counts, row in zip(rounds, values):
            row.append(int(counts.get(named[name], 0)) if name in named else sum(int(counts.get(a, 0)) for a in rest))
    return labels, values


def answer_rounds(options: Sequence[str], rounds: Sequence[Mapping[str, int]],
                  correct: str | Sequence[str] | None = None,
                  typed: bool = False) -> go.Figure:
    """Round 1 and round 2 of a class question side by side: two bars per option (round 1 hatched, round 2 solid),
    each labelled with its count; the legend gives each round's number of students and, after the reveal
    (``correct``), its share right. Then the right option's bars are green and its label says so; before, every
    bar has the same colour."""
    labels, values = _round_columns(options, rounds, typed)
    rights = _rights(correct)
    ticks, lines = _level_ticks(labels, [_("(right answer)") if o in rights else "" for o in labels])
    below = plot_room.tick_lines_px(lines)   # the labels, then the legend under them
    height = 290 + below + LEGEND_PX
    colours = [BAR if correct is None else RIGHT if o in rights else WRONG for o in labels]
    fig = go.Figure()
    said = []
    for r, row in enumerate(values, 1):
        total = sum(row)
        share = [numbers.percent(v / total) if total else "" for v in row]
        right = any(a in labels for a in rights) and total
        name = (ngettext("round {r}: {n} student, {share} right", "round {r}: {n} students, {share} right", total)
                if right else ngettext("round {r}: {n} student", "round {r}: {n} students", total)).format(
            r=r, n=total, share=numbers.percent(sum(row[labels.index(a)] for a in rights if a in labels) / total)
            if right else "")
        fig.add_bar(x=ticks, y=row, name=name, text=[str(v) for v in row], textposition="outside",
                    marker=dict(color=colours, line=dict(color=colours, width=1.5),
                                pattern=dict(shape="/" if r == 1 else "", fgcolor="#ffffff", solidity=0.45)),
                    customdata=[[students(v), s] for v, s in zip(row, share)],
                    hovertemplate=_("round {r}").format(r=r) + " · %{x}: %{customdata[0]} (%{customdata[1]})"
                    + "<extra></extra>", cliponaxis=False)
        said.append(f"{name}: " + "; ".join(f"{o}: {v}" + (f" ({s})" if s else "")
                                            for o, v, s in zip(labels, row, share)))
    top = max((v for row in values for v in row), default=0)
    fig.update_layout(
        barmode="group", title=dict(text=_("Class answers, round 1 and round 2"), x=0.0),
        yaxis=dict(title=_("students"), rangemode="tozero", dtick=max(1, (top + 4) // 5)),
        xaxis=dict(tickangle=0, automargin=True),
        legend=dict(orientation="h", x=0.0, yanchor="top",
                    y=-(below + 6) / (height - SIDES["t"] - below - LEGEND_PX)),
        height=height, margin=dict(**SIDES, b=below + LEGEND_PX))
    right = " " + _("The right answer: {answer}.").format(answer=numbers.joined(rights)) if correct is not None else ""
    return alt.attach(fig, _("Class answers, {rounds}.").format(rounds=". ".join(said)) + right)


def _scaled(size, factor: float, fallback: float) -> float:
    return round((size if size is not None else fallback) * factor, 1)


def students(n: int) -> str:
    """"1 student", "3 students": a count of students for a hover."""
    return ngettext("{n} student", "{n} students", n).format(n=n)


def scale_fonts(fig: go.Figure, factor: float) -> go.Figure:
    """``fig`` with every font (layout, title, axes, ticks, colour bars, annotations, text on traces) ``factor``
    times larger, margins grown to fit; returned for chaining. A factor of 1 changes nothing."""
    if factor == 1:
        return fig
    layout = fig.layout
    base = layout.font.size or BASE_FONT
    layout.font.size = _scaled(base, factor, BASE_FONT)
    if layout.title.text:
        layout.title.font.size = _scaled(layout.title.font.size, factor, base * 1.4)
    for name in [n for n in layout if n.startswith(("xaxis", "yaxis"))]:
        axis = layout[name]
        axis.tickfont.size = _scaled(axis.tickfont.size, factor, base)
        axis.title.font.size = _scaled(axis.title.font.size, factor, base)
    if layout.showlegend is not False:
        layout.legend.font.size = _scaled(layout.legend.font.size, factor, base)
    for note in layout.annotations:
        note.font.size = _scaled(note.font.size, factor, base)
    for trace in fig.data:
        if "textfont" in trace:
            trace.textfont.size = _scaled(trace.textfont.size, factor, base)
        if "colorbar" in trace:
            trace.colorbar.tickfont.size = _scaled(trace.colorbar.tickfont.size, factor, base)
    margin = layout.margin
    plot_px = _plot_height(layout)
    for side in ("l", "r", "t", "b"):
        if margin[side] is not None:
            margin[side] = int(margin[side] * factor)
    if layout.height:
        layout.height = int(layout.height * (1 + (factor - 1) / 2))
    if plot_px and layout.legend.y is not None and layout.legend.y < 0:   # under the labels: as far, in larger type
        layout.legend.y = layout.legend.y * plot_px * factor / _plot_height(layout)
    return fig


def _plot_height(layout) -> float | None:
    """The plot area's height in px (the figure's less its top and bottom margins); None when the figure sets none."""
    margin = layout.margin
    return layout.height - (margin.t or 0) - (margin.b or 0) if layout.height else None
