"""Server capacity without browsers: simulated students on the heatmap page over Streamlit's websocket.

    .venv/bin/python bench/ws_load.py --start --duration 40 --max-sessions 240
    .venv/bin/python bench/ws_load.py --url http://127.0.0.1:8501 --pid 1234 --steps 30,60
    .venv/bin/python bench/ws_load.py --start --idle 50 --idle-seconds 60
    .venv/bin/python bench/ws_load.py --url http://127.0.0.1:8501 --smoke     # one tiny step (CI)

Steps of 30, 60, 120, 240, … sessions (``--max-sessions`` caps them). In a step every session joins at a random
moment of the first think time (it opens a link with its own text), then types a new distinct text after each
think time (10–20 s, seeded) until ``--duration`` is over. Latency = rerun sent → script_finished. Stepping stops
at the first step whose p95 is over ``--p95`` seconds or that had errors (an exception element, a timeout, a
lost connection); the capacity is the largest step before it. Loopback servers only; ``--time-limit`` bounds it.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.stats import median, quantile  # noqa: E402
from bench.texts import MARKERS, WORDS  # noqa: E402
from bench.wsclient import Session, one_page  # noqa: E402

# explorer.model.loading holds the same names but imports torch, which the load client does not need
MODELS = {"encoder": "all-MiniLM-L6-v2", "decoder": "SmolLM2-135M-Instruct"}
TICK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------- measuring

def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime, stime: fields 14 and 15 of the whole line


def machine_busy() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pid_on_port(port: int) -> int | None:
    """The process (of this user) listening on 127.0.0.1:``port``, found through /proc/net/tcp."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:   # 0A = LISTEN
                inodes.add(f"socket:[{parts[9]}]")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def make_text(rng: random.Random, marker: str, n_words: int = 28) -> str:
    """"The <marker> …": 30 common words (about 32 BERT tokens), new words on every call."""
    return " ".join(["The", marker, *(rng.choice(WORDS) for _ in range(n_words))]) + "."


# ---------------------------------------------------------------------------------------------- one step

async def student(url: str, i: int, rng: random.Random, model: str, deadline: float, think: tuple[float, float],
                  timeout: float, out: dict, layer: int = 2) -> None:
    """One session: join at a random moment, then a new text after every think time until ``deadline``."""
    await asyncio.sleep(rng.uniform(0, think[0]))
    s = Session(url, timeout=timeout)

    def record(kind: str, run) -> bool:
        if run.seconds is None:
            out["errors"].append(f"session {i} {kind}: no script_finished in {timeout:.0f} s "
                                 f"({s.closed_reason or 'connection open'})")
            return False
        out[kind].append(run.seconds)
        out["bytes"] += run.bytes
        out["errors"].extend(f"session {i} {kind}: {e}" for e in run.exceptions)
        return not run.exceptions

    try:
        await s.connect()
        marker = MARKERS[i % len(MARKERS)]
        if not record("join", await s.load({"model": model, "text": make_text(rng, marker), "layer": layer})):
            return
        k = 0
        while True:
            wait = rng.uniform(*think)
            if time.monotonic() + wait > deadline:
                break
            await asyncio.sleep(wait)
            k += 1
            if not record("edit", await s.set_text(make_text(rng, MARKERS[(i + 7 * k) % len(MARKERS)]))):
                return
    except Exception as err:   # a refused or lost connection is an error of the step, not of the tool
        out["errors"].append(f"session {i}: {type(err).__name__}: {err}"[:300])
    finally:
        with contextlib.suppress(Exception):
            await s.close()


