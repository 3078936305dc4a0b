"""Under every chart: its text alternative (a summary a screen reader reaches, the numbers as a table) and, for
charts whose points are heads, a box that chooses a head from the keyboard, as a click on the chart would.

``widgets.show_figure`` calls ``describe`` for every figure, so each page gets these without code of its own;
``widgets.use_app_navigation`` calls ``keyboard_scrolling`` on pages that write formulas.
"""
from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import streamlit as st

from explorer.access.summary import head_name
from explorer.attention.heads import parse_heads
from explorer.plots.alt import TextAlternative
from explorer.plots.attention import FRAME
from explorer.ui.text import literal
from explorer.words import numbers
from explorer.words.i18n import _

TYPED = "_typed_head"   # (chart key, (layer, head)) while a head chosen from the keyboard runs the chart's callback


def describe(alt: TextAlternative, key: str, heads: list[tuple[int, int]], on_select) -> None:
    """Right after the chart: the summary (always shown), a head box when the chart's click chooses a head, and
    "Show as table" (built only while open). No wrapping container: every element here is bytes on each rerun."""
    st.caption(literal(alt.summary))
    if heads and callable(on_select):
        head_box(key, heads, on_select)
    table_under(key, lambda: alt)


def table_under(key: str, alt: Callable[[], TextAlternative]) -> None:
    """"Show as table" under chart ``key``: ``alt()`` (the chart's text alternative, which may build the figure) is
    asked for only while the table is open."""
    table = st.expander(_("Show as table"), key=f"{key}_table", on_change="rerun", type="compact")
    if table.open:
        keyboard_scrolling()   # a table wider than the screen scrolls: make it focusable
        with table:
            for caption, frame in alt().tables():   # st.table: a real <table>, whose cells screen readers walk
                plain_rows = isinstance(frame.index, pd.RangeIndex)   # numbered 0…n-1: no index to show
                st.table(numbers.table(frame), border="horizontal", hide_index=plain_rows)
                st.caption(literal(caption))


def accessible_name(alt: TextAlternative, most: int = 160) -> str:
    """A short name for the chart itself (its summary's first sentence), pointing to the rest below it."""
    first = alt.summary.split(". ")[0].rstrip(".")
    first = first if len(first) <= most else first[:most - 1].rstrip() + "…"
    return _("Chart: {summary}. Described in words and as a table below it.").format(summary=first)


def head_box(key: str, heads: list[tuple[int, int]], on_select) -> None:
    """A text box for a head's name ("L3H7", Enter) that runs the chart's own ``on_select`` callback with that
    head, then empties itself. A text box, not a list of every head: nothing more is sent to the browser."""
    box = f"{key}_head"
    allowed = set(heads)

    def chosen():
        typed = str(st.session_state.get(box) or "").strip()
        found, clamped = parse_heads(typed, 10**6, 10**6, 1)
        if found and not clamped and found[0] in allowed:
            st.session_state[TYPED] = (key, found[0])
            try:
                on_select()
            finally:
                st.session_state.pop(TYPED, None)
        elif typed:
            st.session_state[f"{box}_note"] = _("{typed} is not a head of this chart: write layer and head like "
                                                "{example} (layers and heads count from 0).").format(
                typed=repr(typed[:20]), example=head_name(*heads[0]))
        st.session_state[box] = ""

    last = heads[-1]
    st.text_input(_("Choose a head in this chart by name ({first} to {last})").format(
        first=head_name(*heads[0]), last=head_name(*last)), key=box, on_change=chosen,
        placeholder=_("e.g. L0H1, then Enter"), width=360)
    if note := st.session_state.pop(f"{box}_note", None):
        st.caption(literal(note))


def typed_head(key: str) -> tuple[int, int] | None:
    """The head chosen from the keyboard for chart ``key``, while its callback runs."""
    typed = st.session_state.get(TYPED)
    return typed[1] if typed and typed[0] == key else None


