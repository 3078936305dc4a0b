"""Every page of app.py (read from its navigation, so new pages are covered too) opened once in headless Chromium
against the real server, and checked in that one visit: no exception, its charts drawn (none on the pages in
``CHARTLESS``), no request leaving the machine, WCAG 2.1 A and AA by axe-core, every chart with its text
alternative, and the page still working after one interaction; a screenshot of each is saved under
test-artifacts/. The heatmap page's tables and choosing a head from the keyboard are checked here too.

Streamlit's own components break a few rules in any app. They are measured, not assumed: a bare Streamlit app
(navigation sections and a caption, written to a temporary folder) is checked the same way, and a violation on
our pages is allowed only when that bare app shows it on the same kind of component and it is listed in
``chromium.STREAMLIT_OWN`` (each one is in docs/robustness.md with what we did about it).
"""
import json
import os
import re

import pytest
from chromium import (
    GROWN_MARGINS,
    ROOT,
    STREAMLIT_OWN,
    Server,
    app_pages,
    charts_fit,
    close_page,
    exception_texts,
    need_chromium,
    open_page,
    screenshot,
    shared_profile,
    summary_after,
    violations,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
PAGES = app_pages()
CHARTLESS = {"", "classroom", "glossary", "lessons"}   # url paths of the pages that draw no chart (Home is "")
DRAWN_ONCE = {"heatmaps": 4, "compare": 6, "flip": 5, "lab_worked_example": 1, "lab_softmax": 3}   # page -> its charts

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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """This module's visits are tabs of one Chromium profile (``shared_profile``): each page is still a session of
    its own, and every other module opens its pages in fresh contexts, cold."""
    need_chromium()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        profile = shared_profile(p, tmp_path_factory.mktemp("chromium-profile"))
        yield profile
        profile.close()


def test_app_registers_pages():
    assert len(PAGES) >= 1 and PAGES[0][0] == ""


def test_every_page_routes_deep_links_through_app_navigation():
    """Each page starts with ui.use_app_navigation(), so a link straight to a page works on a fresh server."""
    for path, _ in PAGES:
        source = (ROOT / "pages" / f"{path or 'home'}.py").read_text()
        assert "use_app_navigation()" in source, path


def bare_streamlit_violations(browser, folder) -> set[tuple[str, str]]:
    """(rule, component) pairs that a bare Streamlit app with navigation sections and a caption violates."""
    (folder / "bare.py").write_text(BARE_APP)
    srv = Server(script="bare.py", cwd=folder, log_prefix="bare-streamlit")
    try:
        seen = set()
        for path in ("", "second"):
            page = open_page(browser, f"{srv.url}/{path}")
            try:
                seen |= {(rule, where) for rule, where, _ in violations(page)}
            finally:
                close_page(page)
        return seen
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def streamlit_own(tmp_path_factory, browser) -> set[tuple[str, str]]:
    """``bare_streamlit_violations``, measured once a run: work stealing splits this module between the test
    workers, and each part would otherwise start the bare app and check its pages again (~10 s of CPU). The first
    part writes the pairs into the run's shared temporary folder, under a lock; the others read them."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):   # a worker's own folder: the run's is the one above it
        shared = shared.parent
    found = shared / "bare-streamlit-violations.json"
    with FileLock(str(found) + ".lock"):
        if not found.is_file():
            seen = bare_streamlit_violations(browser, tmp_path_factory.mktemp("bare-streamlit"))
            found.write_text(json.dumps(sorted(seen)))
        return {tuple(pair) for pair in json.loads(found.read_text())}


def test_the_allowed_violations_are_streamlits_own_and_documented(streamlit_own):
    """Each allowed violation is raised by bare Streamlit too, and docs/robustness.md says what we did about it;
    bare Streamlit's caption contrast is among them, which our theme fixes (the page test finds none)."""
    assert set(STREAMLIT_OWN) <= streamlit_own, f"bare Streamlit no longer raises: {set(STREAMLIT_OWN) - streamlit_own}"
    assert ("color-contrast", "stCaptionContainer") in streamlit_own
    docs = (ROOT / "docs" / "robustness.md").read_text()
    for rule, _ in [*STREAMLIT_OWN, ("color-contrast", "")]:
        assert f"`{rule}`" in docs, f"docs/robustness.md does not list axe rule {rule!r}"


def drive_once(page, path: str) -> str:
    """Interact once like a student: home follows its example link; other pages move their first slider, or
    step their first number box, and the page must rerun without errors."""
    if not path:
        page.get_by_text("Open the flip demo").first.click()
        wait_idle(page)
        return "link"
    main = page.locator('[data-testid="stMain"]')
    ranges = main.locator('[data-testid="stSlider"] input[type="range"]')
    if ranges.count():
        slider = ranges.first
        before, low = slider.input_value(), slider.get_attribute("min")
        slider.focus()
        slider.press("End" if before == low else "Home")
        wait_idle(page)
        assert ranges.first.input_value() != before
        return "slider"
    for kind, selector in (("number", '[data-testid="stNumberInputStepUp"]'),
                           ("button", '[data-testid="stButton"] button')):
        control = main.locator(selector).filter(visible=True)
        if control.count():
            before = main.inner_text()
            control.first.click()
            wait_idle(page)
            # the page recomputed (a slow rerun may show it a few seconds after the run looked finished)
            page.wait_for_function("before => document.querySelector('[data-testid=\"stMain\"]').innerText "
                                   "!== before", arg=before, timeout=30_000)
            assert main.inner_text() != before
            return kind
    return "none"  # nothing to nudge without knowing the page: it was still opened and checked


def check_accessible(page, title: str, streamlit_own) -> None:
    """No WCAG 2.1 A/AA violation of our own; each chart named, with its summary and "Show as table" after it."""
    found = violations(page)
    ours = [v for v in found if (v[0], v[1]) not in STREAMLIT_OWN or (v[0], v[1]) not in streamlit_own]
    assert ours == [], f"violations our code adds on {title}: {ours[:5]}"
    charts = page.locator('[data-testid="stPlotlyChart"]')
    for i in range(charts.count()):   # each chart: a name of its own, then its summary and "Show as table"
        chart = charts.nth(i)
        named = chart.evaluate("e => { const s = '[role=figure][aria-label^=\"Chart: \"]'; "
                               "return e.matches(s) || !!e.querySelector(s) }")
        assert named, f"chart {i} of {title} has no accessible name"
        assert len(summary_after(chart)) > 20, f"chart {i} of {title} has no summary after it"
        table = chart.locator("xpath=following::*[contains(@class, '_table')][1]")
        assert table.get_by_text("Show as table").count() == 1, f"chart {i} of {title} has no table after it"


@pytest.mark.parametrize("path,title", PAGES, ids=[t for _, t in PAGES])
def test_page(server, browser, streamlit_own, path, title):
    """One visit: drawn offline without errors, accessible, and still working after one interaction."""
    page = open_page(browser, f"{server.url}/{path}", timeout=240)
    try:
        assert exception_texts(page) == []
        assert page.locator("h1").first.inner_text().strip()
        show = page.get_by_role("button", name="Show me without predicting")
        if path not in CHARTLESS:   # a chart, or a question that folds the charts (a model may still be loading)
            page.wait_for_selector('.js-plotly-plot .main-svg, button:has-text("Show me without predicting")',
                                   timeout=120_000)
        if show.count():   # a page that asks first folds its charts: a student who does not want to predict
            show.first.click()
            wait_idle(page)
        if path not in CHARTLESS:   # every other page draws at least one chart
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        if path in DRAWN_ONCE:   # the pages a class moves between most: no chart's margin grown by plotly
            page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= "
                                   f"{DRAWN_ONCE[path]}", timeout=60_000)
            assert page.evaluate(GROWN_MARGINS) == []
        charts_fit(page, timeout=120)   # every chart of the page drawn
        assert exception_texts(page) == []
        check_accessible(page, title, streamlit_own)
        screenshot(page, f"page-{path or 'home'}.png")
        if path == "classroom":   # start a class: its join QR code is drawn, as an image
            page.get_by_role("button", name="Start a class").click()
            wait_idle(page)
            page.wait_for_selector('[data-testid="stMain"] [data-testid="stImage"] img', timeout=60_000)
        else:
            drive_once(page, path)
        assert exception_texts(page) == []
        if path == "lessons":   # its first button started a lesson: step 1, whose page waits behind its question
            page.get_by_text(re.compile(r"[Ss]tep 1 of \d+")).first.wait_for(timeout=60_000)
        elif path not in {"classroom", "glossary"}:   # the glossary draws no chart, before or after
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)  # still (or now, for home) drawn
        assert page.external == [], f"requests left the machine: {page.external[:5]}"
    finally:
        close_page(page)


