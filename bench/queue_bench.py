"""Does one heavy session slow everyone else down? Ten browser-less sessions edit short texts on the heatmap page
while one more sends a new 512-token text every second; reported: the ten's edit -> script_finished latency.

    .venv/bin/python bench/queue_bench.py                  # with the forward queue (the default), then without
    .venv/bin/python bench/queue_bench.py --modes queue    # one mode only
    .venv/bin/python bench/queue_bench.py --smoke --url http://127.0.0.1:8501   # 2 sessions, 2 s (CI)

Each mode starts its own server (``EXPLORER_FORWARD_QUEUE=1`` or ``0``), loads the encoder once, then runs
``--duration`` seconds. A light session types a new ~32-token text after a think time of 0.5-1.5 s (seeded);
the heavy one a new text of 600 words, which the encoder cuts at 512 tokens. Loopback only.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.stats import median, quantile  # noqa: E402
from bench.texts import MARKERS, WORDS  # noqa: E402
from bench.wsclient import Session, one_page  # noqa: E402

ENCODER = "all-MiniLM-L6-v2"


def text(rng: random.Random, words: int, marker: str) -> str:
    return " ".join(["The", marker, *(rng.choice(WORDS) for _ in range(words))]) + "."


async def light(url: str, i: int, deadline: float, out: dict) -> None:
    rng = random.Random(i)
    async with Session(url, timeout=120) as s:
        await s.load({"model": ENCODER, "text": text(rng, 28, MARKERS[i]), "layer": 2})
        k = 0
        while True:
            await asyncio.sleep(rng.uniform(0.5, 1.5))
            if time.monotonic() > deadline:
                return
            k += 1
            run = await s.set_text(text(rng, 28, MARKERS[(i + 7 * k) % len(MARKERS)]))
            (out["edits"] if run.ok else out["errors"]).append(run.seconds or run.exceptions or "timeout")


async def heavy(url: str, deadline: float, out: dict) -> None:
    rng = random.Random(99)
    async with Session(url, timeout=120) as s:
        await s.load({"model": ENCODER, "text": "The start.", "layer": 2})
        while time.monotonic() < deadline:
            started = time.monotonic()
            run = await s.set_text(text(rng, 600, "zebra"))
            (out["heavy"] if run.ok else out["errors"]).append(run.seconds or run.exceptions or "timeout")
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - started)))


async def measure(url: str, sessions: int, duration: float) -> dict:
    out = {"edits": [], "heavy": [], "errors": []}
    warm = await one_page(url, {"model": ENCODER, "text": "The warm up.", "layer": 2}, keep=False, timeout=300)
    if not warm.ok:
        raise RuntimeError(f"warm-up failed: {warm.exceptions or 'no script_finished'}")
    deadline = time.monotonic() + duration
    await asyncio.gather(heavy(url, deadline, out), *(light(url, i, deadline, out) for i in range(sessions)))
    return out


def run_mode(mode: str, sessions: int, duration: float, url: str | None = None) -> dict:
    from chromium import Server

    if url:   # a running server: its own EXPLORER_FORWARD_QUEUE decides the mode
        return asyncio.run(measure(url, sessions, duration))
    server = Server(env={"EXPLORER_FORWARD_QUEUE": "1" if mode == "queue" else "0"}, log_prefix=f"queue-bench-{mode}")
    try:
        return asyncio.run(measure(server.url, sessions, duration))
    finally:
        server.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--duration", type=float, default=40)
    parser.add_argument("--modes", default="queue,direct", help="queue, direct (EXPLORER_FORWARD_QUEUE=0), or both")
    parser.add_argument("--url", help="a running loopback server instead of one started per mode (its own mode)")
    parser.add_argument("--smoke", action="store_true", help="2 light sessions for 2 s, one mode (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sessions, args.duration = 2, 2.0
        args.modes = args.modes.split(",")[0]
    if args.url:
        args.modes = "as running"
    print("| mode | light edits | median | p95 | max | heavy 512-token runs (median) | errors |")
    print("|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        out = run_mode(mode, args.sessions, args.duration, args.url)
        e = out["edits"]
        print(f"| {mode} | {len(e)} | {median(e) * 1000:.0f} ms | {quantile(e, 0.95) * 1000:.0f} ms | "
              f"{max(e, default=float('nan')) * 1000:.0f} ms | {len(out['heavy'])} "
              f"({median(out['heavy']) * 1000:.0f} ms) | {len(out['errors'])} |", flush=True)
        for err in out["errors"][:5]:
            print("   ", str(err)[:200])
    return 0


if __name__ == "__main__":
    sys.exit(main())
