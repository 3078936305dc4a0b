"""The teacher's own Next, in one browser: seconds from the click on Next to the new step's page drawn.

    .venv/bin/python bench/teacher_next.py [--lesson 1-5|all] [--rounds 1] [--url URL]
    .venv/bin/python bench/teacher_next.py --smoke    # lesson 1's first 2 steps (CI: that it still runs)

One server, one headless Chromium, nobody else (a class's followers are timed server-side by
bench/lesson_bench.py, since thirty browsers on two cores would measure the machine). The teacher starts the lesson
from Home with one click ("Start with a class"), then presses Next through every step; per step, the time until
the bar says "step n of N", the script has finished, no shared job is still computing (no progress bar) and every
chart on screen has been drawn by plotly (a step's question folds its page: the question is what Next draws). Then,
where the step asks a question, "Show answers" and the time from "Reveal the answer" to the end of the run it asked
for with the unfolded page's charts drawn. Loopback only; the server started here is stopped here.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bench.classroom_run import save  # noqa: E402
from bench.lesson_bench import LESSONS as SOURCES  # noqa: E402  (the app's lessons, by number)
from bench.stats import median, quantile  # noqa: E402
from bench.ws_load import fmt_ms  # noqa: E402

# drawn: no run or shared job under way, and every chart drawn by plotly; ``charts``: at least one chart (a step's
# page unfolded; before its question is revealed the page is folded and its question is what the teacher sees)
DRAWN = """charts => {
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  const waiting = document.querySelector('[data-testid="stProgress"]');   // a shared job still computing
  const shown = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return !running && !waiting && (!charts || shown.length > 0) && shown.every(c => c.querySelector('.main-svg'));
}"""


async def run(url: str, source: str, rounds: int, steps: int | None = None, read_ms: int = 1500) -> dict:
    """The teacher's Next through the lesson's steps (its first ``steps`` only, when given), reading each step for
    ``read_ms`` before the next click, ``rounds`` times."""
    from chromium import new_page_async
    from live_class import RUNS, WAIT_MS, idle, runs
    from playwright.async_api import async_playwright

    from explorer.lessons import catalogue

    lesson = next(x for x in catalogue({})[0] if x.source == source)
    slug = source.split(":", 1)[1]
    times: dict[str, list[float]] = {}
    reveals: dict[str, list[float]] = {}   # the teacher's "Reveal the answer" -> the unfolded page drawn
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
            for n in range(2, min(len(lesson.steps), steps or len(lesson.steps)) + 1):
                await page.wait_for_timeout(read_ms)   # the teacher reads the step
                t0 = time.perf_counter()
                await page.get_by_role("button", name="Next").first.click(timeout=WAIT_MS)
                await page.get_by_text(f"step {n} of {len(lesson.steps)}").first.wait_for(timeout=WAIT_MS)
                await page.wait_for_function(DRAWN, arg=False, timeout=WAIT_MS, polling="raf")
                took = time.perf_counter() - t0
                times.setdefault(f"{n} {lesson.steps[n - 1].page}", []).append(took)
                line = f"  step {n} ({lesson.steps[n - 1].page}): Next {fmt_ms(took)}"
                show = page.get_by_role("button", name="Show answers")
                if await show.count():   # the step's question folds its page: show the answers, then reveal
                    await show.first.click(timeout=WAIT_MS)
                    await idle(page)
                    before = await runs(page)
                    t0 = time.perf_counter()
                    await page.get_by_role("button", name="Reveal the answer").first.click(timeout=WAIT_MS)
                    await page.wait_for_function(f"() => ({RUNS})() > {before}", timeout=WAIT_MS, polling="raf")
                    await page.wait_for_function(DRAWN, arg=True, timeout=WAIT_MS, polling="raf")
                    took = time.perf_counter() - t0
                    reveals.setdefault(f"{n} {lesson.steps[n - 1].page}", []).append(took)
                    line += f", Reveal {fmt_ms(took)}"
                print(line, flush=True)
            await page.goto(url, timeout=WAIT_MS)   # Home again for the next round
            await idle(page)
        await browser.close()
    out = {"lesson": lesson.title}
    for what, row in (("Next", times), ("Reveal", reveals)):
        every = [t for ts in row.values() for t in ts]
        if every:
            print(f"{lesson.title}: teacher's {what} -> page drawn, p50 {fmt_ms(median(every))}, p95 "
                  f"{fmt_ms(quantile(every, 0.95))}, max {fmt_ms(max(every))}", flush=True)
            out[what] = {"per_step": row, "p50": median(every), "p95": quantile(every, 0.95)}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lesson", default="1", choices=[*SOURCES, "all"])
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--steps", type=int, help="the lesson's first N steps only")
    p.add_argument("--url", help="a running loopback server (with a classroom store) instead of one started here")
    p.add_argument("--smoke", action="store_true", help="lesson 1's first 2 steps, short reading (CI)")
    args = p.parse_args(argv)
    read_ms = 1500
    if args.smoke:
        args.lesson, args.steps, read_ms = "1", 2, 200
    from chromium import Server

    server = None if args.url else Server(log_prefix="teacher-next")
    try:
        result = [asyncio.run(run(args.url or server.url, source, args.rounds, args.steps, read_ms))
                  for key, source in SOURCES.items() if args.lesson in (key, "all")]
    finally:
        if server is not None:
            server.stop()
    save(result, "teacher-next.json", smoke=args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
