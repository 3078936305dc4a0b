"""Drive the real app in Debian's headless Chromium: a `streamlit run app.py` server and a Playwright browser.

In CI (CI=true) a missing Chromium is a failure, never a silent skip.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def app_pages() -> list[tuple[str, str]]:
    """(url path, title) of every page in app.py's navigation (the table ``explorer.words.pages``); the default
    page is served at ''."""
    from explorer.words.pages import PAGES

    return [("" if p.default else Path(p.file).stem, p.title) for p in PAGES.values()]


def need_chromium():
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        message = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` on a free port, waiting for its health endpoint unless ``wait=False`` (the
    benchmark times its cold start from ``started``, the launch)."""

    def __init__(self, env: dict | None = None, wait: bool = True, log_prefix: str = "server", port: int | None = None,
                 script: str = "app.py", cwd: Path = ROOT):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        ARTIFACTS.mkdir(exist_ok=True)
        self.log = open(ARTIFACTS / f"{log_prefix}-{self.port}.log", "w")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=cwd, stdout=self.log, stderr=subprocess.STDOUT,
            env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})
        if not wait:
            return
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.healthy():
                return
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("streamlit did not start; see " + self.log.name)

    def healthy(self) -> bool:
        try:
            return urllib.request.urlopen(self.url + "/_stcore/health", timeout=2).read() == b"ok"
        except OSError:
            return False

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()


def is_local(url: str) -> bool:
    return bool(re.match(r"^(https?|wss?)://(127\.0\.0\.1|localhost)(:\d+)?/", url)) or url.startswith(
        ("data:", "blob:", "about:"))


def open_page(browser, url: str, timeout: float = 120):
    """A new page at ``url`` that records (and blocks) every request leaving the machine."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.external = []

    def guard(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            page.external.append(route.request.url)
            route.abort()
    context.route("**/*", guard)
    page.goto(url)
    wait_idle(page, timeout)
    return page


async def new_page_async(browser, viewport=(1400, 1000), **options):
    """Async Playwright: a new page in its own context that records (and blocks) every request leaving the
    machine (``page.external``) and records page errors (``page.errors``)."""
    context = await browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **options)
    page = await context.new_page()
    page.external, page.errors = [], []

    async def guard(route):
        if is_local(route.request.url):
            await route.continue_()
        else:
            page.external.append(route.request.url)
            await route.abort()
    await context.route("**/*", guard)
    page.on("pageerror", lambda err: page.errors.append(str(err)[:300]))
    return page


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'   # the script has finished running


def wait_idle(page, timeout: float = 120):
    """Wait until Streamlit has finished running the script (the app root says so) and the page settled."""
    page.wait_for_timeout(300)  # let a rerun triggered just before start
    deadline = time.monotonic() + timeout
    while True:
        # a fresh server's first run reruns itself through app.py (use_app_navigation): on a busy machine the
        # browser can show "not running" between the two runs for longer than the wait above, so it must hold
        for selector in (IDLE, '[data-testid="stMain"] h1'):
            page.wait_for_selector(selector, timeout=max(deadline - time.monotonic(), 1) * 1000)
        page.wait_for_timeout(400)
        if page.query_selector(IDLE) is not None:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the script was still running after {timeout} s")


def exception_texts(page) -> list[str]:
    return [e.inner_text()[:500] for e in page.query_selector_all('[data-testid="stException"]')]


# every shown chart of the page drawn, none wider than its container (plotly redraws a chart when its container
# resizes); a chart in a closed expander has no width to fit
CHARTS_FIT = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => {
  const width = c.getBoundingClientRect().width, svg = c.querySelector('.js-plotly-plot .main-svg');
  return width === 0 || (svg !== null && svg.getBoundingClientRect().width <= width + 2);
})"""


def charts_fit(page, timeout: float = 60) -> None:
    """Wait until every chart on the page is drawn and fits its container (after the page opened, or after the
    viewport changed size: plotly redraws at the new width a moment later)."""
    page.wait_for_function(CHARTS_FIT, timeout=timeout * 1000)


