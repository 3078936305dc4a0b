"""WCAG 2.1 A and AA in the browser: axe-core (axe-playwright-python's bundled axe.min.js) over every page of
app.py, read from its navigation so new pages are covered too.

Streamlit's own components break a few rules in any app. They are measured, not assumed: a bare Streamlit app
(navigation sections and a caption, written to a temporary folder) is checked the same way, and a violation on
our pages is allowed only when that bare app shows it on the same kind of component and it is listed in
``STREAMLIT_OWN`` (each one is in docs/robustness.md with what we did about it). Every chart must carry its text
alternative, and a head must be choosable from the keyboard alone.
"""
import re

import pytest
from chromium import ROOT, Server, app_pages, exception_texts, open_page, wait_idle

pytestmark = pytest.mark.browser
PAGES = app_pages()
CHARTLESS = {"", "classroom", "glossary", "lessons"}   # url paths of the pages that draw no chart (Home is "")
WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
              "resultTypes": ["violations"]}

# (axe rule, data-testid of the Streamlit component that raises it): why it is Streamlit's, not ours.
STREAMLIT_OWN = {
    ("list", "stSidebarNavItems"): "the sidebar navigation's section headers sit as <div>s inside its <ul>",
    ("listitem", "stSidebarNavItems"): "so its <li> items are not all direct children of a list",
}

BARE_APP = '''
import streamlit as st


def first():
    st.title("First page")
    st.caption("A caption, as Streamlit draws it by default.")


def second():
    st.title("Second page")
    st.write("Some text.")


st.navigation({"Start": [st.Page(first, title="First", default=True)],
               "More": [st.Page(second, title="Second")]}).run()
'''


def violations(page) -> list[tuple[str, str, str]]:
    """axe's WCAG 2.1 A/AA violations on the page as (rule, the data-testid of the nearest Streamlit component
    around the offending element, its HTML), one per element."""
    from axe_playwright_python.sync_playwright import Axe

    found = []
    for rule in Axe().run(page, options=WCAG_21_AA).response["violations"]:
        for node in rule["nodes"]:
            component = page.evaluate("t => { const e = document.querySelector(t); const c = e && "
                                      "e.closest('[data-testid]'); return c ? c.dataset.testid : '' }",
                                      node["target"][-1])
            found.append((rule["id"], component, node["html"][:160]))
    return found


@pytest.fixture(scope="module")
def streamlit_own(tmp_path_factory, browser) -> set[tuple[str, str]]:
    """(rule, component) pairs that a bare Streamlit app with navigation sections and a caption violates."""
    folder = tmp_path_factory.mktemp("bare-streamlit")
    (folder / "bare.py").write_text(BARE_APP)
    srv = Server(script="bare.py", cwd=folder, log_prefix="bare-streamlit")
    try:
        seen = set()
        for path in ("", "second"):
            page = open_page(browser, f"{srv.url}/{path}")
            try:
                seen |= {(rule, where) for rule, where, _ in violations(page)}
            finally:
                page.context.close()
        return seen
    finally:
        srv.stop()


def test_the_allowed_violations_are_streamlits_own_and_documented(streamlit_own):
    """Each allowed violation is raised by bare Streamlit too, and docs/robustness.md says what we did about it;
    bare Streamlit's caption contrast is among them, which our theme fixes (the page test finds none)."""
    assert set(STREAMLIT_OWN) <= streamlit_own, f"bare Streamlit no longer raises: {set(STREAMLIT_OWN) - streamlit_own}"
    assert ("color-contrast", "stCaptionContainer") in streamlit_own
    docs = (ROOT / "docs" / "robustness.md").read_text()
    for rule, _ in [*STREAMLIT_OWN, ("color-contrast", "")]:
        assert f"`{rule}`" in docs, f"docs/robustness.md does not list axe rule {rule!r}"


@pytest.mark.parametrize("path,title", PAGES, ids=[t for _, t in PAGES])
def test_page_adds_no_wcag_violation_and_every_chart_has_a_text_alternative(server, browser, streamlit_own,
                                                                            path, title):
    page = open_page(browser, f"{server.url}/{path}", timeout=240)
    try:
        if path not in CHARTLESS:
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
            page.wait_for_timeout(1000)   # let every chart of the page draw
        assert exception_texts(page) == []
        found = violations(page)
        ours = [v for v in found if (v[0], v[1]) not in STREAMLIT_OWN or (v[0], v[1]) not in streamlit_own]
        assert ours == [], f"violations our code adds on {title}: {ours[:5]}"
        charts = page.locator('[data-testid="stPlotlyChart"]')
        for i in range(charts.count()):   # each chart: a name of its own, then its summary and "Show as table"
            chart = charts.nth(i)
            named = chart.evaluate("e => { const s = '[role=figure][aria-label^=\"Chart: \"]'; "
                                   "return e.matches(s) || !!e.querySelector(s) }")
            assert named, f"chart {i} of {title} has no accessible name"
            assert len(_summary_after(chart)) > 20, f"chart {i} of {title} has no summary after it"
            table = chart.locator("xpath=following::*[contains(@class, '_table')][1]")
            assert table.get_by_text("Show as table").count() == 1, f"chart {i} of {title} has no table after it"
    finally:
        page.context.close()


