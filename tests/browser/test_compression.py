"""A real `streamlit run app.py` sends Streamlit's JavaScript gzipped to browsers that ask for it (app.py's
``GzipStatic`` middleware) and its icon font cut to the icons that can be drawn (``SubsetIcons``): the first visit
of a class fits classroom Wi-Fi. Plain HTTP, and Chromium for the icons."""
from __future__ import annotations

import gzip

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS, Server, fetch, main_bundle, need_chromium, open_page
from playwright.sync_api import sync_playwright

from explorer.web import icons
from explorer.web.compress import static_dir


@pytest.fixture(scope="module")
def server():
    s = Server({"EXPLORER_PRELOAD": ""})
    try:
        yield s
    finally:
        s.stop()


def test_main_bundle_is_gzipped_and_unchanged(server):
    path = main_bundle(server.url)
    on_disk = (static_dir() / path.lstrip("/")).read_bytes()
    headers, body = fetch(server.url + path)
    assert headers["content-encoding"] == "gzip" and "Accept-Encoding" in headers["vary"]
    assert gzip.decompress(body) == on_disk
    assert len(body) < len(on_disk) / 2.5                     # JavaScript packs 3-5 times
    assert "immutable" in headers["cache-control"]           # hashed files keep their year-long cache life
    plain_headers, plain = fetch(server.url + path, gzip_ok=False)
    assert plain == on_disk and "content-encoding" not in plain_headers


@pytest.mark.parametrize("path", ["/", "/heatmaps"])
def test_page_html_is_compressed_and_never_cached(server, path):
    headers, body = fetch(server.url + path)
    assert headers["content-encoding"] == "gzip" and headers["cache-control"] == "no-cache"
    assert b'id="root"' in gzip.decompress(body)


@pytest.mark.browser
def test_the_icon_font_is_the_subset_and_every_icon_draws_as_a_glyph(server):
    """The Material Symbols font's URL answers the subset (explorer.web.icons), and in Chromium every icon on the
    home page (the navigation's, Streamlit's own) is one glyph about 1 em wide: a ligature missing from the subset
    would draw the icon's name as text, several em wide."""
    html = fetch(server.url + "/", gzip_ok=False)[1].decode()
    assert "MaterialSymbols" not in html            # the font is named by the CSS, not the page
    headers, body = fetch(f"{server.url}/static/media/{icons.source_font().name}")
    assert body == icons.SUBSET.read_bytes() and headers["content-type"] == "font/woff2"
    assert "immutable" in headers["cache-control"]
    need_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = open_page(browser, server.url + "/")
            widths = page.evaluate("""async () => { await document.fonts.ready;
                return [...document.querySelectorAll('[data-testid="stIconMaterial"]')].map(e => [e.textContent,
                    e.scrollWidth / parseFloat(getComputedStyle(e).fontSize)]); }""")
            loaded = page.evaluate("() => document.fonts.check('1em \"Material Symbols Rounded\"', 'home')")
        finally:
            browser.close()
    assert loaded and len(widths) >= 15              # the navigation's pages each have one
    assert all(w <= 1.25 for _, w in widths), widths


def test_pages_have_the_browser_fetch_the_chart_code_at_once_and_only_once(server):
    """explorer.web.preload: the page's HTML names plotly's chunk as a module to preload, so the browser starts on
    it while the page's script runs; Streamlit's own import of it later reuses it (one download)."""
    headers, body = fetch(server.url + "/lab_worked_example")
    assert headers["content-encoding"] == "gzip" and b'rel="modulepreload" crossorigin href="./static/js/PlotlyChart.' \
        in gzip.decompress(body)
    need_chromium()
    chunk = "() => performance.getEntriesByType('resource').filter(e => e.name.includes('/PlotlyChart.')).length"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = open_page(browser, server.url + "/")            # Home: no chart on it
            assert page.evaluate(chunk) == 1 and not page.query_selector(".js-plotly-plot")
            page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Worked example").click()   # charts
            page.wait_for_selector('[data-testid="stMain"] .js-plotly-plot .main-svg', timeout=120_000)
            assert page.evaluate(chunk) == 1                       # drawn with the chunk fetched before
            fresh = open_page(browser, server.url + "/lab_worked_example")
            fresh.wait_for_selector('[data-testid="stMain"] .js-plotly-plot .main-svg', timeout=120_000)
            assert fresh.evaluate(chunk) == 1                      # opened straight: still one download
        finally:
            browser.close()
