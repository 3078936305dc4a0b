"""Room for a chart's tick labels, worked out before the browser measures them.

plotly.js draws a chart, measures its tick labels and colour bar, and when they need wider margins than the figure
gave ("automargin") it draws the whole chart again with the grown margins, once per margin that moved. The
figures here used to give 10 px and let plotly grow them: every heatmap was drawn two or three times, which was
about a fifth of a follower's browser work for a page. A figure that asks for at least the room its labels take
is drawn once; plotly still grows any margin this estimate leaves short, so a label is never cut.

The width of a label is summed from Source Sans's advance widths (the font of Streamlit's theme, which draws the
ticks at 12 px), made 6 % wider: the table is the font's default instance (weight 200) and the ticks are drawn at
weight 400, which measured 3–4 % wider. Characters outside ASCII count one em (CJK is that wide; most are less).
"""
from __future__ import annotations

import html
import math

TICK_PX = 12   # Streamlit theme's tick font size
# advance widths of " " .. "~" in thousandths of an em (SourceSansVF-Upright, Streamlit's static media)
_ASCII = (200, 248, 336, 472, 472, 798, 562, 208, 270, 270, 386, 472, 208, 294, 208, 360, 472, 472, 472, 472, 472,
          472, 472, 472, 472, 472, 208, 208, 472, 472, 472, 394, 802, 520, 574, 562, 600, 510, 470, 600, 634, 232,
          456, 550, 460, 698, 632, 648, 542, 648, 534, 516, 520, 630, 482, 764, 470, 436, 538, 270, 360, 270, 472,
          500, 532, 486, 538, 446, 540, 478, 252, 480, 522, 222, 222, 452, 230, 806, 526, 532, 540, 540, 306, 400,
          302, 524, 422, 672, 392, 424, 396, 270, 220, 270, 472)
_OTHER = {"\u00b7": 250, "\u200b": 0, "\u200c": 0, "\u2026": 820}   # middle dot, the invisible repeat marks, …
HEAVIER = 1.06
ROTATED = math.sin(math.radians(60))   # the heatmap's key labels slant at 60°


def text_px(text: str, size: float = TICK_PX) -> float:
    """Width in px of ``text`` (plotly label text: HTML entities are drawn as their characters) at ``size`` px."""
    em = 0
    for ch in html.unescape(str(text)):
        code = ord(ch)
        em += _ASCII[code - 32] if 32 <= code < 127 else _OTHER.get(ch, 1000)
    return em / 1000 * size * HEAVIER


def widest(labels, size: float = TICK_PX) -> float:
    return max((text_px(t, size) for t in labels), default=0.0)


def heatmap_margins(query_labels, key_labels, show_scale: bool) -> dict:
    """Margins (px, before the title) that hold a token heatmap's labels: query labels on the left, key labels
    slanted on top, and on the right the colour bar or the overhang of the last key label.

    The constants are plotly's own spacing measured in Chromium (tick, gap, margin padding): the left margin
    came out as the widest label + 26.5 px and the top as 0.87 × the widest key label + 17 px; the colour bar
    needs 82 px."""
    left = left_margin(query_labels, titled=False)
    top = ROTATED * widest(key_labels) + 20
    last = text_px(list(key_labels)[-1]) if len(key_labels) else 0.0
    right = max(84 if show_scale else 0, last / 2 + 12)
    return dict(l=math.ceil(left), r=math.ceil(right), t=math.ceil(top))


def left_margin(labels, titled: bool) -> int:
    """Left margin (px) for a matrix's row labels, with an axis title beside them when ``titled``: the widest
    label + 26.5 px, and 34 px more for the title (measured)."""
    return math.ceil(widest(labels) + 28 + (34 if titled else 0))


def bar_label_margin(labels) -> int:
    """Left margin (px) that holds horizontal bars' category labels: the widest + 18.5 px measured."""
    return math.ceil(widest(labels) + 20)


def colorbar_margin(title: str) -> int:
    """Right margin (px) for a vertical colour bar with ``title`` above it: the bar and its ticks take up to
    72 px (signed ticks), a title wider than the bar its width + 56 px (both measured; 4 px to spare)."""
    return math.ceil(max(72, text_px(title) + 60))


