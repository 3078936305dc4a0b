"""Load: thirty students on one server at once, each typing a different sentence and moving a slider. Zero errors,
no one sees another's text, each model loaded once, caches bounded. Latency percentiles are printed (their
thresholds belong to the benchmark); nothing here is timed except the overall test limits.

Twenty-nine of the thirty are websocket clients (bench/wsclient.py): each is a real Streamlit session that sends
what a browser tab sends (the page load, the typed text, the slider's new value) and reads every element the server
draws for it, so the server does all the work of thirty students. The thirtieth is headless Chromium, alone beside
them, and reads its heatmap from the page as a student sees it. Thirty Chromiums on a two-core machine would measure
the machine (their rendering took most of its CPU: 4.7 min against 1.5), not the server.

Alongside the thirty, one session asks for an unknown hub id (a load that fails) and one for the embedded
decoder (a second, slower load): neither disturbs the others.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import time
from pathlib import Path

import pytest
from chromium import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, ROOT, Server, need_chromium, new_page_async, settled

from bench.wsclient import Session
from explorer.model import registry
from explorer.ui import cached

pytestmark = pytest.mark.browser

STUDENTS = int(os.environ.get("LOAD_STUDENTS", "30"))   # the issue asks for 30; fewer for a quick look
BROWSER = STUDENTS - 1   # the student whose page is a real Chromium page; the others are websocket clients
WORDS = ("cat dog horse cow sheep goat pig duck goose chicken rabbit mouse rat fox wolf bear lion tiger zebra deer "
         "camel monkey snake frog fish whale shark eagle owl bee").split()
WAIT_MS = 600_000   # per step, a guard against a hang: 30 pages opening at once took up to 277 s here
WAIT_S = WAIT_MS / 1000
TICKS = "() => [...document.querySelectorAll('.js-plotly-plot .xtick text')].map(t => t.textContent)"


def sentence(i: int) -> str:
    return f"Student {i} says the {WORDS[i]} was tired."


async def idle(page) -> None:
    await settled(page, WAIT_MS)


async def new_page(browser, url: str):
    page = await new_page_async(browser, viewport=(1100, 800))
    await page.goto(url, wait_until="commit", timeout=WAIT_MS)
    return page


async def exceptions(page) -> list[str]:
    return [await e.inner_text() for e in await page.query_selector_all('[data-testid="stException"]')]


async def student(browser, url: str, i: int, timings: dict) -> dict:
    """Open the heatmap page, type sentence i, move the layer slider; report what was seen and how long it took."""
    start = time.monotonic()
    page = await new_page(browser, f"{url}/heatmaps")
    try:
        await page.wait_for_selector(".js-plotly-plot .xtick text", timeout=WAIT_MS)
        await idle(page)
        timings["open"].append(time.monotonic() - start)

        box = page.get_by_label("Text", exact=True)
        await box.fill(sentence(i))
        start = time.monotonic()
        await box.press("Control+Enter")
        await page.wait_for_function(f"() => ({TICKS})().includes('{WORDS[i]}')", timeout=WAIT_MS, polling=50)
        timings["type"].append(time.monotonic() - start)
        await idle(page)

        thumb = page.get_by_role("slider").first       # the layer slider
        await thumb.focus()
        start = time.monotonic()
        await thumb.press("ArrowRight")
        await page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => t.textContent.includes("
            "'layer 1 · head 0'))", timeout=WAIT_MS, polling=50)
        timings["slider"].append(time.monotonic() - start)
        await idle(page)
        ticks = await page.evaluate(TICKS)
        seen = {"ticks": ticks, "exceptions": await exceptions(page), "external": page.external}
        await page.screenshot(path=str(ARTIFACTS / f"load-student-{i}.png"))
        return seen
    except Exception:
        await page.screenshot(path=str(ARTIFACTS / f"load-failed-student-{i}.png"))
        raise
    finally:
        await page.context.close()


def ticks(texts: list[str]) -> list[str]:
    """The x-axis labels of every plotly chart among a websocket session's element texts (the heatmap's tokens)."""
    out = []
    for text in texts:
        if not (text.startswith("{") and '"layout"' in text):
            continue
        spec = json.loads(text)
        for name, axis in spec["layout"].items():
            if name.startswith("xaxis") and isinstance(axis, dict):
                out += [str(t) for t in axis.get("ticktext") or ()]
    return out


def titles(texts: list[str]) -> list[str]:
    return [str((json.loads(t)["layout"].get("title") or {}).get("text", "")) for t in texts
            if t.startswith("{") and '"layout"' in t]


async def ws_student(url: str, i: int, timings: dict) -> dict:
    """Student ``i`` as a websocket session: the heatmap page opened, sentence i typed, the layer slider moved one
    step, as a browser sends them; report what the server drew for it and how long each step took."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    async with Session(url, "heatmaps", keep=True, timeout=WAIT_S) as s:
        opened = await s.load()
        typed = await s.set_text(sentence(i))
        slider = WidgetState(id=s.widget_ids["layer"])
        slider.double_array_value.data.append(1)
        moved = await s.rerun(widgets=[slider])
    runs = (opened, typed, moved)
    for step, run in zip(("open", "type", "slider"), runs):
        if run.seconds is not None:
            timings[step].append(run.seconds)
    return {"ticks": ticks(moved.texts), "exceptions": [e for r in runs for e in r.exceptions],
            "external": [],   # a websocket client fetches nothing else; the browser student records its requests
            "finished": all(r.seconds is not None for r in runs),
            "slider_title": any("layer 1 · head 0" in t for t in titles(moved.texts))}


