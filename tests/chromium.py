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
from preloaded import Parent

from explorer.serving import process

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Chromium resolves no host name but the loopback's: a request that would leave the machine fails in Chromium itself
# and is recorded by ``record_external`` (a listener, not a route: routing every request through Playwright's
# Python handler cost each page load a round trip per file)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"]


def app_pages() -> list[tuple[str, str]]:
    """(url path, title) of every page in app.py's navigation (the table ``explorer.sitemap.table``); the default
    page is served at ''."""
    from explorer.sitemap.table import PAGES

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


_preloaded: Parent | None = None   # tests/preloaded.py's forking parent, once ``preload_servers`` has been called


def server_env(env: dict | None = None) -> dict:
    """The environment a test server starts with: this process's, offline, ``env`` over them, and the settings
    app.py sets first thing where they are unset (``process.server_defaults``), so that a server forked from the
    preloaded parent and a cold one start alike."""
    out = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    process.server_defaults(out)
    return out


def preload_servers():
    """From now on, a ``Server`` of this process is forked from a parent that has imported the heavy libraries once
    (tests/preloaded.py), where its environment allows; the test suite calls this, the benchmarks do not."""
    global _preloaded
    _preloaded = _preloaded or Parent(server_env(), ROOT)


class Server:
    """``streamlit run app.py`` on a free port, waiting for its health endpoint unless ``wait=False`` (the
    benchmark times its cold start from ``started``, the launch). After ``preload_servers`` it is forked from a
    parent with the libraries imported (tests/preloaded.py) where its environment allows."""

    def __init__(self, env: dict | None = None, wait: bool = True, log_prefix: str = "server", port: int | None = None,
                 script: str = "app.py", cwd: Path = ROOT):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        ARTIFACTS.mkdir(exist_ok=True)
        self.log = open(ARTIFACTS / f"{log_prefix}-{self.port}.log", "w")
        self.started = time.perf_counter()
        args = ["run", script, "--server.port", str(self.port), "--server.address", "127.0.0.1",
                "--server.headless", "true"]
        env = server_env(env)
        if _preloaded and _preloaded.takes(env):
            self.proc = _preloaded.launch(args, env, cwd, self.log.name)
        else:
            self.proc = subprocess.Popen([sys.executable, "-m", "streamlit", *args], cwd=cwd, stdout=self.log,
                                         stderr=subprocess.STDOUT, env=env)
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


def record_external(page):
    """``page`` with ``page.external``: every request of it that was not for this machine (Chromium, started with
    ``CHROMIUM_ARGS``, cannot reach any other) -> the same page."""
    page.external = []
    page.on("request", lambda request: None if is_local(request.url) else page.external.append(request.url))
    return page


def open_page(browser, url: str, timeout: float = 120):
    """A new page at ``url`` that records every request for another machine (``record_external``): in a context of
    its own, or, given a ``shared_profile``, a new tab of it; close it with ``close_page``."""
    if getattr(browser, "shared_profile", False):
        page = browser.new_page()
    else:
        page = watch(browser.new_context(viewport={"width": 1400, "height": 1000})).new_page()
    record_external(page)
    page.goto(url)
    wait_idle(page, timeout)
    return page


def close_page(page) -> None:
    """Close a page of ``open_page``: its context, or only the tab in a ``shared_profile``."""
    if getattr(page.context, "shared_profile", False):
        page.close()
    else:
        page.context.close()


def shared_profile(playwright, folder: Path):
    """Chromium with one profile on disk (``folder``) whose tabs share its HTTP and code cache, as a student's own
    browser does from its second visit on: a page visit costs about 30 % less CPU than in a fresh context each
    (measured: 12 visits, 70-74 s of CPU against 50-52 s). Each tab is still a session of its own on the server.
    For visits that need no cold cache and share no cookies' state; the first visit of the profile is a cold one."""
    context = watch(playwright.chromium.launch_persistent_context(
        str(folder), executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000}))
    context.shared_profile = True
    return context


async def new_page_async(browser, viewport=(1400, 1000), **options):
    """Async Playwright: a new page in its own context that records every request for another machine
    (``record_external``) and its page errors (``page.errors``)."""
    context = await browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **options)
    await context.add_init_script(WATCH)
    page = record_external(await context.new_page())
    page.errors = []
    page.on("pageerror", lambda err: page.errors.append(str(err)[:300]))
    return page


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'   # the script has finished running

