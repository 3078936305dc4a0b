"""The heatmap page in headless Chromium against the real server: typed text, the overview's tiles (hover, click),
deep links on a fresh server. Every page's own visit (charts, errors, accessibility) is tests/browser/test_pages.py.
"""
import pytest
from chromium import (
    GROWN_MARGINS,
    TILE_CENTRE,
    Server,
    exception_texts,
    open_page,
    record_external,
    screenshot,
    wait_idle,
    watch,
)

pytestmark = pytest.mark.browser


def test_heatmap_follows_the_typed_text(server, browser):
    """Type a new sentence: the heatmap is redrawn with its tokens as tick labels."""
    page = open_page(browser, f"{server.url}/heatmaps")
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        box = page.get_by_label("Text", exact=True)
        box.fill("A teacher projects the giraffe heatmap.")
        box.press("Control+Enter")
        wait_idle(page)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot .xtick text')]"
            ".some(t => t.textContent === 'teacher')",
            timeout=60_000)
        assert exception_texts(page) == [] and page.external == []
        # every chart asked for the room its labels take (plots/room.py), so plotly drew it once: had it needed
        # more, its automargin would have grown a margin and drawn the chart again
        grown = page.evaluate(GROWN_MARGINS)
        assert grown == [], grown
        screenshot(page, "heatmap-typed.png")
    finally:
        page.context.close()


def test_overview_tile_hovers_its_statistics_and_a_click_opens_that_head(server, browser):
    """The layers × heads overview: hovering a tile names the head and its statistics; clicking it shows it."""
    page = open_page(browser, f"{server.url}/heatmaps")
    try:
        page.get_by_text("Every layer × head").scroll_into_view_if_needed()
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot')]"
                               ".some(g => g._fullLayout && (g._fullLayout.yaxis.title || {}).text === 'layer')",
                               timeout=60_000)   # drawn (a busy machine may take a while)
        page.evaluate(f"() => {OVERVIEW}.scrollIntoView({{block: 'center'}})")   # every tile on the screen
        page.wait_for_function(f"() => {{ const r = {OVERVIEW}.getBoundingClientRect(); "
                               "return r.top >= 0 && r.bottom <= innerHeight }", timeout=10_000)
        x, y = page.evaluate(TILE_CENTRE, [4, 7])
        page.mouse.move(x - 5, y - 5)
        page.mouse.move(x, y)
        hover = page.locator(".hoverlayer .hovertext")
        hover.first.wait_for(timeout=10_000)
        text = hover.first.text_content()
        assert "layer 4 · head 7" in text and "entropy" in text and "click to show this head" in text
        page.mouse.click(x, y)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
            ".some(t => t.textContent.includes('layer 4 · head 7'))", timeout=60_000)
        wait_idle(page)
        sliders = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]')
        assert [sliders.nth(i).input_value() for i in range(2)] == ["4", "7"]   # layer, head
        assert page.evaluate(FRAMED) == [7]   # the head's tile framed (layer 4's tiles have frames), beside the figure
        page.evaluate(MARK_OVERVIEW)
        page.locator('[data-testid="stMain"]').get_by_role("slider").nth(1).press("ArrowRight")
        page.wait_for_function(f"() => JSON.stringify(({FRAMED})()) === '[8]'", timeout=60_000)
        wait_idle(page)
        assert page.evaluate(MARKED), "the overview was drawn again for a new head"
        page.evaluate(f"() => {OVERVIEW}.scrollIntoView({{block: 'center'}})")
        x, y = page.evaluate(TILE_CENTRE, [4, 7])
        page.mouse.move(x - 5, y - 5)
        page.mouse.move(x, y)
        hover.first.wait_for(timeout=10_000)
        page.mouse.click(x, y)   # the tile clicked before (the chart keeps its selection): head 7 again
        page.wait_for_function(f"() => JSON.stringify(({FRAMED})()) === '[7]'", timeout=60_000)
        wait_idle(page)
        assert sliders.nth(1).input_value() == "7"
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()


OVERVIEW = "[...document.querySelectorAll('.st-key-overview .js-plotly-plot')][0]"
# the overview's tiles whose frame shows (their style rule from chart_text.show_frame applied); none while a rerun
# has the chart between two drawings (a click changes its figure), so a wait polls on instead of throwing
FRAMED = f"""() => [...({OVERVIEW}?.querySelectorAll('.shapelayer path') ?? [])]
  .filter(p => getComputedStyle(p).strokeOpacity === '1').map(p => +p.dataset.index)"""
MARK_OVERVIEW = f"() => {{ {OVERVIEW}.__drawnBefore = true; }}"
MARKED = f"() => {OVERVIEW}?.__drawnBefore === true"


DEEP_LINK = "heatmaps?layer=2&head=999&text=the+cat+sat+on+the+mat"


def test_links_opened_at_once_on_a_fresh_server_all_get_the_app_navigation(browser):
    """A class reconnecting after a restart: several deep links reach a fresh server together. Each session must
    end up in app.py's navigation, not only the first (the others had started in Streamlit's folder mode before
    the first one switched it off). The first link names a view (layer, an out-of-range head, a text): it opens
    that view, and says the head was out of range."""
    srv = Server()
    pages = []
    try:
        # the link's view, then three more sessions (two pages that draw little: what is checked is the menu)
        for path in [DEEP_LINK, "classroom", "lab_softmax", "glossary"]:
            context = watch(browser.new_context(viewport={"width": 1400, "height": 1000}))
            page = record_external(context.new_page())
            page.goto(f"{srv.url}/{path}", wait_until="commit")   # all four sessions start before any has run
            pages.append(page)
        for page in pages:
            wait_idle(page, 120)
            page.locator('[data-testid="stSidebarNav"]').wait_for(timeout=60_000)
            nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
            assert "Attention heatmaps" in nav and "lab softmax" not in nav, (page.url, nav)
            assert exception_texts(page) == [] and page.external == []
        linked = pages[0]   # the view its link names: head 999 clamped, and the page says so; the text drawn
        linked.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                                 ".includes('out of range')", timeout=60_000)
        linked.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot .xtick text')].some(t => t.textContent === 'mat')",
            timeout=60_000)
        screenshot(linked, "deep-link.png")
    finally:
        for page in pages:
            page.context.close()
        srv.stop()