def _open_tables(page, chart_keys: list[str]) -> None:
    for key in chart_keys:
        page.locator(f".st-key-{key}_table summary").first.click()
        wait_idle(page)


def test_tables_of_the_heatmap_page_hold_the_numbers_and_add_no_violation(server, browser):
    """"Show as table" under the main heatmap is a real table with every query row, headed by the tokens; the
    opened tables add no violation either."""
    page = open_page(browser, f"{server.url}/heatmaps?text=The+cat+sat+on+the+mat.", timeout=240)
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        _open_tables(page, ["heatmap", "bars", "grid", "overview"])
        tables = page.locator('[data-testid="stTable"]')
        tables.nth(3).wait_for(timeout=60_000)
        assert tables.count() == 4
        summary = summary_after(page.locator(".st-key-heatmap"))
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
        charts_fit(page)   # the charts redrawn at the phone's width
        ours = [v for v in violations(page) if (v[0], v[1]) not in STREAMLIT_OWN]
        assert ours == [], f"violations with the tables open on a phone: {ours[:5]}"
    finally:
        close_page(page)


def _tab_to(page, selector: str, most: int = 250) -> None:
    """Press Tab until the focused element is inside ``selector`` (as a keyboard-only user would reach it)."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("s => !!(document.activeElement && document.activeElement.closest(s))", selector):
            return
    pytest.fail(f"{selector} cannot be reached with Tab")


def _slider(page, label: str):
    return page.locator(f'[data-testid="stMain"] input[type="range"][aria-label="{label}"]').first


def _slider_value(page, label: str) -> str:
    return _slider(page, label).input_value()


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
        # each slider takes its new value when React draws it, which can come a moment after the address
        expect(_slider(page, "Layer")).to_have_value("2", timeout=30_000)
        expect(_slider(page, "Head")).to_have_value("3", timeout=30_000)
        assert re.search(r"layer 2 · head 3", summary_after(page.locator(".st-key-heatmap")))
        assert exception_texts(page) == []
    finally:
        close_page(page)


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
        close_page(page)
