"""Watch heads learn in headless Chromium against the real server: Train starts the server's shared run in its
child process, the server reruns the page as it grows (push: the progress bar or the curves) and the whole page runs
again when it ends, so the finished run's knockout bars appear behind its prediction."""
import pytest
from chromium import exception_texts, open_page, screenshot, wait_idle

pytestmark = pytest.mark.browser

TITLES = ("() => [...document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot .gtitle')]"
          ".map(t => t.textContent)")


def test_train_grows_live_and_the_finished_run_is_taken_apart(server, browser):
    page = open_page(browser, f"{server.url}/learn?tr_steps=80&tr_seed=21", timeout=300)
    try:
        page.get_by_text("These settings have no ready-made run").first.wait_for(timeout=120_000)
        page.get_by_role("button", name="Train").click()
        # while it trains: the progress bar (or, on a fast machine, already the growing loss curves)
        page.wait_for_function("() => document.body.innerText.includes('Training: step') || "
                               "document.body.innerText.includes('Show me without predicting')", timeout=120_000)
        page.get_by_role("button", name="Show me without predicting").wait_for(timeout=180_000)   # finished
        wait_idle(page, 120)
        page.get_by_role("button", name="Show me without predicting").click()
        page.wait_for_function(f"() => ({TITLES})().some(t => t.startsWith('Knockout: loss added'))",
                               timeout=120_000)
        wait_idle(page, 120)
        titles = page.evaluate(TITLES)
        assert any(t.startswith("Loss (nats)") for t in titles)
        assert any(t.startswith("Every head on the probe sequence at step 80") for t in titles)
        assert "tr_train=1" in page.url
        screenshot(page, "learn-trained.png")
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()
