"""Cold start of two checkouts, alternately: `streamlit run app.py` launched → the heatmap page's first heatmap drawn.

    .venv/bin/python bench/cold_ab.py /tmp/before             # this checkout against a worktree of an older commit
    .venv/bin/python bench/cold_ab.py /tmp/before --pairs 6 --split
    .venv/bin/python bench/cold_ab.py --smoke           # one cold start of this checkout (CI: that it still runs)

Each pair runs both checkouts, in alternating order, with a fresh Chromium each time (as row 4a: the browser is
launched first, the page opened as soon as the health endpoint answers). ``--split`` puts the server on core 0 and
this process, Playwright and Chromium on core 1 (Linux ``sched_setaffinity``): on a 2-core machine a browser
otherwise takes CPU from the server it waits for, which a classroom, where each browser has its own machine, does
not. The other checkout needs its own ``.venv`` (a symlink to this one's will do). Results are written by hand into
docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import browser_side as bs  # noqa: E402
from bench.stats import median  # noqa: E402


async def cold_start(playwright, checkout: Path, split: bool) -> float:
    browser = await bs.launch(playwright)
    page = await bs.new_page(browser)
    server = bs.AppServer(cwd=checkout)
    try:
        if split:
            os.sched_setaffinity(server.proc.pid, {0})
        await server.ready()
        await page.goto(server.url + "/heatmaps")
        await bs.heatmap(page, timeout=180)
        return time.perf_counter() - server.started
    finally:
        server.stop()
        await browser.close()


async def compare(other: Path | None, pairs: int, split: bool) -> dict[str, list[float]]:
    """``pairs`` cold starts of each checkout, alternately; without ``other``, of this one only."""
    from playwright.async_api import async_playwright

    runs = {"this": [], "other": []} if other else {"this": []}
    async with async_playwright() as playwright:
        for i in range(pairs):
            for which in (list(runs) if i % 2 == 0 else list(runs)[::-1]):
                runs[which].append(await cold_start(playwright, ROOT if which == "this" else other, split))
    return runs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, nargs="?",
                        help="the other checkout (e.g. a git worktree of an older commit); none: this one only")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--split", action="store_true", help="server on core 0, browser on core 1")
    parser.add_argument("--smoke", action="store_true", help="one cold start of this checkout (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.other, args.pairs = None, 1
    if args.split:
        os.sched_setaffinity(0, {1})   # before Playwright starts: its driver and Chromium inherit it
    runs = asyncio.run(compare(args.other and args.other.resolve(), args.pairs, args.split))
    for which, seconds in runs.items():
        print(f"{which} ({ROOT if which == 'this' else args.other}): median {median(seconds):.2f} s, "
              f"runs {', '.join(f'{s:.2f}' for s in seconds)}")


if __name__ == "__main__":
    main()