# Streamlit's own messages, read inside the page so that a wait ends on what happened, not after a fixed time: the
# time of the last script run the browser asked for (a BackMsg whose field is rerun_script, 11: a click, a typed
# text, a page link), of the last run the server started (ForwardMsg.new_session, 4: also a run the server starts
# itself, as a follower's or a fresh server's rerun through app.py) and of the last run's end with its status
# (ForwardMsg.script_finished, 6; 2 = FINISHED_EARLY_FOR_RERUN: another run follows at once), and how many runs have
# ended (``live_class.runs``). Each websocket message
# is one protobuf message: its top-level fields are read, payloads skipped.
WATCH = r"""(() => {
  if (window.__streamlit) return;
  const w = window.__streamlit = {asked: 0, started: 0, finished: 0, status: -1, runs: 0, input: 0};
  for (const kind of ['pointerdown', 'click', 'keydown']) {   // the user's last input (a click's run may follow)
    addEventListener(kind, () => { w.input = performance.now(); }, true);
  }
  const varint = (b, i) => {
    let v = 0, s = 1, x;
    do { x = b[i++]; v += (x & 127) * s; s *= 128; } while (x > 127);
    return [v, i];
  };
  const field = b => {   // the first field past hash (1) and metadata (2): a message's kind -> [number, varint]
    for (let i = 0, t, v; i < b.length;) {
      [t, i] = varint(b, i);
      const kind = t & 7, number = t >>> 3;
      if (kind === 0) [v, i] = varint(b, i); else if (kind === 2) { [v, i] = varint(b, i); i += v; v = null; }
      else if (kind === 1) i += 8; else if (kind === 5) i += 4; else return [0, null];
      if (number > 2) return [number, v];
    }
    return [0, null];
  };
  const bytes = d => d instanceof ArrayBuffer ? new Uint8Array(d)
    : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : null;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!this.__watched) {
      this.__watched = true;
      this.addEventListener('message', e => {
        const b = bytes(e.data), [number, value] = b ? field(b) : [0, null];
        if (number === 4) w.started = performance.now();
        if (number === 6) { w.finished = performance.now(); w.status = value; w.runs += 1; }
      });
    }
    const b = bytes(data);
    if (b && b[0] === (11 << 3 | 2)) w.asked = performance.now();
    return send.call(this, data);
  };
})()"""

# Every run asked for or started has finished, the last not to be followed by another (a fresh server's first run
# reruns itself through app.py), the app root says so, a page title is drawn when ``title``, no element waits for its
# code (Streamlit's stSkeleton), every shown chart has been drawn by plotly (it draws after the run), and the user's
# last input (a click, a key) has either sent its run or been left 100 ms without one: a click's message can leave the
# page a moment after Playwright's click returned, and a page quiet before the click then passed at once (measured: a
# teacher's "Reveal the answer" timed at 44 ms, its run not begun); all that held for 50 ms with no message between.
SETTLED = """title => {
  const w = window.__streamlit;
  if (w === undefined) throw new Error('a page opened without chromium.watch on its context');
  const drawn = c => c.getBoundingClientRect().width === 0 || c.querySelector('.js-plotly-plot')?._fullLayout
    && c.querySelector('.main-svg') !== null;
  const now = performance.now();
  const done = w.finished > w.asked && w.finished >= w.started && w.status !== 2
    && (w.asked >= w.input || now - w.input >= 100)
    && document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState === 'notRunning'
    && (!title || document.querySelector('[data-testid="stMain"] h1') !== null)
    && document.querySelector('[data-testid="stSkeleton"]') === null
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(drawn);
  const key = done ? `${w.asked},${w.started},${w.finished}` : '';
  if (key !== w.heldKey) { w.heldKey = key; w.heldSince = now; }
  return done && now - w.heldSince >= 50;
}"""


def watch(context):
    """``context`` with every page of it watched (``WATCH``), which ``wait_idle`` needs -> the same context."""
    context.add_init_script(WATCH)
    return context


def wait_idle(page, timeout: float = 120):
    """Wait until every script run the page asked for or the server started has finished, none follows, and the
    page shows a title (``SETTLED``); the page's context must be watched (``watch``; ``open_page`` does)."""
    page.wait_for_function(SETTLED, arg=True, timeout=timeout * 1000, polling=25)


def show_without_predicting(page, timeout: float = 120) -> None:
    """Wait for a question that folds what answers it and click its "Show me without predicting" (a student who does
    not want to predict), then wait until the unfolded page has been drawn."""
    button = page.get_by_role("button", name="Show me without predicting")
    button.first.wait_for(timeout=timeout * 1000)
    button.first.click()
    wait_idle(page, timeout)


async def settled(page, timeout_ms: float, title: bool = False) -> None:
    """Async ``wait_idle`` (pages from ``new_page_async``, which watches them)."""
    await page.wait_for_function(SETTLED, arg=title, timeout=timeout_ms, polling=25)


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


# every formula or table box that scrolls sideways has been made focusable (explorer/ui/chart_text.py's script,
# which runs on the page's mutations): what axe checks next, so it waits for it rather than racing it
SCROLLERS_MARKED = """() => [...document.querySelectorAll('.katex-display, [data-testid="stTable"] div')].every(b =>
  !(b.scrollWidth > b.clientWidth && /auto|scroll/.test(getComputedStyle(b).overflowX))
  || b.hasAttribute('tabindex'))"""


def violations(page) -> list[tuple[str, str, str]]:
    """axe's WCAG 2.1 A/AA violations on the page as (rule, the data-testid of the nearest Streamlit component
    around the offending element, its HTML), one per element."""
    from axe_playwright_python.sync_playwright import Axe

    page.wait_for_function(SCROLLERS_MARKED, timeout=30_000)   # the app's script has made them focusable
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