# A formula or table wider than its column (st.latex in a narrow column, a chart's table on a phone) scrolls
# sideways, but Streamlit's KaTeX box and its table wrapper take no keyboard focus, so a keyboard user could never
# read their ends (axe: scrollable-region-focusable). This makes each such box focusable (arrow keys then scroll
# it) and names it (in the page's language, its <html lang>: a constant script, so the names are in it), and undoes
# that when it fits again. It also adds one style rule to the page: on a narrow or
# touch screen plotly's toolbar, which a tap brings up over the chart's title, stays hidden (Streamlit's own
# fullscreen button stays; the camera button is a desktop tool). And a page link's label wraps: Streamlit keeps it on
# one line and cuts it, so on a phone "Open layer 23, head 0 on the heatmap page with the clean text" lost its end.
_FOCUSABLE_FORMULAS = """<script>
(() => {
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  if (!doc.getElementById('explorer-narrow')) {
    const style = doc.createElement('style');
    style.id = 'explorer-narrow';
    style.textContent = '@media (max-width: 640px), (hover: none) { .js-plotly-plot .modebar-container '
                        + '{ display: none !important; } }'
                        + ' [data-testid="stPageLink"] a span, [data-testid="stPageLink"] a p '
                        + '{ white-space: normal !important; }';
    doc.head.appendChild(style);
  }
  const BOXES = '.katex-display, [data-testid="stTable"] div';
  const NAMES = {en: ['Table (scrolls sideways)', 'Formula (scrolls sideways)'],   /* by the page's html lang */
                 de: ['Tabelle (seitlich scrollbar)', 'Formel (seitlich scrollbar)'],
                 es: ['Tabla (se desplaza de lado)', 'Fórmula (se desplaza de lado)']};
  const scrolls = box => box.scrollWidth > box.clientWidth && /auto|scroll/.test(getComputedStyle(box).overflowX);
  const mark = () => doc.querySelectorAll(BOXES).forEach(box => {
    if (scrolls(box)) {
      if (!box.hasAttribute('tabindex')) {
        box.setAttribute('tabindex', '0'); box.setAttribute('role', 'region');
        const names = NAMES[(doc.documentElement.lang || 'en').slice(0, 2)] || NAMES.en;
        box.setAttribute('aria-label', names[box.closest('[data-testid="stTable"]') ? 0 : 1]);
      }
    } else if (box.getAttribute('role') === 'region') {
      box.removeAttribute('tabindex'); box.removeAttribute('role'); box.removeAttribute('aria-label');
    }
  });
  const win = doc.defaultView;
  if (!win.__explorerFormulas) {   // once a browser tab: new boxes, and any box whose size changes
    const sizes = new ResizeObserver(mark);
    const watch = () => { doc.querySelectorAll(BOXES).forEach(box => sizes.observe(box)); mark(); };
    win.__explorerFormulas = new MutationObserver(watch);
    win.__explorerFormulas.observe(doc.body, {childList: true, subtree: true});
    watch();
  }
  mark();
})();
</script>"""


def keyboard_scrolling() -> None:
    """Make formulas and tables that overflow their column reachable and scrollable from the keyboard, and hide
    plotly's toolbar on a phone (above).
    Sent on a session's first run only: the observer it installs stays in the browser tab while the student
    moves between pages (a reload starts a new session, which sends it again)."""
    if not st.session_state.get("_keyboard_scrolling"):
        st.session_state["_keyboard_scrolling"] = True
        st.html(_FOCUSABLE_FORMULAS, unsafe_allow_javascript=True)


def show_frame(key: str, index: int) -> None:
    """Show the ``index``-th hidden tile frame of chart ``key`` (``frames=True`` or ``frame_row``) and bold its
    title: a style rule next to the chart, so that the chart itself, and what the browser has drawn for it, stays
    the same when the selection moves (a following class redrew two large charts on every head change before)."""
    st.html(frame_rule(key, index))


def frame_rule(key: str, index: int) -> str:
    """The style element of :func:`show_frame`. Nothing a user types can enter it: ``key`` must be a plain chart
    key (ASCII letters, digits, underscores) and ``index`` is written as an integer."""
    if not re.fullmatch(r"\w+", key, re.ASCII):
        raise ValueError(f"not a plain chart key: {key!r}")
    tile = f"[data-index='{int(index)}']"
    return (f"<style>.st-key-{key} .shapelayer path{tile}{{stroke:{FRAME}!important;stroke-opacity:1!important}}"
            f".st-key-{key} g.annotation{tile} text{{font-weight:700!important}}</style>")
