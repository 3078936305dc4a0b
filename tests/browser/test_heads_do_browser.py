"""What heads do in headless Chromium against the real server: a click on the knockout map adds that head, a second
click takes it out again, and the sweep button runs a shared job whose maps and Spearman sentence appear."""
import pytest
from chromium import exception_texts, open_page, screenshot, wait_idle
from test_browser import TILE_CENTRE

pytestmark = pytest.mark.browser


def chosen(page) -> str:
    return page.locator('[data-testid="stMultiSelect"]').first.inner_text()


def test_click_toggles_a_head_and_the_sweep_draws(server, browser):
    page = open_page(browser, f"{server.url}/heads_do", timeout=240)
    try:
        page.get_by_text("Colour: attention flip").first.scroll_into_view_if_needed()
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot')]"
                               ".some(g => g._fullLayout && (g._fullLayout.yaxis.title || {}).text === 'layer')",
                               timeout=60_000)   # the map is drawn (a busy machine may take a while)
        page.wait_for_timeout(500)
        for expected in (True, False):
            x, y = page.evaluate(TILE_CENTRE, [3, 1])
            page.mouse.click(x, y)
            page.wait_for_timeout(800)
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
