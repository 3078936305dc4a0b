"""A lesson step sent to a class of browser-less followers: seconds from Next to each follower's script finished.

    .venv/bin/python bench/lesson_bench.py [--followers 30] [--rounds 1]

One server with a temporary classroom file; a room made through the store API; N follower sessions (the websocket
client of bench/wsclient.py) on the teacher's first step. "Next" is the write the teacher's run makes once its page
has drawn (``following.publish``: the step's page, its parameters and the lesson's place, in one ``set_view``), so
the teacher's own page run before it is not in the number. Per follower and step: the time from that write to the
end (script_finished) of the first run that drew "Step n of N" on the new step's page. The lesson is the app's
"Attention in 20 minutes" (heatmaps and flip on the encoder, then five labs), every step once per round.
Loopback only; the server started here is stopped here.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.stats import median, quantile  # noqa: E402
from bench.ws_load import fmt_ms  # noqa: E402
from bench.wsclient import EARLY, ForwardMsg, Session, element_text  # noqa: E402


class Follower(Session):
    """A follower that notes, for each step, when the first run that drew "Step n of" finished."""

    def __init__(self, url: str, room: str):
        super().__init__(url, "classroom", timeout=120, on_element=self._seen)
        self.me, self.room = secrets.token_urlsafe(12), room
        self.drawn: int | None = None   # the step the run under way has drawn
        self.finished: dict[int, float] = {}

    def _seen(self, element) -> None:
        text = element_text(element)
        if "**Step " in text and " of " in text:
            self.drawn = int(text.split("**Step ", 1)[1].split(" ", 1)[0])

    def _handle(self, data: bytes) -> None:
        super()._handle(data)
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != EARLY:
            if self.drawn is not None:
                self.finished.setdefault(self.drawn, time.monotonic())
            self.drawn = None


async def run(url: str, db: str, n: int, rounds: int) -> dict:
    from explorer.classroom import open_store
    from explorer.lessons import catalogue
    from explorer.lessons.run import place

    lesson = next(x for x in catalogue({})[0] if x.source == "app:1-attention-in-20-minutes")
    store = open_store({"EXPLORER_CLASSROOM_DB": db})
    room, key = store.create_room()
    started = time.time()

    def publish(i: int) -> None:
        step = lesson.steps[i]
        store.set_view(room, key, {"page": step.page, "params": dict(step.params), "opts": {},
                                   "lesson": place(lesson, i, started, time.time())})
    publish(0)
    followers = [Follower(url, room) for _ in range(n)]
    for i, f in enumerate(followers):
        store.join(room, f.me, f"student {i}")
    gate = asyncio.Semaphore(4)

    async def join(f: Follower) -> None:
        async with gate:
            await f.connect()
            await f.load({"room": room, "me": f.me})
    await asyncio.gather(*(join(f) for f in followers))
    print(f"{sum(1 in f.finished for f in followers)}/{n} followers on step 1", flush=True)
    out = {"followers": n, "delays": [], "missed": 0, "per_step": {}}
    try:
        for _ in range(rounds):
            for i in range(1, len(lesson.steps)):
                await asyncio.sleep(2.0)
                for f in followers:
                    f.finished.pop(i + 1, None)
                t0 = time.monotonic()
                publish(i)
                limit = t0 + 30
                while time.monotonic() < limit and not all(i + 1 in f.finished for f in followers):
                    await asyncio.sleep(0.02)
                got = [f.finished[i + 1] - t0 for f in followers if i + 1 in f.finished]
                out["delays"] += got
                out["missed"] += n - len(got)
                out["per_step"].setdefault(lesson.steps[i].page, []).extend(got)
                print(f"  step {i + 1} ({lesson.steps[i].page}): {len(got)}/{n}, p50 {fmt_ms(median(got))}, "
                      f"p95 {fmt_ms(quantile(got, 0.95))}, max {fmt_ms(max(got) if got else None)}", flush=True)
    finally:
        await asyncio.gather(*(f.close() for f in followers), return_exceptions=True)
    d = out["delays"]
    out["p50"], out["p95"], out["max"] = median(d), quantile(d, 0.95), max(d) if d else None
    print(f"Next -> follower's script finished, {n} followers x {len(lesson.steps) - 1} steps x {rounds}: p50 "
          f"{fmt_ms(out['p50'])}, p95 {fmt_ms(out['p95'])}, max {fmt_ms(out['max'])}, missed {out['missed']}",
          flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--followers", type=int, default=30)
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args(argv)
    from chromium import Server

    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "classroom.sqlite3")
        server = Server(env={"EXPLORER_CLASSROOM_DB": db, "EXPLORER_CLASSROOM_URL": ""}, log_prefix="lesson-bench")
        try:
            result = asyncio.run(run(server.url, db, args.followers, args.rounds))
        finally:
            server.stop()
    out = ROOT / "test-artifacts" / "lesson-bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
