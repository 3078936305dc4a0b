"""Under every chart: its text alternative (a summary a screen reader reaches, the numbers as a table) and, for
charts whose points are heads, a box that chooses a head from the keyboard, as a click on the chart would.

``widgets.show_figure`` calls ``describe`` for every figure, so each page gets these without code of its own;
``widgets.use_app_navigation`` calls ``keyboard_scrolling`` on every page.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.access.summary import head_name
from explorer.plots.alt import TextAlternative
from explorer.ui.text import literal

TYPED = "_typed_head"   # (chart key, (layer, head)) while a head chosen from the keyboard runs the chart's callback


def describe(alt: TextAlternative, key: str, heads: list[tuple[int, int]], on_select) -> None:
    """The summary (always shown), a head box when the chart's click chooses a head, and "Show as table"."""
    with st.container(key=f"alt_{key}"):
        st.caption(literal(alt.summary))
        if heads and callable(on_select):
            head_box(key, heads, on_select)
        table = st.expander("Show as table", key=f"{key}_table", on_change="rerun", type="compact")
        if table.open:
            with table:
                for caption, frame in alt.tables():   # st.table: a real <table>, whose cells screen readers walk
                    plain_rows = isinstance(frame.index, pd.RangeIndex)   # numbered 0…n-1: no index to show
                    st.table(frame.style.format(precision=3), border="horizontal", hide_index=plain_rows)
                    st.caption(literal(caption))


def accessible_name(alt: TextAlternative, most: int = 160) -> str:
    """A short name for the chart itself (its summary's first sentence), pointing to the rest below it."""
    first = alt.summary.split(". ")[0].rstrip(".")
    first = first if len(first) <= most else first[:most - 1].rstrip() + "…"
    return f"Chart: {first}. Described in words and as a table below it."


def head_box(key: str, heads: list[tuple[int, int]], on_select) -> None:
    """A select box over the chart's heads ("L3H7"; type to filter, Enter to choose) that runs the chart's own
    ``on_select`` callback with that head, then empties itself, so the same head can be chosen again."""
    box = f"{key}_head"
    names = {head_name(*h): h for h in heads}

    def chosen():
        name = st.session_state.get(box)
        if name in names:
            st.session_state[TYPED] = (key, names[name])
            try:
                on_select()
            finally:
                st.session_state.pop(TYPED, None)
        st.session_state[box] = None

    st.selectbox("Choose a head in this chart (type e.g. L0H1)", list(names), index=None, key=box, on_change=chosen,
                 placeholder="Type a head, e.g. L0H1, then Enter", width=320,
                 format_func=lambda n: f"{n} · layer {names[n][0]}, head {names[n][1]}")


def typed_head(key: str) -> tuple[int, int] | None:
    """The head chosen from the keyboard for chart ``key``, while its callback runs."""
    typed = st.session_state.get(TYPED)
    return typed[1] if typed and typed[0] == key else None


# A formula or table wider than its column (st.latex in a narrow column, a chart's table on a phone) scrolls
# sideways, but Streamlit's KaTeX box and its table wrapper take no keyboard focus, so a keyboard user could never
# read their ends (axe: scrollable-region-focusable). This makes each such box focusable (arrow keys then scroll
# it) and names it, and undoes that when it fits again.
_FOCUSABLE_FORMULAS = """<script>
(() => {
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  const BOXES = '.katex-display, [data-testid="stTable"] div';
  const scrolls = box => box.scrollWidth > box.clientWidth && /auto|scroll/.test(getComputedStyle(box).overflowX);
  const mark = () => doc.querySelectorAll(BOXES).forEach(box => {
    if (scrolls(box)) {
      if (!box.hasAttribute('tabindex')) {
        box.setAttribute('tabindex', '0'); box.setAttribute('role', 'region');
        box.setAttribute('aria-label', (box.closest('[data-testid="stTable"]') ? 'Table' : 'Formula')
                         + ' (scrolls sideways)');
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
    """Make formulas and tables that overflow their column reachable and scrollable from the keyboard (above)."""
    st.html(_FOCUSABLE_FORMULAS, unsafe_allow_javascript=True)
