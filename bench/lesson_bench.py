"""A lesson step sent to a class of browser-less followers: seconds from Next to each follower's script finished.

    .venv/bin/python bench/lesson_bench.py [--followers 30] [--rounds 1] [--lesson 1-7|all] [--reveal] [--url URL]
    .venv/bin/python bench/lesson_bench.py --lesson 4 --only 7 --reveal   # one step: lesson 4's "Which head is this?"
    .venv/bin/python bench/lesson_bench.py --smoke    # 2 followers, 2 steps (CI: that it still runs)

One server with a temporary classroom file; a room made through the store API; N follower sessions (the websocket
client of bench/wsclient.py) on the teacher's first step. "Next" is the write the teacher's run makes once its page
has drawn (``following.publish``: the step's page, its parameters and the lesson's place, in one ``set_view``), so
the teacher's own page run before it is not in the number; it does run before it, in a session of its own on the
step's link (its seconds are printed beside the row; ``--cold`` leaves it out). Per follower and step: the time
from that write to the end (script_finished) of the first run that drew "Step n of N" on the new step's page.
The lesson is the app's "Attention in 20 minutes" (heatmaps and flip on the encoder, then five labs) by default,
every step once per round; ``--lesson`` picks another of the app's seven (or ``all``). Per follower and step, the
bytes it received from the publish to that run's end are counted too (websocket frames as sent: a class shares
one Wi-Fi).
``--url`` sends the class to a server already running (``--replicas N`` starts N behind HAProxy, deploy/cluster.py);
``--classroom`` then names its store (a SQLite file or a redis:// URL). Loopback only; a server started here is
stopped here.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.classroom_run import Follower, classroom_server, join_class, save  # noqa: E402
from bench.stats import median, quantile  # noqa: E402
from bench.ws_load import fmt_ms  # noqa: E402
from bench.wsclient import Session, element_text  # noqa: E402


class StepFollower(Follower):
    """A follower that notes, for each step, when the first run that drew "Step n of" finished."""

    def __init__(self, url: str):
        super().__init__(url)
        self.drawn: int | None = None   # the step the run under way has drawn
        self.finished: dict[int, float] = {}
        self.bytes: dict[int, int] = {}  # step -> bytes received from its publish to its run's end
        self.count: dict[int, int] = {}  # step -> messages received from its publish to its run's end

    def seen(self, element) -> None:
        text = element_text(element)
        if "**Step " in text and " of " in text:
            self.drawn = int(text.split("**Step ", 1)[1].split(" ", 1)[0])

    def run_finished(self) -> None:
        if self.drawn is not None:
            self.finished.setdefault(self.drawn, time.monotonic())
            self.bytes.setdefault(self.drawn, self.received)   # received and messages: since the last publish
            self.count.setdefault(self.drawn, self.messages)
        self.drawn = None


async def floor(url: str, n: int, rounds: int, pids: list[int]) -> dict:
    """What Streamlit itself costs a follower: ``n`` sessions of a page that draws nothing (bench/floor_app) all
    rerun at once, ``rounds`` times; the seconds until each run finished and the server's CPU per run."""
    sessions = [Session(url, "", timeout=60) for _ in range(n)]
    for s in sessions:
        await s.connect()
        await s.load()
    delays, cpu = [], []
    try:
        for _ in range(rounds):
            await asyncio.sleep(1.0)
            t0, cpu0 = time.perf_counter(), cpu_seconds(pids)
            runs = await asyncio.gather(*(s.rerun() for s in sessions))
            cpu.append((cpu_seconds(pids) - cpu0) / n)
            delays += [t0 + r.seconds - t0 for r in runs if r.seconds is not None]
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    out = {"followers": n, "p50": median(delays), "p95": quantile(delays, 0.95), "cpu": median(cpu),
           "bytes": median([r.bytes for r in runs])}
    print(f"floor (a page that draws nothing), {n} sessions at once: p50 {fmt_ms(out['p50'])}, p95 "
          f"{fmt_ms(out['p95'])}, server CPU {out['cpu'] * 1000:.1f} ms a run, {out['bytes']} bytes a run", flush=True)
    return out


LESSONS = {"1": "app:1-attention-in-20-minutes", "2": "app:2-how-a-decoder-writes",
           "3": "app:3-is-attention-an-explanation", "4": "app:4-how-a-model-copies",
           "5": "app:5-where-does-one-score-come-from", "6": "app:6-watch-a-circuit-grow",
           "7": "app:7-where-is-the-answer-carried"}


