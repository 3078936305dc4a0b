"""Where a server's memory goes: row 8's cold start (the heatmap page on the encoder, then the decoder picked in
its model menu, in headless Chromium), and at each of the two points a report from inside the server.

    .venv/bin/python bench/memory.py                 # resident memory by kind, mapping, allocator
    .venv/bin/python bench/memory.py --tracemalloc   # also Python's allocations by library (slow; RSS inflated)
    .venv/bin/python bench/memory.py --smoke         # the plain run, never traced (CI: both reports still come)

The server is started with ``bench/memprobe`` on its ``PYTHONPATH``: its ``sitecustomize`` answers SIGUSR1 with a
JSON report (``/proc/self/smaps`` by mapping, glibc's ``mallinfo2``, loaded modules, the result and static caches,
each model's weight storage). Results and their reading: docs/benchmarks.md, "Where a server's memory goes".
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench import browser_side as bs  # noqa: E402

MiB = 1024  # smaps and /proc/PID/status count kB


async def report(pid: int, folder: Path, n: int) -> dict:
    os.kill(pid, signal.SIGUSR1)
    path = folder / f"report-{pid}-{n}.json"
    for _ in range(3000):
        if path.exists():
            return json.loads(path.read_text())
        await asyncio.sleep(0.1)
    raise RuntimeError("the server wrote no report")


def kb(status: str) -> int:
    return int(status.split()[0])


def summary(label: str, r: dict) -> None:
    st, maps, m = r["status"], r["mappings"], r["mallinfo2"]
    weights = {k: v for k, v in maps.items() if k.endswith(".safetensors")}
    libs = kb(st["RssFile"]) - sum(weights.values())
    print(f"\n{label}: RSS {kb(st['VmRSS']) / MiB:.0f} MiB = anonymous {kb(st['RssAnon']) / MiB:.0f} MiB "
          f"+ file-backed {kb(st['RssFile']) / MiB:.0f} MiB; {st['Threads']} threads, {len(r['modules'])} modules")
    for path, size in weights.items():
        print(f"  weights (mapped) {size / MiB:7.1f} MiB  {path}")
    print(f"  libraries' code and data (other mapped files) {libs / MiB:.0f} MiB; largest:")
    for path, size in sorted(((k, v) for k, v in maps.items() if k.startswith("/") and k not in weights),
                             key=lambda kv: -kv[1])[:6]:
        print(f"    {size / MiB:7.1f} MiB  {path}")
    print(f"  C allocator (glibc, every arena): in use {m['uordblks'] / 2**20:.0f} MiB, free inside it "
          f"{m['fordblks'] / 2**20:.0f} MiB, large blocks mapped apart {m['hblkhd'] / 2**20:.0f} MiB")
    print(f"  Python's allocated blocks {r['python_blocks']:,}; result cache "
          f"{(r['result_cache'] or 0) / 2**20:.1f} MiB, static gzip cache "
          f"{(r['static_cache'] or 0) / 2**20:.1f} MiB; weight storage "
          + ", ".join(f"{k} {v / 2**20:.0f} MiB" for k, v in r["model_bytes"].items()))
    for lib in ("sklearn", "captum", "matplotlib", "scipy", "sympy", "boto3", "pandas"):
        print(f"    {lib} imported: {lib in r['modules']}", end="")
    print()
    if "tracemalloc" in r:
        print("  Python allocations by the file that made them (tracemalloc), largest:")
        for name, size in sorted(r["tracemalloc"].items(), key=lambda kv: -kv[1])[:15]:
            print(f"    {size / 2**20:7.1f} MiB  {name}")


def probe_env(folder: Path) -> dict:
    """What a server needs to answer SIGUSR1 with a report in ``folder`` (``bench/memprobe``)."""
    return {"MEMPROBE": str(folder), "PYTHONPATH": str(ROOT / "bench" / "memprobe")}


async def main(args) -> None:
    from playwright.async_api import async_playwright

    from explorer.model.registry import EMBEDDED_DECODER

    folder = Path(args.probe or tempfile.mkdtemp(prefix="memprobe-"))
    env = probe_env(folder)
    if args.tracemalloc:
        env["PYTHONTRACEMALLOC"] = "1"
    async with async_playwright() as pw:
        browser = await bs.launch(pw)
        page = await bs.new_page(browser)
        server = bs.RunningServer(args.url, args.pid) if args.url else bs.AppServer(env)
        try:
            await server.ready()
            await page.goto(bs.heatmaps_url(server))
            await bs.heatmap(page, timeout=600)
            await bs.idle(page)
            summary("encoder shown", await report(server.proc.pid, folder, 0))
            await (await bs.open_menu(page, bs.MODEL_MENU, EMBEDDED_DECODER)).click()
            await bs.heatmap(page, timeout=600, title=EMBEDDED_DECODER)
            await bs.idle(page)
            summary("both models shown (row 8)", await report(server.proc.pid, folder, 1))
            print(f"\nreports: {folder}")
        finally:
            server.stop()
            await browser.close()


def cli(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tracemalloc", action="store_true", help="trace Python's allocations (slow)")
    parser.add_argument("--url", help="a running loopback server started with probe_env(--probe) (not a cold one: "
                                      "its numbers are not row 8's)")
    parser.add_argument("--pid", type=int, help="with --url: the server's process")
    parser.add_argument("--probe", help="with --url: the folder its memprobe writes to")
    parser.add_argument("--smoke", action="store_true",
                        help="without --tracemalloc, as the plain run (CI: that both reports still come)")
    args = parser.parse_args(argv)
    if args.url and not (args.pid and args.probe):
        parser.error("--url needs --pid and --probe")
    args.tracemalloc = args.tracemalloc and not args.smoke
    asyncio.run(main(args))


if __name__ == "__main__":
    cli()