def _summary_after(chart) -> str:
    return chart.locator("xpath=following::*[@data-testid='stCaptionContainer'][1]").inner_text()


def _open_tables(page, chart_keys: list[str]) -> None:
    for key in chart_keys:
        page.locator(f".st-key-{key}_table summary").first.click()
        wait_idle(page)


def test_tables_of_the_heatmap_page_hold_the_numbers_and_add_no_violation(server, browser, streamlit_own):
    """"Show as table" under the main heatmap is a real table with every query row, headed by the tokens; the
    opened tables add no violation either."""
    page = open_page(browser, f"{server.url}/heatmaps?text=The+cat+sat+on+the+mat.", timeout=240)
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        _open_tables(page, ["heatmap", "bars", "grid", "overview"])
        tables = page.locator('[data-testid="stTable"]')
        tables.nth(3).wait_for(timeout=60_000)
        assert tables.count() == 4
        summary = _summary_after(page.locator(".st-key-heatmap"))
        assert "Where each query looks most" in summary and "cat →" in summary
        table = page.locator('.st-key-heatmap_table [data-testid="stTable"] table')   # a real <table>
        headers = table.locator("th").all_inner_texts()
        for token in ("2 · cat", "3 · sat", "6 · mat"):   # row and column headers: position · token
            assert headers.count(token) == 2, headers
        assert table.locator("tbody tr").count() == 9   # [CLS] the cat sat on the mat . [SEP]
        assert exception_texts(page) == []
        ours = [v for v in violations(page) if (v[0], v[1]) not in STREAMLIT_OWN]
        assert ours == [], f"violations with the tables open: {ours[:5]}"
        page.set_viewport_size({"width": 390, "height": 844})   # a phone: the tables scroll sideways
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stTable] div')]"
                               ".some(d => d.scrollWidth > d.clientWidth)", timeout=30_000)
        page.wait_for_timeout(500)
        ours = [v for v in violations(page) if (v[0], v[1]) not in STREAMLIT_OWN]
        assert ours == [], f"violations with the tables open on a phone: {ours[:5]}"
    finally:
        page.context.close()


def _tab_to(page, selector: str, most: int = 250) -> None:
    """Press Tab until the focused element is inside ``selector`` (as a keyboard-only user would reach it)."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("s => !!(document.activeElement && document.activeElement.closest(s))", selector):
            return
    pytest.fail(f"{selector} cannot be reached with Tab")


def _slider_value(page, label: str) -> str:
    return page.locator(f'[data-testid="stMain"] input[type="range"][aria-label="{label}"]').first.input_value()


def test_a_head_is_chosen_from_the_keyboard_alone(server, browser):
    """Heatmap page: Tab to the overview's head box, type L2H3, Enter: layer 2 · head 3 is shown (sliders, URL,
    the main heatmap's title), exactly as a click on that tile would do."""
    page = open_page(browser, f"{server.url}/heatmaps", timeout=240)
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        assert (_slider_value(page, "Layer"), _slider_value(page, "Head")) == ("0", "0")
        _tab_to(page, ".st-key-overview_head")
        page.keyboard.type("L2H3")
        page.keyboard.press("Enter")
        wait_idle(page)
        page.wait_for_function("() => location.search.includes('layer=2') && location.search.includes('head=3')",
                               timeout=60_000)
        assert (_slider_value(page, "Layer"), _slider_value(page, "Head")) == ("2", "3")
        assert re.search(r"layer 2 · head 3", _summary_after(page.locator(".st-key-heatmap")))
        assert exception_texts(page) == []
    finally:
        page.context.close()


def test_compare_adds_a_head_from_the_keyboard(server, browser):
    """Compare heads: the statistics map's head box adds the typed head to the comparison, as a click would."""
    page = open_page(browser, f"{server.url}/compare?heads=L0H0,L1H1", timeout=240)
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        _tab_to(page, ".st-key-stat_map_head")
        page.keyboard.type("L4H5")
        page.keyboard.press("Enter")
        wait_idle(page)
        page.wait_for_function("() => decodeURIComponent(location.search).includes('L4H5')", timeout=60_000)
        assert page.get_by_text("layer 4 · head 5").count() >= 1
        assert exception_texts(page) == []
    finally:
        page.context.close()

