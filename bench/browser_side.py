"""Rows measured against a real ``streamlit run app.py`` server in headless Chromium (async Playwright).

Every timing is taken in this process around a browser action, and ends when the browser shows the result:
the heatmap (the first plotly chart of the page) drawn with the new text's marker word among its row labels,
or with as many rows as the text has tokens when there are too many labels to draw.
"""
from __future__ import annotations

import asyncio
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from chromium import CHROMIUM, CHROMIUM_ARGS, Server  # noqa: E402
from chromium import new_page_async as new_page  # noqa: E402

# True when the heatmap is drawn and, if asked, shows ``marker`` as a row label or has ``rows`` rows.
HEATMAP_DRAWN = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (want.idle && (!app || app.dataset.testScriptState !== 'notRunning')) return false;
  const gd = document.querySelector('[data-testid="stMain"] .js-plotly-plot');
  if (!gd || !gd._fullLayout || !gd.querySelector('.heatmaplayer image, .hm image')) return false;
  if (want.title && !(gd.querySelector('.gtitle') || {textContent: ''}).textContent.includes(want.title)) return false;
  if (want.marker) return [...gd.querySelectorAll('.ytick text')].some(t => t.textContent === want.marker);
  if (want.rows) { const r = gd._fullLayout.yaxis.range; return Math.max(r[0], r[1]) >= want.rows - 1; }
  return true;
}"""
NEXT_FRAME = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


class AppServer(Server):
    """``streamlit run app.py`` on a free port, not waited for: ``started`` is when the process was launched."""

    def __init__(self, env: dict | None = None, cwd: Path = ROOT):
        super().__init__(env, wait=False, log_prefix="bench-server", cwd=cwd)

    async def ready(self, timeout: float = 120) -> float:
        """Wait for the health endpoint; seconds since launch."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited; see {self.log.name}")
            if await asyncio.to_thread(self.healthy):
                return time.perf_counter() - self.started
            await asyncio.sleep(0.05)
        raise RuntimeError(f"streamlit did not start in {timeout:.0f} s; see {self.log.name}")

    def rss(self) -> int:
        """Resident memory of the server process, in bytes."""
        try:
            import psutil
            return psutil.Process(self.proc.pid).memory_info().rss
        except ImportError:
            with open(f"/proc/{self.proc.pid}/status") as fh:
                return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS"))


class RunningServer:
    """A server this benchmark did not start (``--url``): the same ``url``, ``proc.pid`` and ``rss()`` as
    ``AppServer``; ``stop`` leaves it running."""

    def __init__(self, url: str, pid: int):
        self.url, self.proc = url.rstrip("/"), type("Process", (), {"pid": pid})()

    async def ready(self, timeout: float = 120) -> float:
        return 0.0

    def rss(self) -> int:
        return AppServer.rss(self)

    def stop(self) -> None:
        pass


def cpu_seconds(server: AppServer) -> dict:
    """CPU seconds used so far by the server, by this benchmark's browsers (every other descendant of this
    process) and by the whole machine."""
    import psutil

    def used(proc) -> float:
        try:
            t = proc.cpu_times()
            return t.user + t.system
        except psutil.Error:
            return 0.0
    me = psutil.Process()
    browsers = sum(used(p) for p in me.children(recursive=True) if p.pid != server.proc.pid)
    machine = psutil.cpu_times()
    return dict(server=used(psutil.Process(server.proc.pid)), browsers=browsers,
                machine=machine.user + machine.system + getattr(machine, "nice", 0.0))


async def launch(playwright):
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


async def heatmap(page, timeout: float, marker: str | None = None, rows: int | None = None,
                  idle: bool = False, title: str | None = None, polling="raf") -> None:
    """Wait until the heatmap is drawn (checked every animation frame, or every ``polling`` ms)."""
    await page.wait_for_function(HEATMAP_DRAWN, arg=dict(marker=marker, rows=rows, idle=idle, title=title),
                                 timeout=timeout * 1000, polling=polling)


async def idle(page, timeout: float = 120) -> None:
    await page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                                 timeout=timeout * 1000)


async def exceptions(page) -> list[str]:
    return [await e.inner_text() for e in await page.query_selector_all('[data-testid="stException"]')]


