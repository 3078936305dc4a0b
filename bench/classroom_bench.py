"""Classroom and scale-out numbers with the browser-less websocket client (bench/wsclient.py).

    .venv/bin/python bench/classroom_bench.py --smoke [--url URL --classroom DB --pid PID]   # seconds (CI)
    .venv/bin/python bench/classroom_bench.py [--followers 30] [--changes 10] [--idle-seconds 60]
                                              [--steps 30,60,120] [--duration 40] [--skip-follow] [--skip-scale]
                                              [--browsers 7 [--phones 3] [--rounds 3] [--heads 8]]

1. follow: one server with a temporary classroom file; a room made through the store API with the teacher's
   view on the heatmap page; N follower sessions on /heatmaps?room=CODE&me=ID (the server reruns them when the
   room's version moves, explorer/ui/live/push.py). The teacher changes the head (store.set_view) ``--changes`` times;
   per follower the seconds until a heatmap delta's title names the new head. Then the server CPU of the N
   followers sitting idle for ``--idle-seconds``, minus the same window with no session.
2. scale: ws_load's stepped load on one server, then on 2 replicas behind HAProxy (deploy/cluster.py).
3. browsers (``--browsers N``): a teacher and N followers in Chromium (tests/live_class.py), browsers included in
   the time: the teacher clicks a page and the seconds until each follower shows it, settled; then the teacher
   steps the heatmap's head and the seconds until each follower's heatmap title names it. Each change's CPU is
   reported too (browsers, server, and how busy the cores were until the last follower): ``ChangeCost``.
Loopback only; every server started here is stopped here.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.classroom_run import classroom_server, join_class, save  # noqa: E402
from bench.stats import median, quantile  # noqa: E402
from bench.ws_load import MODELS, fmt_ms, proc_cpu, settle, step  # noqa: E402
from bench.wsclient import Session, one_page  # noqa: E402

TEXT = "The teacher asked the class to read the sentence about the old harbour again."
HEAD = re.compile(r"· layer (\d+) · head (\d+)$")


def heatmap_title(element) -> str | None:
    """The title of a plotly element whose title ends in "· layer L · head H" (the heatmap), else None."""
    if element.WhichOneof("type") != "plotly_chart":
        return None
    spec = element.plotly_chart.spec
    if "head" not in spec:
        return None
    title = (json.loads(spec).get("layout") or {}).get("title") or {}
    text = title.get("text") if isinstance(title, dict) else title
    return text if isinstance(text, str) and HEAD.search(text) else None


class Follower:
    """A follower session that records when each (layer, head) first reached it in a heatmap title."""

    def __init__(self, url: str, room: str):
        self.me = secrets.token_urlsafe(12)
        self.room = room
        self.seen: dict[tuple[int, int], float] = {}
        self.session = Session(url, "heatmaps", timeout=120, on_element=self._element)

    def _element(self, element) -> None:
        title = heatmap_title(element)
        if title:
            layer, head = map(int, HEAD.search(title).groups())
            self.seen.setdefault((layer, head), time.monotonic())

    async def join(self) -> bool:
        await self.session.connect()
        run = await self.session.load({"room": self.room, "me": self.me})
        return run.ok


def view(layer: int, head: int) -> dict:
    params = {"model": MODELS["encoder"], "text": TEXT, "layer": str(layer), "head": str(head)}
    return {"page": "pages/heatmaps.py", "params": params, "opts": {}}


async def follow(url: str, pid: int, db: str, n: int, changes: int, idle_s: float, seed: int = 0,
                 settle_s: float = 60) -> dict:
    """The follow latency and the idle followers' CPU (part 1 above); ``settle_s`` bounds each wait for the server
    to go quiet before an idle window."""
    from explorer.classroom import open_store

    store = open_store({"EXPLORER_CLASSROOM_DB": db, "EXPLORER_CLASSROOM_URL": ""})
    room, key = store.create_room()
    store.set_view(room, key, view(1, 0))
    followers = [Follower(url, room) for _ in range(n)]
    t0 = time.monotonic()
    joined = await join_class(store, room, followers, enter=Follower.join)
    out = {"sessions": n, "joined": sum(joined), "join_s": time.monotonic() - t0, "delays": [], "missed": 0}
    print(f"{sum(joined)}/{n} followers on the teacher's page in {out['join_s']:.1f} s; "
          f"shown (1, 0): {sum((1, 0) in f.seen for f in followers)}", flush=True)
    rng = random.Random(seed)
    try:
        ticks0 = sum(f.session.fragment_reruns for f in followers)
        for k in range(1, changes + 1):
            await asyncio.sleep(1 + rng.random())   # a random phase against the server's 0.2 s watch
            start = time.monotonic()
            store.set_view(room, key, view(1, k))
            limit = start + 15
            while time.monotonic() < limit and not all((1, k) in f.seen for f in followers):
                await asyncio.sleep(0.02)
            got = [f.seen[(1, k)] - start for f in followers if (1, k) in f.seen]
            out["delays"] += got
            out["missed"] += n - len(got)
            print(f"  head {k}: {len(got)}/{n} followers, p50 {fmt_ms(median(got))}, max {fmt_ms(max(got))}",
                  flush=True)
        ticks = sum(f.session.fragment_reruns for f in followers) - ticks0
        out["alive"] = sum(f.session.closed_reason is None for f in followers)
        d = out["delays"]
        out["p50"], out["p95"], out["max"] = median(d), quantile(d, 0.95), max(d) if d else None
        print(f"follow latency over {changes} changes x {n} followers: p50 {fmt_ms(out['p50'])}, p95 "
              f"{fmt_ms(out['p95'])}, max {fmt_ms(out['max'])}, missed {out['missed']}; fragment reruns sent "
              f"{ticks} ({sum(f.session.fragment_reruns for f in followers) / n:.0f} per follower)", flush=True)
        # -- idle: the followers stay, nothing changes
        await settle(pid, rate=0.5, window=min(2.0, settle_s / 4), limit=min(20, settle_s))
        c0, t1 = proc_cpu(pid), time.monotonic()
        fr0 = sum(f.session.fragment_reruns for f in followers)
        await asyncio.sleep(idle_s)
        out["idle_cpu_s"], out["idle_window_s"] = proc_cpu(pid) - c0, time.monotonic() - t1
        out["idle_polls"] = sum(f.session.fragment_reruns for f in followers) - fr0
    finally:
        await asyncio.gather(*(f.session.close() for f in followers), return_exceptions=True)
    await asyncio.sleep(min(3, settle_s))
    await settle(pid, window=min(2.0, settle_s / 4), limit=settle_s)
    c0, t1 = proc_cpu(pid), time.monotonic()
    await asyncio.sleep(idle_s)
    out["base_cpu_s"], out["base_window_s"] = proc_cpu(pid) - c0, time.monotonic() - t1
    out["per_follower_minute"] = (out["idle_cpu_s"] - out["base_cpu_s"]) / n / (idle_s / 60)
    print(f"idle: {n} followers {out['idle_cpu_s']:.2f} s CPU in {out['idle_window_s']:.0f} s "
          f"({out['idle_polls']} polls), no sessions {out['base_cpu_s']:.2f} s -> "
          f"{out['per_follower_minute'] * 1000:.0f} ms CPU per idle follower per minute", flush=True)
    return out


# ---------------------------------------------------------------------------------------------- in browsers

BROWSER_PAGES = ["Antecedent flip", "Softmax saturation", "Compare heads", "Attention heatmaps"]
PLOT_TITLE = "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => t.textContent).join('|')"


async def _arrival(page, path: str, title: str, plot: str | None, limit_s: float) -> float | None:
    """The monotonic time at which ``page`` first showed ``path`` with page title ``title`` (and a chart title
    holding ``plot``), settled; None after ``limit_s``."""
    from live_class import shows

    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        shown = await shows(page)
        if shown["path"] == path and shown["title"] == title and shown["state"] == "notRunning" and (
                plot is None or plot in await page.evaluate(PLOT_TITLE)):
            return time.monotonic()
        await asyncio.sleep(0.03)
    return None


class ChangeCost:
    """The CPU seconds one change costs (``server``'s process, and every browser process this benchmark started),
    measured from the teacher's click until every follower shows it (``arrived``) and until the teacher's page is
    idle again (``settled``): enough to tell whether a change waits for the machine's cores."""

    def __init__(self, server):
        from bench.browser_side import cpu_seconds  # Playwright's side of the benchmark, loaded only here

        self.cpu, self.rows = lambda: cpu_seconds(server), {"page": [], "widget": []}

    def start(self) -> None:
        self._t0, self._c0 = time.monotonic(), self.cpu()

    def arrived(self) -> None:
        self._t1, self._c1 = time.monotonic(), self.cpu()

    def settled(self, kind: str) -> None:
        c2, c0, c1 = self.cpu(), self._c0, self._c1
        window = max(self._t1 - self._t0, 1e-9)
        self.rows[kind].append(dict(browsers=c2["browsers"] - c0["browsers"], server=c2["server"] - c0["server"],
                                    busy=(c1["machine"] - c0["machine"]) / (CORES * window)))

    def summary(self, kind: str) -> dict:
        rows = self.rows[kind]
        return {f"{kind}_{k}": median([r[k] for r in rows]) for k in ("browsers", "server", "busy")} if rows else {}


CORES = os.cpu_count() or 1


async def in_browsers(url: str, db: str, n: int, phones: int, rounds: int, heads: int, seed: int = 0,
                      server=None) -> dict:
    """One teacher and ``n`` followers (``phones`` of them 390 × 844) in Chromium: seconds from the teacher's click
    until each follower shows the new page (``rounds`` times through BROWSER_PAGES), then until each shows the
    teacher's new head on the heatmap (``heads`` presses of → on the head slider). With ``server`` (the Server
    running at ``url``), also what each change cost in CPU (``ChangeCost``)."""
    from chromium import CHROMIUM, CHROMIUM_ARGS
    from live_class import class_of, idle, nav, new_room, shows, teacher_view
    from playwright.async_api import async_playwright

    room, key, ids = new_room(db, n)
    rng = random.Random(seed)
    out = {"followers": n, "phones": phones, "page": [], "widget": [], "missed": 0}
    cost = ChangeCost(server) if server is not None else None
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            teacher, followers = await class_of(browser, url, room, key, ids,
                                                viewports={i: (390, 844) for i in range(phones)})
            loads = [0] * n
            for i, page in enumerate(followers):
                page.on("load", lambda _p, i=i: loads.__setitem__(i, loads[i] + 1))
            where = {}
            out["first"] = {}

            async def change(what: str, act, title: str, wanted: str | None) -> list[float]:
                """``act()`` (the teacher's click or key press), then the seconds until each follower shows
                ``title``'s page (``wanted`` in its heatmap title, when given); added to ``out[what]``, and what the
                change cost in CPU to ``cost`` under ``what``."""
                cost and cost.start()
                start = time.monotonic()
                await act()
                got = await asyncio.gather(*(_arrival(f, where[title]["path"], where[title]["title"], wanted, 60)
                                             for f in followers))
                cost and cost.arrived()
                delays = [t - start for t in got if t]
                out[what] += delays
                out["missed"] += got.count(None)
                await idle(teacher)
                cost and cost.settled(what)
                return delays
            for title in BROWSER_PAGES:   # warm-up: every page once (models, the followers' first draw)
                start = time.monotonic()
                path = await nav(teacher, title)
                where[title] = {k: v for k, v in (await teacher_view(teacher, db, room, path)).items()
                                if k in ("path", "title")}
                got = await asyncio.gather(*(_arrival(f, where[title]["path"], where[title]["title"], None, 180)
                                             for f in followers))
                out["first"][title] = [t - start for t in got if t]
                print(f"  first change to {title}: {len(got) - got.count(None)}/{n} followers there, max "
                      f"{max(out['first'][title], default=0):.2f} s", flush=True)
            for r in range(rounds):
                for title in BROWSER_PAGES:
                    await asyncio.sleep(1 + rng.random())   # a random phase against the followers' poll
                    delays = await change("page", lambda t=title: nav(teacher, t, wait=False), title, None)
                    print(f"  round {r} {title}: max {max(delays, default=0):.2f} s", flush=True)
            # the heatmap page is open (last in BROWSER_PAGES): the teacher steps the head
            thumb = teacher.get_by_role("slider").nth(1)
            for k in range(heads):
                await asyncio.sleep(1 + rng.random())
                await thumb.focus()
                layer, head = (await shows(teacher))["params"].get("layer", "0"), k + 1
                delays = await change("widget", lambda: thumb.press("ArrowRight"), "Attention heatmaps",
                                      f"layer {layer} · head {head}")
                print(f"  head {head}: max {max(delays, default=0):.2f} s", flush=True)
            out["page_loads"] = sum(loads)
            out["errors"] = [e for pg in [teacher, *followers] for e in pg.errors]
        finally:
            await browser.close()
    for name in ("page", "widget"):
        d = out[name]
        out[name + "_p50"], out[name + "_p95"], out[name + "_max"] = median(d), quantile(d, 0.95), max(d, default=None)
        print(f"{name} change -> {n} followers in Chromium: p50 {fmt_ms(out[name + '_p50'])}, p95 "
              f"{fmt_ms(out[name + '_p95'])}, max {fmt_ms(out[name + '_max'])} (n={len(d)})", flush=True)
        if cost and cost.rows[name]:
            c = cost.summary(name)
            out.update(c)
            print(f"  CPU a {name} change (median, click to settled): browsers {c[name + '_browsers']:.2f} s, server "
                  f"{c[name + '_server']:.2f} s; machine busy until the last follower {c[name + '_busy']:.0%} of "
                  f"{CORES} cores; the browsers' CPU alone spread over {CORES} cores takes "
                  f"{c[name + '_browsers'] / CORES:.2f} s", flush=True)
    print(f"missed {out['missed']}, browser page loads {out['page_loads']}, page errors {len(out['errors'])}")
    return out


# ---------------------------------------------------------------------------------------------- scale-out

async def stepped(url: str, pids: list[int], steps: list[int], duration: float, warm_urls: list[str]) -> list[dict]:
    for u in warm_urls:   # each replica loads the model once, outside the steps
        await one_page(u, {"model": MODELS["encoder"], "text": "The warm up.", "layer": 2}, keep=False, timeout=180)
    rows = []
    for n in steps:
        c0 = sum(proc_cpu(p) for p in pids)
        r = await step(url, None, n, duration)
        r["server_cpu"] = sum(proc_cpu(p) for p in pids) - c0
        rows.append(r)
        print(f"  {n:>4} sessions: {r['requests']} requests, p50 {fmt_ms(r['p50'])}, p95 {fmt_ms(r['p95'])}, "
              f"errors {len(r['errors'])}, server CPU {r['server_cpu']:.0f} s, machine busy {r['busy'] * 100:.0f}%",
              flush=True)
        for e in r["errors"][:3]:
            print("    error:", e)
        await asyncio.sleep(3)
    return rows


def scale(steps: list[int], duration: float) -> dict:
    from chromium import Server

    from deploy.cluster import Cluster

    out = {}
    server = Server(log_prefix="classroom-bench-single")
    try:
        print(f"one server {server.url}", flush=True)
        out["single"] = asyncio.run(stepped(server.url, [server.proc.pid], steps, duration, [server.url]))
    finally:
        server.stop()
    cluster = Cluster(2)
    try:
        cluster.start()
        print(f"2 replicas behind HAProxy {cluster.url}", flush=True)
        urls = [f"http://127.0.0.1:{r.port}" for r in cluster.replicas]
        out["cluster"] = asyncio.run(stepped(cluster.url, [r.pid for r in cluster.replicas], steps, duration, urls))
    finally:
        cluster.stop()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--followers", type=int, default=30)
    p.add_argument("--changes", type=int, default=10)
    p.add_argument("--idle-seconds", type=float, default=60)
    p.add_argument("--steps", default="30,60,120")
    p.add_argument("--duration", type=float, default=40)
    p.add_argument("--skip-follow", action="store_true")
    p.add_argument("--skip-scale", action="store_true")
    p.add_argument("--browsers", type=int, default=0, help="followers in Chromium (page and widget changes); 0: none")
    p.add_argument("--phones", type=int, default=3, help="of the --browsers followers, how many on a 390 × 844 screen")
    p.add_argument("--rounds", type=int, default=3, help="rounds through the pages (--browsers)")
    p.add_argument("--heads", type=int, default=8, help="head changes on the heatmap (--browsers)")
    p.add_argument("--replicas", type=int, default=0,
                   help="with --browsers: the class through this many replicas behind HAProxy with Redis")
    p.add_argument("--url", help="follow: a running loopback server instead of one started here (with "
                                 "--classroom, its SQLite classroom file, and --pid, its process)")
    p.add_argument("--classroom", help="with --url: the server's classroom file (EXPLORER_CLASSROOM_DB)")
    p.add_argument("--pid", type=int, help="with --url: the server's process")
    p.add_argument("--smoke", action="store_true",
                   help="follow only: 2 followers, 1 change, 1 s idle windows (CI: that it still runs)")
    args = p.parse_args(argv)
    settle_s = 60.0
    if args.smoke:
        args.followers, args.changes, args.idle_seconds, args.skip_scale, args.browsers = 2, 1, 0.5, True, 0
        settle_s = 2.0
    results = {}
    if not args.skip_follow and args.url:
        if not (args.classroom and args.pid):
            p.error("--url needs --classroom and --pid")
        results["follow"] = asyncio.run(follow(args.url, args.pid, args.classroom, args.followers, args.changes,
                                               args.idle_seconds, settle_s=settle_s))
    elif not args.skip_follow:
        with classroom_server("classroom-bench") as (server, env):
            results["follow"] = asyncio.run(follow(server.url, server.proc.pid, env["EXPLORER_CLASSROOM_DB"],
                                                   args.followers, args.changes, args.idle_seconds, settle_s=settle_s))
    if args.browsers and args.replicas:
        from deploy.cluster import Cluster

        cluster = Cluster(args.replicas, redis=True)
        try:
            cluster.start()
            results["browsers"] = asyncio.run(in_browsers(cluster.url, cluster.env["EXPLORER_CLASSROOM_URL"],
                                                          args.browsers, args.phones, args.rounds, args.heads))
        finally:
            cluster.stop()
    elif args.browsers:
        with classroom_server("classroom-bench-browsers") as (server, env):
            results["browsers"] = asyncio.run(in_browsers(server.url, env["EXPLORER_CLASSROOM_DB"], args.browsers,
                                                          args.phones, args.rounds, args.heads, server=server))
    if not args.skip_scale:
        results["scale"] = scale([int(n) for n in args.steps.split(",")], args.duration)
    save(results, "classroom-bench.json", smoke=args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
