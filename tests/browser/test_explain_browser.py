"""Which words mattered? in headless Chromium against the real server (encoder, to stay quick): the three figures
draw, the question reveals its computed answer only after a commit, and nothing leaves the machine."""
import pytest
from chromium import exception_texts, open_page, screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_figures_draw_and_the_question_reveals(server, browser):
    page = open_page(browser, f"{server.url}/explain?model=all-MiniLM-L6-v2", timeout=300)
    try:
        page.wait_for_selector("text=Which one is faithful?", timeout=300_000)
        wait_idle(page, 300)
        titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                               ".map(t => t.textContent)")
        assert {"Which words mattered, by each method", "Do they rank the words alike? (Spearman ρ)",
                "Top k words removed: how far the score moves"} <= set(titles)
        assert page.get_by_text("Last-layer attention's top word is").count() == 0     # nothing revealed yet
        page.get_by_text("No: different top words").click()
        wait_idle(page)
        page.get_by_role("button", name="Commit my answer").click()
        page.wait_for_selector("text=Last-layer attention's top word is", timeout=60_000)
        wait_idle(page)
        verdict = page.locator('[data-testid="stAlert"]').filter(has_text="different top words").first.inner_text()
        assert verdict.startswith(("Right", "Not quite"))
        screenshot(page, "explain-revealed.png")
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()
