"""What heads do in headless Chromium against the real server: a click on the knockout map adds that head, a second
click takes it out again, and the sweep button runs a shared job whose maps and Spearman sentence appear."""
import contextlib

import pytest
from chromium import TILE_CENTRE, exception_texts, open_page, screenshot, settled_on_screen, wait_idle
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.browser


CHOSEN = "() => document.querySelector('[data-testid=\"stMultiSelect\"]')?.innerText ?? ''"


def chosen(page) -> str:
    return page.locator('[data-testid="stMultiSelect"]').first.inner_text()


def test_click_toggles_a_head_and_the_sweep_draws(server, browser):
    page = open_page(browser, f"{server.url}/heads_do", timeout=240)
    try:
        page.get_by_text("Colour: attention flip").first.scroll_into_view_if_needed()
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot')]"
                               ".some(g => g._fullLayout && (g._fullLayout.yaxis.title || {}).text === 'layer')",
                               timeout=60_000)   # the map is drawn (a busy machine may take a while)
        settled_on_screen(page, TILE_CENTRE, [3, 1])
        for expected in (True, False):
            x, y = page.evaluate(TILE_CENTRE, [3, 1])
            page.mouse.click(x, y)
            with contextlib.suppress(PlaywrightTimeout):   # the click's run chose (or dropped) the head
                page.wait_for_function(f"want => ({CHOSEN})().includes('layer 3 · head 1') === want", arg=expected,
                                       timeout=60_000)
            wait_idle(page)
            assert ("layer 3 · head 1" in chosen(page)) is expected
            assert (page.get_by_text("Without 1 head").count() > 0) is expected
        page.get_by_role("button", name="Run the sweep").click()
        page.wait_for_selector("[data-testid=stMain] >> text=Spearman", timeout=120_000)
        wait_idle(page)
        titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                               ".map(t => t.textContent)")
        assert {"Knockout effect per head (each head alone)", "Attention flip per head"} <= set(titles)
        assert page.get_by_role("button", name="Run the sweep").count() == 0
        screenshot(page, "heads_do-sweep.png")
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()
