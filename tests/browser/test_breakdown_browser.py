"""Click a heatmap cell in headless Chromium: the breakdown opens for that query and key, and the weight it shows
is the cell's (the z plotly.js holds for it)."""
import re

import pytest
from chromium import exception_texts, open_page, settled_on_screen, show_without_predicting, wait_idle

pytestmark = pytest.mark.browser

HEATMAP = "[...document.querySelectorAll('.st-key-heatmap .js-plotly-plot')][0]"
# page pixels of cell (query, key): plotly's own maps of the overlaid click axes (x2: key, y2: query)
CELL_CENTRE = f"""([q, k]) => {{
  const gd = {HEATMAP}, L = gd._fullLayout, box = gd.querySelector('.main-svg').getBoundingClientRect();
  return [box.left + L.xaxis2._offset + L.xaxis2.l2p(k), box.top + L.yaxis2._offset + L.yaxis2.l2p(q)];
}}"""
CELL_WEIGHT = f"([q, k]) => {HEATMAP}.calcdata[0][0].z[q][k]"   # the z plotly.js drew


def test_clicking_a_cell_opens_its_breakdown(server, browser):
    page = open_page(browser, f"{server.url}/heatmaps?layer=0&head=3")
    try:
        assert page.evaluate(f"() => {HEATMAP}._fullLayout.xaxis2") is None   # no click points until asked
        page.get_by_text("Take a score apart").click()
        wait_idle(page)
        page.wait_for_function(f"() => {HEATMAP}?._fullLayout?.xaxis2 !== undefined", timeout=60_000)
        page.evaluate(f"() => {HEATMAP}.scrollIntoView({{block: 'center'}})")
        settled_on_screen(page, CELL_CENTRE, [10, 8])
        x, y = page.evaluate(CELL_CENTRE, [10, 8])   # "it" → "street"
        page.mouse.move(x - 3, y - 3)
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        show_without_predicting(page)   # the breakdown asks its question before the score it takes apart
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("weight = softmax of the row at this key").wait_for(timeout=60_000)
        wait_idle(page)
        text = main.inner_text()
        assert "Query it (position 10) → key street (position 8)" in text
        shown = float(re.search(r"weight = softmax of the row at this key = ([0-9.]+)", text).group(1))
        assert abs(shown - page.evaluate(CELL_WEIGHT, [10, 8])) < 5e-5
        assert "breakdown=1" in page.url and "key=8" in page.url and "query=10" in page.url
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()


def test_a_heads_link_on_compare_opens_the_heatmap_page_on_that_cell(server, browser):
    """Followed inside the session (Streamlit's own page change, widget state of the page left behind), the
    compare page's first link opens the heatmap page with the breakdown of the cell it names."""
    page = open_page(browser, f"{server.url}/compare?heads=L0H2,L5H3", timeout=240)
    try:
        link = page.get_by_role("link", name=re.compile(r"Take “it” → “.+” apart on the heatmap page"))
        link.first.wait_for(timeout=60_000)
        href = link.first.get_attribute("href")
        assert "layer=0" in href and "head=2" in href and "query=10" in href and "breakdown=1" in href
        key = int(re.search(r"key=(\d+)", href).group(1))
        link.first.click()
        show_without_predicting(page)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("weight = softmax of the row at this key").wait_for(timeout=120_000)
        wait_idle(page)
        text = main.inner_text()
        assert re.search(rf"Query it \(position 10\) → key .+ \(position {key}\), layer 0, head 2", text)
        shown = float(re.search(r"weight = softmax of the row at this key = ([0-9.]+)", text).group(1))
        assert abs(shown - page.evaluate(CELL_WEIGHT, [10, key])) < 5e-5
        assert "/heatmaps" in page.url and f"key={key}" in page.url and "breakdown=1" in page.url
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()


def test_a_fresh_link_opens_the_breakdown_on_its_key(server, browser):
    """A link opened in a new tab (a new session): ``key=2`` is the key token taken apart ("animal", not the row's
    strongest), not mistaken for a classroom teacher link, and it stays in the address."""
    page = open_page(browser, f"{server.url}/heatmaps?layer=4&head=0&query=10&key=2&breakdown=1", timeout=240)
    try:
        show_without_predicting(page)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("weight = softmax of the row at this key").wait_for(timeout=120_000)
        wait_idle(page)
        text = main.inner_text()
        assert "Query it (position 10) → key animal (position 2), layer 4, head 0" in text
        assert "teacher link" not in text
        shown = float(re.search(r"weight = softmax of the row at this key = ([0-9.]+)", text).group(1))
        assert abs(shown - page.evaluate(CELL_WEIGHT, [10, 2])) < 5e-5
        assert "key=2" in page.url and "breakdown=1" in page.url
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()
