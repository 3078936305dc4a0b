"""Injection and offline rows of docs/robustness.md in headless Chromium against the real server.

Typed markup must stay text: no script runs (``window.__xss`` stays unset in the page and in every frame, no
dialog opens), the characters are visible as typed (tick labels, messages, the bertviz iframe). An unknown hub
id with no network is answered within 2 seconds, measured in the browser, and the page stays usable.
"""
from __future__ import annotations

from contextlib import contextmanager

import pytest
from chromium import ARTIFACTS, Server, exception_texts, open_page, wait_idle

pytestmark = pytest.mark.browser

SCRIPT = "<script>window.__xss=1;alert(1)</script> it was"
IMG = '<img src=x onerror="window.__xss=1;alert(1)"> the cat'
SVG = '<svg onload="window.__xss=1;alert(1)"></svg> the dog'
PAYLOADS = {"script": SCRIPT, "img-onerror": IMG, "svg-onload": SVG}
MARKDOWN = "**b** $x$ :red[r] <i>i</i> [l](x)"      # fits the 40 characters a link note quotes
UNKNOWN = "nobody-here/no-such-model-xyz"


@contextmanager
def watched(browser, url: str):
    """open_page, plus a record of every dialog (alert) any frame tries to open; the page's context is closed at
    the end."""
    page = open_page(browser, url)
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    try:
        yield page
    finally:
        page.context.close()


def no_script_ran(page) -> None:
    for frame in page.frames:
        assert frame.evaluate("() => window.__xss") is None, frame.url
        assert frame.evaluate("() => document.querySelectorAll('img[src=\"x\"], svg[onload]').length") == 0
    assert page.dialogs == []
    assert exception_texts(page) == [] and page.external == []


