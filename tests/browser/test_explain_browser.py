"""Which words mattered? in headless Chromium against the real server (encoder, to stay quick): the three figures
stay folded under the question until a commit, then draw with its computed answer, and nothing leaves the machine."""
import pytest
from chromium import exception_texts, open_page, screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_the_question_comes_first_and_the_figures_draw_after_a_commit(server, browser):
    page = open_page(browser, f"{server.url}/explain?model=all-MiniLM-L6-v2", timeout=300)
    try:
        page.get_by_role("button", name="Commit my answer").wait_for(timeout=300_000)
        wait_idle(page, 300)
        main = page.locator('[data-testid="stMain"]')
        assert "stay folded until you commit a prediction" in main.inner_text()
        assert main.get_by_text("Which one is faithful?").count() == 0                  # folded: not drawn
        assert page.get_by_text("Last-layer attention's top word is").count() == 0     # nothing revealed yet
        page.get_by_text("No: different top words").click()
        wait_idle(page)
        page.get_by_role("button", name="Commit my answer").click()
        page.wait_for_selector("text=Last-layer attention's top word is", timeout=60_000)
        page.wait_for_selector("text=Which one is faithful?", timeout=120_000)
        wait_idle(page, 300)
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .gtitle').length >= 3",
                               timeout=120_000)
        titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                               ".map(t => t.textContent)")
        assert {"Which words mattered, by each method", "Do they rank the words alike? (Spearman ρ)",
                "Top k words removed: how far the score moves"} <= set(titles)
        verdict = page.locator('[data-testid="stAlert"]').filter(has_text="different top words").first.inner_text()
        assert verdict.startswith(("Right", "Not quite"))
        screenshot(page, "explain-revealed.png")
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()
