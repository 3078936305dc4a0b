"""The offline bertviz pages drawn in headless Chromium: every request that is not file:/data:/about: is
aborted and recorded, hostile tokens stay text, and the drawing fits its height."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from bertviz_cases import HOSTILE, random_weights

from explorer.plots import bertviz as bo


def open_page(browser, html: str, path: Path):
    """Open ``html`` from a file (in tests/conftest.py's ``browser``); every request that is not file:/data:/about:
    is recorded and aborted."""
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    seen = {"requests": [], "blocked": [], "errors": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))

    def gate(route):
        seen["blocked"].append(route.request.url)
        route.abort()

    page.route(re.compile(r"^(?!file:|data:|about:).*"), gate)
    page.goto(path.as_uri(), wait_until="load")
    return page, seen


def svg_bottom(page) -> float:
    """Where the drawing ends (CSS px from the top); ``view_height`` must leave room for it."""
    return page.evaluate("Math.max(...[...document.querySelectorAll('#vis svg')]"
                         ".map(s => s.getBoundingClientRect().bottom))")


def external(seen) -> list[str]:
    return seen["blocked"] + [u for u in seen["requests"] if not u.startswith(("file:", "data:", "about:"))]


@pytest.mark.parametrize("keep_csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_head_view_draws_offline_and_hostile_tokens_are_text(browser, tmp_path, keep_csp):
    result = SimpleNamespace(tokens=HOSTILE, key_tokens=None, weights=random_weights(3, 4, len(HOSTILE)))
    html = bo.head_view_html(result, layer=1)
    if not keep_csp:   # the escaping must hold on its own, without the policy as a second wall
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page, seen = open_page(browser, html, tmp_path / "head.html")
    page.wait_for_selector("svg text", state="attached", timeout=30_000)
    texts = page.eval_on_selector_all("svg text", "els => els.map(e => e.textContent)")
    assert texts == HOSTILE + HOSTILE                              # left column, right column, literal
    assert page.eval_on_selector_all("svg line", "els => els.length") == 4 * len(HOSTILE) ** 2
    assert page.eval_on_selector_all("#layer option", "els => els.map(e => e.value)") == ["0", "1", "2"]
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert svg_bottom(page) <= bo.view_height(result, "head")
    assert external(seen) == [] and seen["errors"] == []
    if keep_csp:
        page.screenshot(path="/tmp/bertviz_head_view.png", full_page=True)
    page.close()


def test_model_view_draws_offline_and_detail_shows_literal_tokens(browser, tmp_path):
    n_layers, n_heads = 3, 4
    result = SimpleNamespace(tokens=HOSTILE, key_tokens=None, weights=random_weights(n_layers, n_heads, len(HOSTILE)))
    page, seen = open_page(browser, bo.model_view_html(result), tmp_path / "model.html")
    page.wait_for_selector("svg line", state="attached", timeout=30_000)
    assert page.eval_on_selector_all("svg line", "els => els.length") == n_layers * n_heads * len(HOSTILE) ** 2
    # Click the first thumbnail (its transparent click region) to open the detail panel with the tokens.
    page.evaluate("""() => {
        const region = [...document.querySelectorAll('svg g > rect')].find(r => r.style.opacity === '0');
        region.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    }""")
    tokens = page.eval_on_selector_all("svg text.token", "els => els.map(e => e.textContent)")
    assert tokens == HOSTILE + HOSTILE
    assert page.evaluate("window.__xss") is None
    assert svg_bottom(page) <= bo.view_height(result, "model")
    assert external(seen) == [] and seen["errors"] == []
    page.screenshot(path="/tmp/bertviz_model_view.png")
    page.close()


def test_harness_catches_what_bertviz_alone_does(browser, tmp_path):
    """Control: bertviz's own page asks the CDN for require.js, and its raw JSON lets the token run."""
    import torch
    from bertviz import head_view

    w = random_weights(1, 1, 3)
    raw = head_view(tuple(torch.from_numpy(w[i][None]) for i in range(1)), ["a", HOSTILE[3], "b"],
                    html_action="return").data
    page, seen = open_page(browser, raw, tmp_path / "raw.html")
    page.wait_for_function("window.__xss === 2", timeout=10_000)
    assert any("cdnjs.cloudflare.com" in u for u in external(seen))
    page.close()