def type_text(page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(page)


def tick_texts(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .xtick text')].map(t => t.textContent)")


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_markup_typed_into_the_heatmap_page_stays_text(server, browser):
    """Each payload typed in turn into one page (each a run of its own): its characters are tick labels."""
    with watched(browser, f"{server.url}/heatmaps") as page:
        for name, payload in PAYLOADS.items():
            type_text(page, "Text", payload)
            # drawn: "<" and the payload's last word both ticks (no earlier text held both)
            page.wait_for_function("w => ['<', w].every(want => [...document.querySelectorAll('.js-plotly-plot "
                                   ".xtick text')].some(t => t.textContent === want))", arg=payload.split()[-1],
                                   timeout=60_000)
            ticks = tick_texts(page)
            assert "<" in ticks and ">" in ticks and "window" in ticks, (name, ticks)   # characters, not an element
            no_script_ran(page)
            page.screenshot(path=str(ARTIFACTS / f"xss-heatmaps-{name}.png"), full_page=True)


def test_markup_in_the_bertviz_iframe_stays_text(server, browser):
    with watched(browser, f"{server.url}/heatmaps") as page:
        type_text(page, "Text", IMG + " " + SCRIPT)
        page.get_by_text("Show bertviz's head view and model view").click()
        wait_idle(page)
        page.wait_for_selector("iframe", timeout=60_000)
        frames = [f for f in page.frames if f != page.main_frame]
        assert frames
        for frame in frames:
            frame.wait_for_function("() => document.querySelectorAll('svg text').length > 0", timeout=60_000)
        texts = [t for f in frames for t in f.evaluate("() => [...document.querySelectorAll('svg text')]"
                                                         ".map(t => t.textContent)")]
        assert any("<" in t for t in texts) and any("window" in t for t in texts) and any("script" in t for t in texts)
        no_script_ran(page)
        page.screenshot(path=str(ARTIFACTS / "xss-bertviz.png"), full_page=True)


def test_markup_on_the_flip_page_stays_text(server, browser):
    """Sentence B without the candidate words: the warning quotes B in full, as typed."""
    with watched(browser, f"{server.url}/flip") as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        typed = IMG + " " + MARKDOWN + " it was"
        type_text(page, "Sentence B", typed)
        page.wait_for_function("(t) => document.querySelector('[data-testid=\"stMain\"]').innerText.includes(t)",
                               arg=typed, timeout=60_000)
        assert not page.locator('[data-testid="stMain"] .katex').count()
        no_script_ran(page)
        page.screenshot(path=str(ARTIFACTS / "xss-flip.png"), full_page=True)
        page.get_by_role("button", name="Use the pair: it … tired / wide (encoder)").click()   # still usable
        wait_idle(page)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert exception_texts(page) == []


def test_markup_on_the_compare_page_stays_text(server, browser):
    with watched(browser, f"{server.url}/compare") as page:
        type_text(page, "Text", SCRIPT + " " + SVG)
        page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .xtick text')]"
                               ".some(t => t.textContent === 'window')", timeout=60_000)
        no_script_ran(page)


def test_markdown_and_latex_in_a_link_are_shown_as_typed(server, browser):
    """A link note quotes the bad value: no bold, no maths, no colour, no link, no HTML."""
    from urllib.parse import quote
    with watched(browser, f"{server.url}/heatmaps?query={quote(MARKDOWN)}") as page:
        alert = page.locator('[data-testid="stAlert"]', has_text="is not a token position")
        assert repr(MARKDOWN) in alert.inner_text()
        assert alert.locator("strong, .katex, a, i, span[class*=colored]").count() == 0
        no_script_ran(page)


def _choose_model(page, option: str) -> None:
    page.locator('[data-testid="stSelectbox"]', has_text="Model").first.click()
    page.get_by_role("option", name=option).first.click()
    wait_idle(page)


# The fault these guard against answered after ~25 s of hub-client retries; the fix answers in 0.5-1.1 s
# (docs/robustness.md). The bound sits between the two, far from either, so a busy CI machine cannot trip it.
HUNG_MS = 8000


def _unknown_hub_id_answer_ms(page) -> float:
    """Type an unknown hub id into the model box and answer its card's "Load it" (the picker asks before a
    download, explorer/ui/linkask.py); milliseconds from Enter until the page says why it cannot load it (the
    card's own look at the hub included)."""
    _choose_model(page, "Other hub id or folder…")
    box = page.get_by_role("textbox", name="Hub id (e.g. prajjwal1/bert-tiny) or local folder")
    box.fill(UNKNOWN)
    start = page.evaluate("() => performance.now()")
    box.press("Enter")
    page.get_by_role("button", name="Load it").click(timeout=30_000)
    done = page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stAlert\"]')]"
        ".some(a => a.innerText.includes('no network connection')) && performance.now()", timeout=30_000, polling=20)
    return done.json_value() - start


def _still_usable(page) -> None:
    assert "Embedded models that always work" in main_text(page)
    _choose_model(page, "all-MiniLM-L6-v2")
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
    assert exception_texts(page) == [] and page.external == []


def test_unknown_hub_id_offline_answers_at_once(server, browser):
    with watched(browser, f"{server.url}/heatmaps") as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        elapsed = _unknown_hub_id_answer_ms(page)
        print(f"unknown hub id, HF_HUB_OFFLINE=1: answered in {elapsed:.0f} ms")
        page.screenshot(path=str(ARTIFACTS / "offline-hub-id.png"), full_page=True)
        assert elapsed < HUNG_MS
        _still_usable(page)


def test_unknown_hub_id_with_no_route_to_the_hub_answers_at_once(browser):
    """No HF_HUB_OFFLINE: the hub endpoint is an address nothing answers, as on a machine with no network."""
    srv = Server(env={"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "https://10.255.255.1"})
    try:
        with watched(browser, f"{srv.url}/heatmaps") as page:
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            elapsed = _unknown_hub_id_answer_ms(page)
            print(f"unknown hub id, no route to the hub: answered in {elapsed:.0f} ms")
            assert elapsed < HUNG_MS
            _still_usable(page)
    finally:
        srv.stop()