# px a chart gets on a 390 px phone inside a bordered container (as the class's panels draw it), measured in
# Chromium: 326 (the main column alone gives 358: Streamlit pads it 16 px a side, the border's box 16 more)
PHONE_WIDTH = 326
ELLIPSIS = "\u2026"


def cell_labels(texts, cell_px: float, largest: float = 11, smallest: float = 8) -> tuple[list[str], float]:
    """(labels, font size in px) for text written inside cells ``cell_px`` wide: the largest size up to
    ``largest`` at which the widest text fits (2 px to spare), never below ``smallest``; a text still too wide is cut
    to the longest start that fits with "…" after it, and left out ("") when not even one character does (its
    cell's hover and the figure's table still name it). ``texts`` are plain (not yet escaped for plotly)."""
    room = cell_px - 2
    texts = [str(t) for t in texts]
    wide = widest(texts, largest)
    size = largest if wide <= room else max(smallest, math.floor(largest * room / wide * 2) / 2) if wide else largest
    shown = []
    for text in texts:
        if text_px(text, size) <= room:
            shown.append(text)
            continue
        cut = len(text) - 1
        while cut > 0 and text_px(text[:cut] + ELLIPSIS, size) > room:
            cut -= 1
        shown.append(text[:cut] + ELLIPSIS if cut else "")
    return shown, size


TITLE_PX = 14   # the charts' title size (bold)
BOLD = 1.04     # bold Source Sans against the widths above (a title measured 3 % wider in Chromium; 1 % to spare)
TITLE_PAD = 4   # px between the chart's left edge and its title


def wrapped(text: str, width: float, size: float = TICK_PX, weight: float = 1.0) -> tuple[str, int]:
    """(``text`` with a ``<br>`` before each word that would pass ``width`` px at ``size`` px, the number of lines;
    ``weight``: how much wider the font's weight draws, as ``BOLD``): plotly never wraps a title or a tick label.
    Lines the text already breaks with ``<br>`` stay; a single word wider than ``width`` stays whole."""
    lines = []
    for given in str(text).split("<br>"):
        line = ""
        for word in given.split(" "):
            longer = f"{line} {word}" if line else word
            if line and text_px(longer, size) * weight > width:
                lines.append(line)
                line = word
            else:
                line = longer
        lines.append(line)
    return "<br>".join(lines), len(lines)


def wrapped_title(title: str, width: float = PHONE_WIDTH - TITLE_PAD, size: float = TITLE_PX) -> tuple[str, int]:
    """``wrapped`` for a chart's bold title (a long one ran off a 390 px phone's chart: the patching preview's, cut
    at "· deno")."""
    return wrapped(title, width, size, BOLD)


TICK_GAP = 6   # px kept free between two neighbouring categories' labels


def category_ticks(labels, plot_px: float, size: float = TICK_PX) -> tuple[list[str], int]:
    """(each category's label wrapped to its share of ``plot_px``, the most lines any label takes): plotly slants
    tick labels that do not fit side by side, and a slanted long answer ran off a 390 px phone's chart ("… another
    head tal"); wrapped, they stay level and whole."""
    labels = list(labels)
    room = plot_px / max(len(labels), 1) - TICK_GAP
    shown = [wrapped(t, room, size) for t in labels]
    return [t for t, _n in shown], max((n for _t, n in shown), default=1)


def tick_lines_px(lines: int, size: float = TICK_PX) -> int:
    """Height (px) below an axis that ``lines`` lines of tick labels take: plotly sets them 1.3 em apart, 6 px off
    the axis (2 px to spare a line)."""
    return math.ceil(lines * (1.3 * size + 2) + 6)


def title_margin(lines: int) -> int:
    """Top margin (px) that holds a title of ``lines`` lines at ``TITLE_PX`` above the plot, placed by
    ``TITLE_TOP`` (plotly centres a title in the margin by default: a title of three lines or more touched the
    plot)."""
    return 24 + 20 * lines


TITLE_TOP = dict(yref="container", y=1.0, yanchor="top", pad=dict(t=10))