async def submit_text(page, text: str) -> float:
    """Type ``text`` into the page's text area and submit it (Ctrl+Enter); returns the submit time."""
    box = page.locator('[data-testid="stTextArea"] textarea').first
    await box.fill(text)
    start = time.perf_counter()
    await box.press("Control+Enter")
    return start


MODEL_MENU = "Model"   # the heatmap page's model menu, by its label (English: the server's default language)


async def open_menu(page, label: str, option: str, timeout: float = 30):
    """Open the select box labelled ``label`` (by its label, never by its place on the page: the sidebar's
    Language menu is the first select box of every page) and return its entry that shows ``option``, not yet
    clicked."""
    label_of = page.locator('[data-testid="stWidgetLabel"]', has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))
    box = page.locator('[data-testid="stSelectbox"]').filter(has=label_of)
    await box.first.click(timeout=timeout * 1000)
    entry = page.get_by_role("option").filter(has_text=option).first
    await entry.wait_for(timeout=timeout * 1000)
    return entry


def heatmaps_url(server: AppServer, model: str | None = None) -> str:
    from urllib.parse import urlencode
    return f"{server.url}/heatmaps" + (f"?{urlencode({'model': model})}" if model else "")


# ---------------------------------------------------------------------------------------------- rows

async def cold_start(playwright, decoder: str, env: dict) -> dict:
    """Row 4: launch the server, open the heatmap page at once, time until its heatmap is drawn; then pick the
    decoder in the page's model menu and time its first load; then the server's resident memory with both
    models loaded (row 8)."""
    browser = await launch(playwright)
    page = await new_page(browser)
    server = AppServer(env)
    try:
        health = await server.ready()
        await page.goto(heatmaps_url(server))
        await heatmap(page, timeout=180)
        first = time.perf_counter() - server.started
        await idle(page)
        rss_one = server.rss()
        # The decoder's first load: pick it in the model menu of the open page, as a user would.
        option = await open_menu(page, MODEL_MENU, decoder)
        start = time.perf_counter()
        await option.click()
        await heatmap(page, timeout=180, title=decoder)
        decoder_s = time.perf_counter() - start
        await idle(page)
        errors = await exceptions(page) + page.errors
        external = page.external
        return dict(health_s=health, first_heatmap_s=first, decoder_first_s=decoder_s, rss_encoder=rss_one,
                    rss_both=server.rss(), errors=errors, external=external)
    finally:
        server.stop()
        await browser.close()


async def page_bytes(playwright, server: AppServer, model: str | None, with_bertviz: bool) -> dict:
    """Row 5: bytes the browser receives for the heatmap page (websocket frames, the page's own HTTP requests,
    Streamlit's static bundle apart), and optionally for switching on the embedded bertviz views."""
    browser = await launch(playwright)
    try:
        page = await new_page(browser)
        counts = {"ws": 0, "http": 0, "static": 0}

        def on_ws(ws):
            ws.on("framereceived", lambda payload: counts.__setitem__(
                "ws", counts["ws"] + len(payload if isinstance(payload, bytes) else payload.encode("utf-8"))))
        page.on("websocket", on_ws)
        finished = []

        async def on_done(request):
            try:
                sizes = await request.sizes()
            except Exception:   # a request cancelled by navigation has no sizes
                return
            size = sizes["responseBodySize"] + sizes["responseHeadersSize"]
            counts["static" if "/static/" in request.url else "http"] += size
        page.on("requestfinished", lambda r: finished.append(asyncio.ensure_future(on_done(r))))
        await page.goto(heatmaps_url(server, model))
        await heatmap(page, timeout=180, idle=True)
        await page.wait_for_timeout(1500)   # anything still streaming in
        await asyncio.gather(*finished)
        out = dict(page=dict(counts), external=list(page.external), errors=page.errors + await exceptions(page))
        if with_bertviz:
            before = dict(counts)
            await page.get_by_text("Show bertviz").click()
            await page.wait_for_timeout(500)
            await idle(page)
            await page.wait_for_timeout(1500)
            await asyncio.gather(*finished)
            out["bertviz"] = {k: counts[k] - before[k] for k in counts}
            out["errors"] += await exceptions(page)
        return out
    finally:
        await browser.close()