async def step(url: str, pid: int | None, n: int, duration: float, think=(10.0, 20.0), seed: int = 0,
               model: str = MODELS["encoder"], timeout: float = 60) -> dict:
    """``n`` sessions for ``duration`` s: latencies (join, edit), errors, server CPU per request, machine load."""
    out = {"join": [], "edit": [], "errors": [], "bytes": 0}
    cpu0, busy0, me0, t0 = proc_cpu(pid) if pid else None, machine_busy(), self_cpu(), time.monotonic()
    deadline = t0 + duration
    rngs = [random.Random(seed * 100_003 + 1000 * n + i) for i in range(n)]
    tasks = [asyncio.create_task(student(url, i, rngs[i], model, deadline, think, timeout, out)) for i in range(n)]
    _, pending = await asyncio.wait(tasks, timeout=duration + timeout + 30)
    for t in pending:   # bounded: whatever still hangs is cancelled and counted
        t.cancel()
        out["errors"].append("a session was still running after the step's limit")
    if pending:
        await asyncio.wait(pending, timeout=10)
    busy1, me1 = machine_busy(), self_cpu()
    everything = out["join"] + out["edit"]
    requests = len(everything)
    server_cpu = proc_cpu(pid) - cpu0 if pid else None
    return dict(sessions=n, seconds=time.monotonic() - t0, requests=requests, joins=len(out["join"]),
                edits=len(out["edit"]), p50=median(everything), p95=quantile(everything, 0.95),
                edit_p50=median(out["edit"]), edit_p95=quantile(out["edit"], 0.95),
                join_p95=quantile(out["join"], 0.95), errors=out["errors"], bytes=out["bytes"],
                server_cpu=server_cpu, cpu_per_request=server_cpu / requests if server_cpu and requests else None,
                busy=(busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1), client_cpu=me1 - me0)


# ---------------------------------------------------------------------------------------------- idle sessions