async def browser_student(url: str, i: int, timings: dict) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            seen = await student(browser, url, i, timings)
        finally:
            await browser.close()
    return {**seen, "finished": True, "slider_title": True}   # its page waited for both (``student``)


async def failing_load(url: str) -> str:
    """A session asking for a hub id that does not exist: the page asks first, then says so in one sentence."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    async with Session(url, "heatmaps", keep=True, timeout=WAIT_S) as s:
        first = await s.load({"model": "nobody-here/no-such-model-xyz"})
        asked = "model_ask_load" in s.widget_ids and any("Load it" in t for t in first.texts)   # a link asks first
        pressed = await s.rerun(widgets=[WidgetState(id=s.widget_ids["model_ask_load"], trigger_value=True)])
    said = [re.sub(r"\\(.)", r"\1", t) for t in pressed.texts if "is not available" in t]   # markdown escapes undone
    return "".join(said) * asked + "".join(first.exceptions + pressed.exceptions)


async def second_model(url: str) -> list[str]:
    """A session on the embedded decoder: a second, slower load beside the class; its heatmap draws the text."""
    async with Session(url, "heatmaps", keep=True, timeout=WAIT_S) as s:
        run = await s.load({"model": registry.EMBEDDED_DECODER, "text": "The owl was tired."})
    drawn = any("owl" in t for t in ticks(run.texts))
    return run.exceptions + ([] if drawn and run.seconds is not None else ["no heatmap of the owl's sentence"])


async def classroom(url: str) -> tuple[list[dict], dict, str, list[str]]:
    timings = {"open": [], "type": [], "slider": []}
    results = await asyncio.gather(failing_load(url), second_model(url),
                                   *(ws_student(url, i, timings) for i in range(BROWSER)),
                                   browser_student(url, BROWSER, timings))
    return results[2:], timings, results[0], results[1]


def percentiles(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return f"p50 {statistics.median(values):.2f} s · p95 {p95:.2f} s · max {values[-1]:.2f} s (n={len(values)})"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime + stime


def rss_mib(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    get = lambda key: int(re.search(rf"{key}:\s+(\d+) kB", status).group(1)) / 1024   # noqa: E731
    return get("VmRSS"), get("VmHWM")


def test_caches_are_bounded():
    """Models: at most EXPLORER_MAX_MODELS; results: at most EXPLORER_RESULT_CACHE_MB; no other unbounded cache."""
    assert cached.result_cache().max_bytes == int(os.environ.get("EXPLORER_RESULT_CACHE_MB", "384")) * 2**20
    assert cached.WORKER.max_models == int(os.environ.get("EXPLORER_MAX_MODELS", "3"))
    for path in [*(ROOT / "pages").glob("*.py"), *(ROOT / "explorer").rglob("*.py")]:
        for line in path.read_text().splitlines():
            if re.search(r"st\.cache_(data|resource)\(|lru_cache\(", line):
                # bounded, or a function of no arguments (one entry)
                assert "max_entries" in line or "maxsize" in line or line.rstrip().endswith(")()"), (path, line)


@pytest.mark.load
@pytest.mark.skipif(STUDENTS == 0, reason="LOAD_STUDENTS=0: load test switched off")
def test_thirty_students_at_once():
    need_chromium()
    server = Server()
    try:
        started = time.monotonic()
        seen, timings, failed, decoder = asyncio.run(classroom(server.url))
        total = time.monotonic() - started
        rss, peak = rss_mib(server.proc.pid)
        cpu = cpu_seconds(server.proc.pid)
    finally:
        server.stop()
    log = Path(server.log.name).read_text()

    print(f"\n{STUDENTS} students in {total:.0f} s; server CPU {cpu:.0f} s; server memory {rss:.0f} MiB now, "
          f"peak {peak:.0f} MiB")
    for step in ("open", "type", "slider"):
        print(f"  {step:7s} {percentiles(timings[step])}")

    for i, s in enumerate(seen):
        assert s["exceptions"] == [] and s["external"] == [], (i, s)
        assert s["finished"] and s["slider_title"], (i, s)   # every step's run ended, the slider's on layer 1
        assert WORDS[i] in s["ticks"] and str(i) in s["ticks"], (i, s["ticks"])
        others = (set(WORDS) - {WORDS[i]}) & set(s["ticks"])
        assert not others, f"student {i} sees another student's words: {others}"
    assert "nobody-here/no-such-model-xyz" in failed and "Traceback" not in failed
    assert decoder == []
    assert "Traceback" not in log, log[-3000:]
    assert log.count(f"loaded model {registry.EMBEDDED_ENCODER} ") == 1, log[-3000:]
    assert log.count(f"loaded model {registry.EMBEDDED_DECODER} ") == 1, log[-3000:]
    assert peak < 4096, f"server peak memory {peak:.0f} MiB"