async def edit_latency(playwright, server: AppServer, model: str | None, texts: list[tuple[str, str]],
                       timeout: float = 60) -> dict:
    """Row 3: submit a new text, time until the heatmap shows it (texts: (text, marker) pairs)."""
    browser = await launch(playwright)
    try:
        page = await new_page(browser)
        await page.goto(heatmaps_url(server, model))
        await heatmap(page, timeout=180, idle=True)
        times = []
        for text, marker in texts:
            start = await submit_text(page, text)
            await heatmap(page, timeout=timeout, marker=marker)
            times.append(time.perf_counter() - start)
            await idle(page)
            await page.wait_for_timeout(300)
        return dict(times=times, errors=page.errors + await exceptions(page))
    finally:
        await browser.close()


async def long_input(playwright, server: AppServer, texts: list[str], n_tokens: int, timeout: float = 120) -> dict:
    """Row 6: submit a text of ``n_tokens`` tokens; time until the script is done and the heatmap has that many
    rows ("usable"), and until every chart of the page is drawn."""
    browser = await launch(playwright)
    try:
        page = await new_page(browser)
        usable, complete = [], []
        for text in texts:
            await page.goto(heatmaps_url(server))
            await heatmap(page, timeout=180, idle=True)
            start = await submit_text(page, text)
            await heatmap(page, timeout=timeout, rows=n_tokens, idle=True)
            usable.append(time.perf_counter() - start)
            await page.wait_for_function(
                "() => [...document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot')]"
                ".every(gd => gd._fullLayout) && !document.querySelector('[data-stale=\"true\"]')",
                timeout=timeout * 1000, polling="raf")
            await page.evaluate(NEXT_FRAME)
            complete.append(time.perf_counter() - start)
        return dict(usable=usable, complete=complete, errors=page.errors + await exceptions(page))
    finally:
        await browser.close()


POLL_MS = 50   # row 7 checks each tab every 50 ms: checking 30 tabs every frame costs the machine it measures


async def concurrent_sessions(playwright, server: AppServer, plans: list[list[tuple[str, str]]],
                              think: tuple[float, float], open_concurrency: int = 3,
                              timeout: float = 60, seed: int = 0) -> dict:
    """Row 7: one Chromium, one context per session. All sessions open the heatmap page, then each submits its
    texts one after another with a random think time between them; latency = submit → its heatmap shows it."""
    rng = random.Random(seed)
    browser = await launch(playwright)
    pages, open_s, latencies, errors = [], [], [], []
    gate = asyncio.Semaphore(open_concurrency)

    async def open_one(i: int):
        async with gate:
            # reduced motion: 30 tabs on the server's own cores should not spend them on fade animations
            page = await new_page(browser, viewport=(1280, 900), reduced_motion="reduce")
            start = time.perf_counter()
            try:
                await page.goto(heatmaps_url(server))
                await heatmap(page, timeout=180, idle=True, polling=POLL_MS)
                open_s.append(time.perf_counter() - start)
            except Exception as err:
                errors.append(f"session {i} did not open: {str(err).splitlines()[0][:200]}")
            return page

    async def session(i: int, page, plan):
        for text, marker in plan:
            await asyncio.sleep(rng.uniform(*think))
            try:
                start = await submit_text(page, text)
                await heatmap(page, timeout=timeout, marker=marker, polling=POLL_MS)
                latencies.append(time.perf_counter() - start)
            except Exception as err:
                errors.append(f"session {i}: {str(err).splitlines()[0][:200]}")
        await idle(page, timeout)

    try:
        started = time.perf_counter()
        pages = await asyncio.gather(*(open_one(i) for i in range(len(plans))))
        opened = time.perf_counter() - started
        rss_open = server.rss()
        cpu_before, wall = cpu_seconds(server), time.perf_counter()
        await asyncio.gather(*(session(i, p, plan) for i, (p, plan) in enumerate(zip(pages, plans))))
        cpu = {k: v - cpu_before[k] for k, v in cpu_seconds(server).items()}
        wall = time.perf_counter() - wall
        for i, page in enumerate(pages):
            errors += [f"session {i}: {e}" for e in page.errors + await exceptions(page)]
        return dict(latencies=latencies, open_s=open_s, all_open_s=opened, errors=errors, rss_open=rss_open,
                    rss_after=server.rss(), sessions=len(plans), interactions=sum(len(p) for p in plans),
                    cpu=cpu, wall=wall)
    finally:
        await browser.close()