async def settle(pid: int, rate: float = 0.05, window: float = 2.0, limit: float = 60) -> float:
    """Wait (at most ``limit`` s) until the process uses under ``rate`` CPU-s per second; returns the wait."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        c0 = proc_cpu(pid)
        await asyncio.sleep(window)
        if (proc_cpu(pid) - c0) / window < rate:
            break
    return time.monotonic() - start


async def idle_cpu(url: str, pid: int, n: int, seconds: float, page: str = "heatmaps", query: dict | None = None,
                   baseline: bool = True, timeout: float = 120) -> dict:
    """Server CPU of ``n`` sessions that have loaded ``page`` and then only stay connected for ``seconds``.

    Returns cpu_s (server CPU over the idle window), baseline_s (the same window with no session, when asked),
    and per_session_minute = (cpu_s − baseline_s) / n / (seconds / 60).
    """
    base = None
    if baseline:   # the model loaded and the server quiet first, so the window without sessions is its idle cost
        await one_page(url, query if query is not None else {"model": MODELS["encoder"]}, page, keep=False,
                       timeout=timeout)
        await settle(pid)
        c0 = proc_cpu(pid)
        await asyncio.sleep(seconds)
        base = proc_cpu(pid) - c0
    sessions = [Session(url, page=page, timeout=timeout) for _ in range(n)]
    gate, errors = asyncio.Semaphore(4), []   # a few loads at a time, so joining does not time out

    async def join(s: Session):
        async with gate:
            await s.connect()
            run = await s.load(query if query is not None else {"model": MODELS["encoder"]})
            if not run.ok:
                errors.append(run.exceptions or ["no script_finished"])
    try:
        await asyncio.gather(*(join(s) for s in sessions))
        c0 = proc_cpu(pid)
        await asyncio.sleep(seconds)
        cpu = proc_cpu(pid) - c0
        alive = sum(s.closed_reason is None for s in sessions)
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    extra = cpu - (base or 0.0)
    return dict(sessions=n, alive=alive, seconds=seconds, cpu_s=cpu, baseline_s=base, errors=errors,
                per_session_minute=extra / n / (seconds / 60) if n else None)


# ---------------------------------------------------------------------------------------------- command line

def fmt_ms(x) -> str:
    return "—" if x is None or x != x else f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def steps_of(args) -> list[int]:
    if args.steps:
        return [n for n in map(int, args.steps.split(",")) if n <= args.max_sessions]
    out, n = [], args.first
    while n <= args.max_sessions:
        out.append(n)
        n *= 2
    return out


async def run_steps(args, url: str, pid: int | None) -> list[dict]:
    results, t_end = [], time.monotonic() + args.time_limit
    t0 = time.perf_counter()   # warm-up: the model loads once, outside every step
    warm = await one_page(url, {"model": MODELS[args.model], "text": "The warm up.", "layer": 2}, keep=False,
                          timeout=max(args.timeout, 120))
    print(f"warm-up page load {fmt_ms(time.perf_counter() - t0)}"
          + ("" if warm.ok else f" FAILED: {warm.exceptions or 'no script_finished'}"), flush=True)
    print(f"{'sessions':>8} {'requests':>8} {'p50':>8} {'p95':>8} {'edit p95':>9} {'join p95':>9} {'errors':>6} "
          f"{'srv CPU/req':>11} {'busy':>5} {'client CPU':>10}", flush=True)
    for n in steps_of(args):
        if time.monotonic() + args.duration + args.timeout + 30 > t_end:
            print(f"(stopping: step {n} would not fit in --time-limit {args.time_limit:.0f} s)")
            break
        r = await step(url, pid, n, args.duration, tuple(args.think), args.seed, MODELS[args.model], args.timeout)
        results.append(r)
        cpu = "—" if r["cpu_per_request"] is None else f"{r['cpu_per_request']:.3f} s"
        print(f"{n:>8} {r['requests']:>8} {fmt_ms(r['p50']):>8} {fmt_ms(r['p95']):>8} {fmt_ms(r['edit_p95']):>9} "
              f"{fmt_ms(r['join_p95']):>9} {len(r['errors']):>6} {cpu:>11} {r['busy'] * 100:>4.0f}% "
              f"{r['client_cpu']:>9.1f}s", flush=True)
        for e in r["errors"][:5]:
            print("    error:", e)
        if r["errors"] or not r["p95"] <= args.p95:
            break
        await asyncio.sleep(3)   # let the server drop the closed sessions
    ok = [r["sessions"] for r in results if not r["errors"] and r["p95"] <= args.p95]
    print(f"capacity: {max(ok) if ok else 0} sessions with p95 <= {args.p95:g} s and no errors"
          + ("" if not results or results[-1]["sessions"] in ok else f" (failed at {results[-1]['sessions']})")
          + f"; think {args.think[0]:g}–{args.think[1]:g} s, {args.duration:g} s a step, model {MODELS[args.model]}",
          flush=True)
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running server on loopback, e.g. http://127.0.0.1:8501")
    where.add_argument("--start", action="store_true", help="start `streamlit run app.py` on a free port")
    p.add_argument("--pid", type=int, help="server process for CPU time (default: found from the port)")
    p.add_argument("--model", choices=sorted(MODELS), default="encoder")
    p.add_argument("--steps", help="comma-separated session counts (default: --first doubled up to --max-sessions)")
    p.add_argument("--first", type=int, default=30)
    p.add_argument("--max-sessions", type=int, default=480)
    p.add_argument("--duration", type=float, default=120, help="seconds of each step")
    p.add_argument("--think", type=float, nargs=2, default=(10.0, 20.0), metavar=("MIN", "MAX"))
    p.add_argument("--p95", type=float, default=2.0, help="latency limit in seconds")
    p.add_argument("--timeout", type=float, default=60, help="seconds a rerun may take before it is an error")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit", type=float, default=1800, help="overall seconds, server start included")
    p.add_argument("--idle", type=int, metavar="N", help="instead of steps: server CPU of N idle sessions")
    p.add_argument("--idle-seconds", type=float, default=60)
    p.add_argument("--smoke", action="store_true",
                   help="one step of 2 sessions for 3 s, thinking 0.5–1 s (CI: that it still runs)")
    args = p.parse_args(argv)
    if args.smoke:
        args.steps, args.duration, args.think, args.time_limit = "2", 3.0, (0.5, 1.0), 300.0

    started = time.monotonic()
    server = None
    if args.start:
        sys.path.insert(0, str(ROOT / "tests"))
        from chromium import Server
        server = Server(log_prefix="ws-load-server")
        url, pid = server.url, args.pid or server.proc.pid
        print(f"server {url} (pid {pid}) up after {time.monotonic() - started:.1f} s", flush=True)
    else:
        url = args.url
        pid = args.pid or pid_on_port(int(url.rsplit(":", 1)[1].split("/")[0]))
        if pid is None:
            print("server process not found (pass --pid): no CPU figures", flush=True)
    try:
        left = args.time_limit - (time.monotonic() - started)
        if args.idle:
            if pid is None:
                p.error("--idle needs the server's process (--pid)")
            r = asyncio.run(asyncio.wait_for(idle_cpu(url, pid, args.idle, args.idle_seconds), left))
            print(f"{r['sessions']} idle sessions ({r['alive']} still connected) for {r['seconds']:g} s: server CPU "
                  f"{r['cpu_s']:.2f} s (no sessions: {r['baseline_s']:.2f} s) -> "
                  f"{r['per_session_minute'] * 1000:.1f} ms CPU per idle session per minute; errors {r['errors']}")
        else:
            asyncio.run(asyncio.wait_for(run_steps(args, url, pid), left))
    except TimeoutError:
        print(f"stopped by --time-limit ({args.time_limit:.0f} s)")
        return 1
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