def stores(url: str) -> dict:
    """The server's shared stores after the lessons (app.py's /_explorer/stats): the render store's views and bytes."""
    with urllib.request.urlopen(url + "/_explorer/stats", timeout=10) as answer:
        got = json.loads(answer.read())
    render = got["render_store"]
    print(f"render store after the lessons: {render['entries']} views in {render['bytes'] / 2**20:.2f} MB "
          f"(bound {render['max_bytes'] / 2**20:.0f} MB)", flush=True)
    runs = got.get("followers") or {}
    print(f"followers' runs of the teacher's page: {runs.get('page', 0)} drew it, {runs.get('replayed', 0)} replayed "
          "it (explorer/ui/live/replayed.py)", flush=True)
    return got


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the server processes ``pids`` so far (Linux /proc), 0 for one that has gone."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def run(url: str, store_env: dict, n: int, rounds: int, source: str = LESSONS["1"],
              pids: list[int] = (), reveal: bool = False, steps: int | None = None, pause: float = 2.0,
              cold: bool = False, only: int | None = None) -> dict:
    """Next to every step (the first ``steps`` only, when given), ``rounds`` times, ``pause`` seconds after the
    last fan-out; with ``reveal``, after each step's Next the teacher also reveals its question, which unfolds the
    step's page (its charts and sentences) on every follower at once: that fan-out is timed and counted the same
    way (rows "reveal"). Before each Next the teacher's own page run draws the step (untimed, as in class: the
    view is published once the teacher's page has drawn); ``cold`` leaves it out (the first follower then computes
    the step's model results itself); ``only`` (1-based) times that step alone, ``rounds`` times."""
    from explorer.classroom import open_store
    from explorer.lessons import catalogue
    from explorer.lessons.run import place
    from explorer.sitemap.table import PAGES

    lesson = next(x for x in catalogue({})[0] if x.source == source)
    print(f"{lesson.title}: {n} followers", flush=True)
    store = open_store({**store_env, "EXPLORER_MAX_STUDENTS": str(max(n, 60))})
    room, key = store.create_room()
    started = time.time()

    def publish(i: int) -> None:
        step = lesson.steps[i]
        store.set_view(room, key, {"page": step.page, "params": dict(step.params), "opts": {},
                                   "lesson": place(lesson, i, started, time.time())})

    def question_of(i: int) -> str | None:
        step = lesson.steps[i]
        return PAGES[step.page].quiz if step.page_question else place(lesson, i, started, started)["qid"]
    away = (only - 2) % len(lesson.steps) if only else len(lesson.steps) - 1   # where the class waits
    publish(away)   # the last step; every step is then timed, the first too (with ``only``: the step before it)
    followers = [StepFollower(url) for _ in range(n)]
    await join_class(store, room, followers)
    last = len(lesson.steps)
    print(f"{sum(last in f.finished for f in followers)}/{n} followers on step {last}", flush=True)
    out = {"lesson": lesson.title, "followers": n}

    async def teacher_run(i: int) -> float | None:
        """The teacher's own page run before its Next is published (``following.publish`` writes the view once the
        teacher's page has drawn): the step's page on the step's link, in a session of its own -> its seconds.
        It computes what the page needs (the model's results, kept server-wide) as the teacher's run does."""
        step = lesson.steps[i]
        async with Session(url, Path(step.page).stem, timeout=120) as teacher:
            return (await teacher.load(dict(step.params))).seconds

    async def fan_out(i: int, act, what: str, before=None) -> None:
        """``before()`` (the teacher's run, untimed), ``act()`` (a write to the room), then until every follower's
        run drawing step i + 1 has finished."""
        await asyncio.sleep(pause)
        drew = await before() if before is not None else None
        for f in followers:
            f.finished.pop(i + 1, None)
            f.bytes.pop(i + 1, None)
            f.count.pop(i + 1, None)
            f.received = f.messages = 0
        t0, cpu0 = time.monotonic(), cpu_seconds(pids)
        act()
        limit = t0 + 30
        while time.monotonic() < limit and not all(i + 1 in f.finished for f in followers):
            await asyncio.sleep(0.02)
        got = [f.finished[i + 1] - t0 for f in followers if i + 1 in f.finished]
        cpu = (cpu_seconds(pids) - cpu0) / n if pids else None   # the servers' CPU a follower's run
        row, name = out.setdefault(what, {"delays": [], "missed": 0, "per_step": {}, "bytes": {}, "messages": {},
                                          "cpu": {}}), f"{i + 1} {lesson.steps[i].page}"
        row["delays"] += got
        row["missed"] += n - len(got)
        row["per_step"].setdefault(name, []).extend(got)
        sizes = row["bytes"][name] = [f.bytes[i + 1] for f in followers if i + 1 in f.bytes]
        counts = row["messages"][name] = [f.count[i + 1] for f in followers if i + 1 in f.count]
        row["cpu"][name] = cpu
        print(f"  {what} {i + 1} ({lesson.steps[i].page}): {len(got)}/{n}, p50 {fmt_ms(median(got))}, "
              f"p95 {fmt_ms(quantile(got, 0.95))}, max {fmt_ms(max(got) if got else None)}, "
              f"{median(sizes) / 1000 if sizes else 0:.0f} kB and {median(counts) if counts else 0:.0f} "
              "messages a follower" + (f", server CPU {cpu * 1000:.0f} ms a follower" if cpu is not None else "")
              + (f" (the teacher's page before it: {fmt_ms(drew)})" if drew is not None else ""), flush=True)
        if drew is not None:
            row.setdefault("teacher", {})[name] = drew

    try:
        for r in range(rounds):
            if only and r:   # back to the step before, untimed for the row (its own row "away"), then Next
                await fan_out(away, lambda: publish(away), "away")
            for i in [only - 1] if only else range(len(lesson.steps))[:steps]:
                await fan_out(i, lambda i=i: publish(i), "next", None if cold else lambda i=i: teacher_run(i))
                qid = question_of(i) if reveal else None
                if qid:
                    await fan_out(i, lambda qid=qid: store.reveal(room, key, qid), "reveal")
    finally:
        await asyncio.gather(*(f.close() for f in followers), return_exceptions=True)
    for what, row in out.items():
        if isinstance(row, dict) and "delays" in row:
            d = row["delays"]
            row["p50"], row["p95"], row["max"] = median(d), quantile(d, 0.95), max(d) if d else None
            print(f"{what} -> follower's script finished, {n} followers x {len(row['per_step'])} steps x {rounds}: "
                  f"p50 {fmt_ms(row['p50'])}, p95 {fmt_ms(row['p95'])}, max {fmt_ms(row['max'])}, missed "
                  f"{row['missed']}", flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--followers", type=int, default=30)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--lesson", default="1", choices=[*LESSONS, "all"])
    p.add_argument("--url", help="a running server (or HAProxy) on loopback instead of one started here")
    p.add_argument("--classroom", help="with --url: the store it uses (SQLite file, or redis:// URL)")
    p.add_argument("--replicas", type=int, default=0,
                   help="start this many replicas behind HAProxy with Redis (deploy/cluster.py) and send the class "
                        "through HAProxy")
    p.add_argument("--floor", action="store_true", help="also the floor: a page that draws nothing, same sessions")
    p.add_argument("--reveal", action="store_true", help="after each Next, reveal the step's question and time the "
                                                          "unfolded page's fan-out too")
    p.add_argument("--pids", default="", help="with --url: the server processes whose CPU to count (comma-separated)")
    p.add_argument("--steps", type=int, help="the lesson's first N steps only")
    p.add_argument("--only", type=int, help="this step of the lesson only (1-based), --rounds times")
    p.add_argument("--cold", action="store_true", help="no teacher's page run before each Next: the first follower "
                                                       "computes the step's model results")
    p.add_argument("--smoke", action="store_true",
                   help="2 followers, lesson 1's first 2 steps with Reveal, short pauses (CI: that it still runs)")
    args = p.parse_args(argv)
    pause = 2.0
    if args.smoke:
        args.followers, args.lesson, args.steps, args.reveal, pause = 2, "1", 2, True, 0.3
    from chromium import Server

    sources = list(LESSONS.values()) if args.lesson == "all" else [LESSONS[args.lesson]]

    def every(url: str, env: dict, pids: list[int]) -> list[dict]:
        return [asyncio.run(run(url, env, args.followers, args.rounds, source, pids, args.reveal, args.steps, pause,
                                    args.cold, args.only))
                for source in sources]

    if args.replicas:
        sys.path.insert(0, str(ROOT / "deploy"))
        from cluster import Cluster

        cluster = Cluster(args.replicas, redis=True).start()
        try:
            result = every(cluster.url, {"EXPLORER_CLASSROOM_URL": cluster.env["EXPLORER_CLASSROOM_URL"]},
                           [r.pid for r in cluster.replicas])
        finally:
            cluster.stop()
    elif args.url:
        where = args.classroom or ""
        result = every(args.url, {"EXPLORER_CLASSROOM_URL": where} if where.startswith(("redis://", "rediss://"))
                       else {"EXPLORER_CLASSROOM_DB": where, "EXPLORER_CLASSROOM_URL": ""},
                       [int(p) for p in args.pids.split(",") if p.strip()])
        result.append({"stores": stores(args.url)})
    else:
        with classroom_server("lesson-bench") as (server, env):
            result = every(server.url, env, [server.proc.pid])
            result.append({"stores": stores(server.url)})
    if args.floor:
        # run from the repository, so that the app's .streamlit/config.toml applies to the floor too
        server = Server(log_prefix="lesson-bench-floor", script=str(ROOT / "bench" / "floor_app" / "app.py"))
        try:
            result.append({"floor": asyncio.run(floor(server.url, args.followers, 5, [server.proc.pid]))})
        finally:
            server.stop()
    save(result, "lesson-bench.json", smoke=args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