def screenshot(page, name: str) -> Path:
    """Save the whole page: Streamlit scrolls inside its main block, so grow the viewport to its height first."""
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
                           "[data-testid=\"stMainBlockContainer\"]')].map(e => e.scrollHeight), 800)")
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 80, 12000)})
    charts_fit(page)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def fetch(url: str, gzip_ok: bool = True) -> tuple[dict, bytes]:
    """(headers, body as sent) of a GET, asking for gzip or not (urllib never decompresses by itself)."""
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip, deflate" if gzip_ok else "identity"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return {k.lower(): v for k, v in answer.headers.items()}, answer.read()


def main_bundle(url: str) -> str:
    """The address (``/static/js/index.….js``) of Streamlit's main JavaScript bundle, read from the app's page."""
    html = fetch(url + "/", gzip_ok=False)[1].decode()
    return re.search(r'src="\.?(/static/js/index\.[^"]+\.js)"', html).group(1)


# ---------------------------------------------------------------------------------------------- axe-core
# WCAG 2.1 A and AA with axe-core (axe-playwright-python's bundled axe.min.js). Streamlit's own components break a
# few rules in any app: a violation on our pages is allowed only when it is listed here and a bare Streamlit app
# shows it on the same kind of component (tests/browser/test_pages.py measures that; docs/robustness.md says what
# we did about each).
WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
              "resultTypes": ["violations"]}

# (axe rule, data-testid of the Streamlit component that raises it): why it is Streamlit's, not ours.
STREAMLIT_OWN = {
    ("list", "stSidebarNavItems"): "the sidebar navigation's section headers sit as <div>s inside its <ul>",
    ("listitem", "stSidebarNavItems"): "so its <li> items are not all direct children of a list",
}


def violations(page) -> list[tuple[str, str, str]]:
    """axe's WCAG 2.1 A/AA violations on the page as (rule, the data-testid of the nearest Streamlit component
    around the offending element, its HTML), one per element."""
    from axe_playwright_python.sync_playwright import Axe

    found = []
    for rule in Axe().run(page, options=WCAG_21_AA).response["violations"]:
        for node in rule["nodes"]:
            component = page.evaluate("t => { const e = document.querySelector(t); const c = e && "
                                      "e.closest('[data-testid]'); return c ? c.dataset.testid : '' }",
                                      node["target"][-1])
            found.append((rule["id"], component, node["html"][:160]))
    return found


def summary_after(chart) -> str:
    """The text summary a chart carries: the caption right after it (explorer/ui/chart_text.py)."""
    return chart.locator("xpath=following::*[@data-testid='stCaptionContainer'][1]").inner_text()


# every chart's margins as plotly drew them against the ones it was asked for: a grown margin means plotly's
# automargin drew the chart a second time (plots/room.py asks for the room the labels take)
GROWN_MARGINS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].flatMap(gd => {
  const L = gd._fullLayout;
  return ['l', 'r', 't'].filter(s => Math.abs(L._size[s] - L.margin[s]) >= 1)
    .map(s => `${(L.title || {}).text}: ${s} ${L.margin[s]} -> ${L._size[s]}`);
})"""


# ---------------------------------------------------------------------------------------------- points on charts
# Where the centre of the tile (layer, head) of a layers × heads map (the heatmap page's overview, What heads do's
# knockout map) is on the page: plotly's own axis maps, in page pixels.
TILE_CENTRE = """([layer, head]) => {
  const gd = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
    .find(g => g._fullLayout && (g._fullLayout.yaxis.title || {}).text === 'layer');
  const box = gd.querySelector('.main-svg').getBoundingClientRect(), L = gd._fullLayout;
  return [box.left + L._size.l + L.xaxis.l2p(head), box.top + L._size.t + L.yaxis.l2p(layer)];
}"""


def settled_on_screen(page, point: str, arg=None, timeout: float = 30) -> None:
    """Wait until the page point that the script ``point`` returns for ``arg`` ([x, y], e.g. a chart's cell just
    scrolled into view) lies inside the viewport and stayed where it was from one animation frame to the next."""
    page.wait_for_function(f"""arg => {{
      const [x, y] = ({point})(arg), here = `${{x}},${{y}}`, same = window.__settledAt === here;
      window.__settledAt = here;
      return same && x >= 0 && y >= 0 && x <= innerWidth && y <= innerHeight;
    }}""", arg=arg, timeout=timeout * 1000, polling="raf")
