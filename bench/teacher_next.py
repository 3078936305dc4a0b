"""The teacher's own Next, in one browser: seconds from the click on Next to the new step's page drawn.

    .venv/bin/python bench/teacher_next.py [--lesson 1|2|3] [--rounds 1]

One server, one headless Chromium, nobody else (a class's followers are timed server-side by
bench/lesson_bench.py, since thirty browsers on two cores would measure the machine). The teacher starts the lesson
from Home with one click ("Start with a class"), then presses Next through every step; per step, the time until
the bar says "step n of N", the script has finished, no shared job is still computing (no progress bar) and the
page's charts (every page of the lessons draws at least one) have been drawn by plotly. Loopback
only; the server started here is stopped here.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bench.stats import median, quantile  # noqa: E402
from bench.ws_load import fmt_ms  # noqa: E402

SOURCES = {"1": "app:1-attention-in-20-minutes", "2": "app:2-how-a-decoder-writes",
           "3": "app:3-is-attention-an-explanation"}
DRAWN = """() => {
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  const waiting = document.querySelector('[data-testid="stProgress"]');   // a shared job still computing
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return !running && !waiting && charts.length > 0 && charts.every(c => c.querySelector('.main-svg'));
}"""


async def run(url: str, source: str, rounds: int) -> dict:
    from chromium import new_page_async
    from live_class import WAIT_MS, idle
    from playwright.async_api import async_playwright

    from explorer.lessons import catalogue

    lesson = next(x for x in catalogue({})[0] if x.source == source)
    slug = source.split(":", 1)[1]
    times: dict[str, list[float]] = {}
    async with async_playwright() as p:
        from chromium import CHROMIUM, CHROMIUM_ARGS
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await new_page_async(browser, viewport=(1400, 1000))
        await page.goto(url, timeout=WAIT_MS)
        await idle(page)
        for _ in range(rounds):
            card = page.locator(f".st-key-lesson_card_app-{slug}")
            await card.get_by_role("button", name="Start with a class").first.click(timeout=WAIT_MS)
            await page.get_by_text(f"step 1 of {len(lesson.steps)}").first.wait_for(timeout=WAIT_MS)
            await idle(page)
            for n in range(2, len(lesson.steps) + 1):
                await page.wait_for_timeout(1500)   # the teacher reads the step
                t0 = time.perf_counter()
                await page.get_by_role("button", name="Next").first.click(timeout=WAIT_MS)
                await page.get_by_text(f"step {n} of {len(lesson.steps)}").first.wait_for(timeout=WAIT_MS)
                await page.wait_for_function(DRAWN, timeout=WAIT_MS, polling="raf")
                took = time.perf_counter() - t0
                times.setdefault(f"{n} {lesson.steps[n - 1].page}", []).append(took)
                print(f"  step {n} ({lesson.steps[n - 1].page}): {fmt_ms(took)}", flush=True)
            await page.goto(url, timeout=WAIT_MS)   # Home again for the next round
            await idle(page)
        await browser.close()
    every = [t for ts in times.values() for t in ts]
    print(f"{lesson.title}: teacher's Next -> page drawn, p50 {fmt_ms(median(every))}, p95 "
          f"{fmt_ms(quantile(every, 0.95))}, max {fmt_ms(max(every))}", flush=True)
    return {"lesson": lesson.title, "per_step": times, "p50": median(every), "p95": quantile(every, 0.95)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lesson", default="1", choices=[*SOURCES, "all"])
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args(argv)
    from chromium import Server

    server = Server(log_prefix="teacher-next")
    try:
        result = [asyncio.run(run(server.url, source, args.rounds))
                  for key, source in SOURCES.items() if args.lesson in (key, "all")]
    finally:
        server.stop()
    out = ROOT / "test-artifacts" / "teacher-next.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
