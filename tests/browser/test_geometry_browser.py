"""Head geometry in headless Chromium against the real server: the map of one head is drawn after the shared
corpus pass; hovering a point shows its token in its sentence; clicking it draws lines to its top keys and offers
the heatmap link for that sentence; clicking a small map of the layer's grid shows that head."""
import re

import pytest
from chromium import exception_texts, open_page, screenshot, settled_on_screen, wait_idle

pytestmark = pytest.mark.browser

# The page position of the query point farthest right in the head map (fewest neighbours to hover instead).
MAP = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot .gtitle')]
  .find(t => t.textContent.startsWith('layer 0 · head 2 (')).closest('.js-plotly-plot')"""
QUERY_POINT = """() => {
  const gd = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot .gtitle')]
    .find(t => t.textContent.startsWith('layer 0 · head 2 (')).closest('.js-plotly-plot');
  const q = gd._fullData[0], L = gd._fullLayout;
  let best = 0;
  for (let i = 0; i < q.x.length; i++) if (q.x[i] > q.x[best]) best = i;
  const box = gd.querySelector('.main-svg').getBoundingClientRect();
  return [box.left + L._size.l + L.xaxis.l2p(q.x[best]), box.top + L._size.t + L.yaxis.l2p(q.y[best])];
}"""


def hover_map(page, point: str, failed: str) -> tuple[float, float, str]:
    """Once layer 0 · head 2's map is drawn: hover the point that the script ``point`` places -> (x, y, hover text);
    a screenshot ``failed`` if no hover label comes."""
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                           ".some(t => t.textContent.startsWith('layer 0 · head 2 ('))", timeout=240_000)
    wait_idle(page, 240)
    page.evaluate(f"() => ({MAP})().scrollIntoView({{block: 'center'}})")
    settled_on_screen(page, point)
    x, y = page.evaluate(point)
    page.mouse.move(x, y)
    hover = page.locator(".hoverlayer .hovertext")
    try:
        hover.first.wait_for(timeout=10_000)
    except Exception:
        screenshot(page, failed)
        raise
    return x, y, hover.first.text_content()


# The page position of head ``head``'s first query in the layer's grid of small maps.
GRID_POINT = """(head) => {
  const gd = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
    .find(g => g._fullData && (g._fullData[0].name || '') === 'head 0 queries');
  const t = gd._fullData[2 * head], L = gd._fullLayout;
  const xa = L[t.xaxis.replace('x', 'xaxis')], ya = L[t.yaxis.replace('y', 'yaxis')];
  gd.scrollIntoView({block: 'center'});
  const box = gd.querySelector('.main-svg').getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(t.x[0]), box.top + ya._offset + ya.l2p(t.y[0])];
}"""


def test_map_hover_and_click_a_query_then_a_small_map_of_the_grid(server, browser):
    """One visit (a page visit costs the suite seconds of Chromium): hover and click a query of the head's map,
    then click head 5's small map in the layer's grid."""
    page = open_page(browser, f"{server.url}/geometry?layer=0&head=2", timeout=300)
    try:
        x, y, text = hover_map(page, QUERY_POINT, "geometry-hover-failed.png")
        assert ("query" in text or "key" in text) and "[" in text and "]" in text   # the token in its sentence
        page.mouse.click(x, y)
        page.get_by_text("Top keys").first.wait_for(timeout=120_000)
        wait_idle(page, 240)
        lines = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].find(t => t.textContent"
                              ".startsWith('layer 0 · head 2 (')).closest('.js-plotly-plot').layout.shapes.length")
        assert lines >= 1
        link = page.get_by_role("link", name=re.compile(r"^Take “.+” → “.+” apart on the heatmap page$"))
        href = link.get_attribute("href")
        assert "heatmaps?" in href and "layer=0" in href and "head=2" in href and "breakdown=1" in href
        screenshot(page, "geometry-clicked.png")
        assert exception_texts(page) == [] and page.external == []

        page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')].some(g => g._fullData && "
                               "(g._fullData[0].name || '') === 'head 0 queries')", timeout=240_000)
        settled_on_screen(page, GRID_POINT, 5)   # scrolled into view (GRID_POINT scrolls)
        x, y = page.evaluate(GRID_POINT, 5)
        page.mouse.click(x, y)
        page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                               ".some(t => t.textContent.startsWith('layer 0 · head 5 ('))", timeout=120_000)
        assert "head=5" in page.url
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()


# The page position of the student's text's point farthest from every corpus point (nothing else to hover).
TEXT_POINT = """() => {
  const gd = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot .gtitle')]
    .find(t => t.textContent.startsWith('layer 0 · head 2 (')).closest('.js-plotly-plot');
  const L = gd._fullLayout, px = v => L.xaxis.l2p(v), py = v => L.yaxis.l2p(v);
  const mine = gd._fullData.find(t => t.name.startsWith('your text')), corpus = gd._fullData.slice(0, 2);
  let best = 0, far = -1;
  for (let i = 0; i < mine.x.length; i++) {
    let near = Infinity;
    for (const t of corpus) for (let j = 0; j < t.x.length; j++)
      near = Math.min(near, Math.hypot(px(t.x[j]) - px(mine.x[i]), py(t.y[j]) - py(mine.y[i])));
    if (near > far) { far = near; best = i; }
  }
  const box = gd.querySelector('.main-svg').getBoundingClientRect();
  return [box.left + L._size.l + px(mine.x[best]), box.top + L._size.t + py(mine.y[best])];
}"""


def test_hovering_the_students_text_shows_its_token_and_a_click_picks_no_corpus_query(server, browser):
    page = open_page(browser, f"{server.url}/geometry?layer=0&head=2&text=A+%3Cb%3Ezebra%3C%2Fb%3E+sleeps.",
                     timeout=300)
    try:
        x, y, text = hover_map(page, TEXT_POINT, "geometry-text-hover-failed.png")
        assert "your text" in text and "[" in text                      # the token in the student's text
        asked = page.evaluate("window.__streamlit.asked")
        page.mouse.click(x, y)
        # the click reached the app before the page is checked unchanged: the chart takes any point's click
        # (selection_mode="points"), so its selection went to the server as a rerun, and that run has finished
        page.wait_for_function("before => window.__streamlit.asked > before", arg=asked, timeout=60_000)
        wait_idle(page, 120)
        assert page.get_by_text("Click a query").count() >= 1 and page.get_by_text("Top keys").count() == 0
        assert exception_texts(page) == [] and page.external == []
    finally:
        page.context.close()
