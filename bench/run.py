"""Performance benchmark of the attention explorer: prints one table and writes it to docs/benchmarks.md.

    .venv/bin/python bench/run.py              # every row (about 6 minutes on 2 cores)
    .venv/bin/python bench/run.py --quick      # fewer repetitions and sessions (about 4 minutes)
    .venv/bin/python bench/run.py --rows 1,2,5 # some rows only (the file is written only with --write)
    .venv/bin/python bench/run.py --smoke      # every row once, tiny counts, nothing written (CI)

Targets are ratios measured side by side in one run where the machine matters, absolute where the issue says
so. See bench/README.md for what each row measures.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from explorer.serving import process  # noqa: E402

process.server_defaults()   # rows 1 and 2 time the server's rerun in this process: app.py's settings, before numpy

from bench import browser_side as bs  # noqa: E402
from bench import server_side as ss  # noqa: E402
from bench import ws_load  # noqa: E402
from bench.stats import median, quantile, spread  # noqa: E402
from bench.texts import MARKERS, fit, single_token_markers  # noqa: E402

OUT = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
ALL_ROWS = (1, 2, 3, 4, 5, 6, 7, 8, 9)
CLASS_SIZE, CLASS_LINK_BITS = 30, 20e6   # row 5e: a class on one classroom access point


# ---------------------------------------------------------------------------------------------- machine

def machine() -> dict:
    import torch

    from explorer.model import loading

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        mem = next(int(line.split()[1]) * 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    except (OSError, StopIteration):
        mem = 0
    device = loading.best_device()
    return dict(cpu=cpu, cores=os.cpu_count(), memory_gb=mem / 2**30, python=platform.python_version(),
                torch=torch.__version__, torch_threads=torch.get_num_threads(), device=device,
                device_label=loading.device_label(device), system=f"{platform.system()} {platform.release()}",
                load=os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0))


# ---------------------------------------------------------------------------------------------- rows

class Table:
    def __init__(self):
        self.rows: list[dict] = []
        self.notes: list[str] = []

    def add(self, row: str, what: str, value: float | None, unit: str, spread_=None, n: int = 1,
            target: str = "", met: bool | None = None, detail: str = "", errors=()):
        """One row of the table; its first ten ``errors`` (if any) go to the notes under it, named by the row."""
        self.rows.append(dict(row=row, what=what, value=value, unit=unit, spread=spread_, n=n, target=target,
                              met=met, detail=detail))
        self.notes += [f"row {row}: {e}" for e in list(errors)[:10]]
        print(f"  row {row}: {fmt(value, unit)}  target {target or '—'}  "
              f"{'' if met is None else ('met' if met else 'MISSED')}  {detail}", flush=True)


def fmt(value, unit: str) -> str:
    if value is None or value != value:
        return "—"
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "×":
        return f"{value:.2f}×"
    if unit == "B":   # decimal units, as in the targets
        return (f"{value / 1e3:.1f} kB" if value < 1e6 else f"{value / 1e6:.2f} MB" if value < 1e9
                else f"{value / 1e9:.2f} GB")
    if unit == "ratio":
        return f"1/{1 / value:.0f}" if value < 1 else f"{value:.1f}×"
    return f"{value:g} {unit}"


def fmt_spread(sp, unit: str) -> str:
    if not sp:
        return "—"
    return f"{fmt(sp[0], unit)} – {fmt(sp[1], unit)}"


def rows_in_process(table: Table, which: set[int], reps: int, encoder: str, decoder: str):
    for row, name, most in ((1, encoder, 2.0), (2, decoder, 1.2)):   # targets of issue 16
        if row not in which:
            continue
        print(f"row {row}: heatmap page rerun vs forward, {name}…", flush=True)
        r = ss.page_vs_forward(name, reps)
        table.add(str(row), f"Warm rerun of the heatmap page, {name}, {ss.N_TOKENS} tokens, new text "
                            "(extraction + figures, AppTest) ÷ bare forward with attentions",
                  r["ratio"], "×", r["ratio_spread"], r["n"], f"≤ {most:g}×", r["ratio"] <= most,
                  f"page {fmt(median(r['page_s']), 's')} ({fmt_spread(spread(r['page_s']), 's')}), forward "
                  f"{fmt(median(r['forward_s']), 's')} ({fmt_spread(spread(r['forward_s']), 's')}), extract() "
                  f"alone {fmt(median(r['extract_s']), 's')}; in CPU time (all threads of this process) page "
                  f"{fmt(median(r['page_cpu_s']), 's')} ÷ forward {fmt(median(r['forward_cpu_s']), 's')} = "
                  f"{r['cpu_ratio']:.2f}×; device {r['device']}")


async def rows_in_browser(table: Table, which: set[int], args, encoder: str, decoder: str):
    from playwright.async_api import async_playwright

    from explorer.examples import EXAMPLES
    from explorer.model import embedded, loading, registry

    env = {"EXPLORER_DEVICE": args.device} if args.device else {}
    async with async_playwright() as pw:
        if which & {4, 8}:
            spec = registry.EMBEDDED[decoder]
            if embedded.needs_preparation(decoder):
                print("decoder: one-time GGUF conversion first…", flush=True)
                start = time.perf_counter()
                loading.prepare(spec)
                table.notes.append(f"The decoder's one-time GGUF conversion ran first: "
                                   f"{time.perf_counter() - start:.1f} s (not part of row 4).")
            colds = []
            for i in range(args.cold_reps):
                print(f"row 4/8: cold start {i + 1}/{args.cold_reps}…", flush=True)
                colds.append(await bs.cold_start(pw, decoder, env))
            first = [c["first_heatmap_s"] for c in colds]
            dec = [c["decoder_first_s"] for c in colds]
            errs = sum(len(c["errors"]) + len(c["external"]) for c in colds)
            if 4 in which:
                table.add("4a", "Cold start: `streamlit run app.py` launched → first heatmap drawn (encoder)",
                          median(first), "s", spread(first), len(first), "≤ 4 s", median(first) <= 4,
                          f"health endpoint up after {fmt(median([c['health_s'] for c in colds]), 's')}; "
                          f"{errs} errors/external requests")
                table.add("4b", "Decoder's first load in a running server (after its one-time conversion) → "
                                "heatmap drawn", median(dec), "s", spread(dec), len(dec), "≤ 5 s", median(dec) <= 5)
            if 8 in which:
                rss = [c["rss_both"] for c in colds]
                table.add("8", "Server RSS with both embedded models loaded (and their default texts shown)",
                          median(rss), "B", spread(rss), len(rss), "≤ 1.3 GB", median(rss) <= 1.3e9,
                          f"encoder alone {fmt(median([c['rss_encoder'] for c in colds]), 'B')}")
        if not which & {3, 5, 6, 7, 9}:
            return
        server = bs.RunningServer(args.url, args.pid) if args.url else bs.AppServer(env)
        try:
            await server.ready()
            if 5 in which:
                default_text = next(iter(EXAMPLES.values()))
                for label, name in (("5a", encoder), ("5b", decoder))[:1 if args.smoke else 2]:
                    print(f"row 5: bytes, {name}…", flush=True)
                    stock = ss.stock_bertviz_bytes(name, default_text)
                    got = await bs.page_bytes(pw, server, name, with_bertviz=label == "5a")
                    sent = got["page"]["ws"] + got["page"]["http"]
                    table.add(label, f"Bytes to the browser for the heatmap page with its overview, {name} ÷ stock "
                                     "bertviz model_view HTML (same model and text)",
                              sent / stock["bytes"], "ratio", None, 1, "≤ 1/20", sent / stock["bytes"] <= 1 / 20,
                              f"page {fmt(sent, 'B')} (websocket {fmt(got['page']['ws'], 'B')}, HTTP "
                              f"{fmt(got['page']['http'], 'B')}; static JS/CSS {fmt(got['page']['static'], 'B')} "
                              f"apart, cached by browsers) vs bertviz {fmt(stock['bytes'], 'B')} for "
                              f"{stock['n_tokens']} tokens × {stock['shape'][0]} layers × {stock['shape'][1]} heads")
                    if label == "5a":
                        first = sent + got["page"]["static"]
                        table.add("5d", f"A student's first visit on the wire: every HTTP response (Streamlit's "
                                        f"JavaScript included, as sent) and websocket frame until the heatmap page "
                                        f"is drawn, {name}, fresh browser", first, "B", None, 1, "≤ 2.5 MB",
                                  first <= 2.5e6, f"static files {fmt(got['page']['static'], 'B')} as sent "
                                                  "(gzip, app.py's GzipStatic)")
                        class_s = CLASS_SIZE * first * 8 / CLASS_LINK_BITS
                        table.add("5e", f"{CLASS_SIZE} students open the class link at once over one "
                                        f"{CLASS_LINK_BITS / 1e6:g} Mbit/s link: time until the last first heatmap "
                                        "(computed from row 5d's bytes)", class_s, "s", None, 1, "≤ 30 s",
                                  class_s <= 30, "bytes × students × 8 ÷ link rate: the link fully used, no "
                                                 "protocol overhead, server time apart")
                    if "bertviz" in got:
                        b = got["bertviz"]["ws"] + got["bertviz"]["http"]
                        table.add("5c", f"Switching on our embedded bertviz views (head + model view), {name} ÷ "
                                        "stock bertviz model_view HTML", b / stock["bytes"], "ratio", None, 1,
                                  "(no target)", None, f"{fmt(b, 'B')} vs {fmt(stock['bytes'], 'B')}")
            tok_enc = await asyncio.to_thread(tokenizer_of, encoder)
            if 3 in which:
                for label, name, tok, most in (("3", encoder, tok_enc, 0.15),
                                               ("3b", decoder, None, 0.25))[:1 if args.smoke else 2]:
                    tok = tok or await asyncio.to_thread(tokenizer_of, name)
                    marks = single_token_markers(tok, args.reps + 2)
                    texts = [(fit(tok, ss.N_TOKENS, seed=100 + i, marker=m), m) for i, m in enumerate(marks)]
                    print(f"row {label}: edit → heatmap, {name}…", flush=True)
                    got = await bs.edit_latency(pw, server, name, texts)
                    t = got["times"][2:]
                    table.add(label, f"Browser: edit the text → new heatmap drawn, {name}, {ss.N_TOKENS} tokens",
                              median(t), "s", spread(t), len(t), f"≤ {most * 1000:g} ms", median(t) <= most,
                              f"{len(got['errors'])} errors")
            if 6 in which:
                print("row 6: 512 tokens…", flush=True)
                texts = [fit(tok_enc, 512, seed=600 + i, marker=MARKERS[i]) for i in range(args.long_reps)]
                got = await bs.long_input(pw, server, texts, 512)
                table.add("6", f"512-token input on {encoder}: submit → page usable (script done, heatmap drawn)",
                          median(got["usable"]), "s", spread(got["usable"]), len(got["usable"]), "≤ 1 s",
                          median(got["usable"]) <= 1,
                          f"every chart drawn after {fmt(median(got['complete']), 's')}; "
                          f"{len(got['errors'])} errors")
            if 7 in which:
                print(f"row 7: {args.sessions} concurrent sessions…", flush=True)
                marks = single_token_markers(tok_enc, len(MARKERS))
                plans = [[(fit(tok_enc, ss.N_TOKENS, seed=7000 + 100 * s + k, marker=marks[(s + 7 * k) % len(marks)]),
                           marks[(s + 7 * k) % len(marks)]) for k in range(args.interactions)]
                         for s in range(args.sessions)]
                got = await bs.concurrent_sessions(pw, server, plans, think=tuple(args.think))
                lat = got["latencies"]
                p95 = quantile(lat, 0.95)
                table.add("7", f"{args.sessions} concurrent browser sessions on {encoder}: p95 interaction latency "
                               "(submit a new text → its heatmap drawn)", p95, "s", (median(lat), max(lat or [0])),
                          len(lat), "≤ 2 s, 0 errors", p95 <= 2 and not got["errors"],
                          f"median {fmt(median(lat), 's')}, max {fmt(max(lat or [0]), 's')}; "
                          f"{len(got['errors'])} errors; think time {args.think[0]:g}–{args.think[1]:g} s, "
                          f"{args.interactions} edits a session; all sessions open after "
                          f"{fmt(got['all_open_s'], 's')} (one page load {fmt(median(got['open_s']), 's')}); "
                          f"CPU per edit: server {fmt(got['cpu']['server'] / max(len(lat), 1), 's')}, browsers "
                          f"{fmt(got['cpu']['browsers'] / max(len(lat), 1), 's')}; whole machine busy "
                          f"{got['cpu']['machine'] / got['wall'] / (os.cpu_count() or 1):.0%} of "
                          f"{os.cpu_count()} cores; server RSS {fmt(got['rss_after'], 'B')} after", got["errors"])
            if 8 in which and which & {3, 5, 6, 7}:   # 8b: a server the rows above have used, not a fresh one
                rss = server.rss()
                with urllib.request.urlopen(server.url + "/_explorer/stats", timeout=10) as answer:
                    stores = json.loads(answer.read())   # app.py's /_explorer/stats: the shared stores' sizes
                render, results = stores["render_store"], stores["results"]
                table.add("8b", "Server RSS at the end of the run, its result cache filled by the rows above "
                                "(512-token texts, 30 sessions' texts); of it, the render store "
                                f"{render['entries']} views in {fmt(render['bytes'], 'B')} (bound "
                                f"{fmt(render['max_bytes'], 'B')}), the results {results['entries']} in "
                                f"{fmt(results['bytes'], 'B')}", rss, "B", None, 1, "(≤ 1.5 GB)", rss <= 1.5e9)
            if 9 in which:
                print(f"row 9: {args.ws_sessions} browserless sessions for {args.ws_seconds:g} s…", flush=True)
                await ws_load.settle(server.proc.pid)
                got = await ws_load.step(server.url, server.proc.pid, args.ws_sessions, args.ws_seconds)
                per = got["cpu_per_request"] or float("nan")
                ok = not got["errors"] and got["p95"] <= 1 and per <= 0.02
                table.add("9", f"{args.ws_sessions} browserless sessions on {encoder} (`bench/ws_load.py`: each joins "
                               "with its own text, then edits it every 10–20 s): p95 latency (rerun sent → script "
                               "finished) and server CPU per request", got["p95"], "s", (got["p50"], got["edit_p95"]),
                          got["requests"], "≤ 1 s, 0 errors, ≤ 20 ms CPU a request", ok,
                          f"server CPU {per * 1000:.0f} ms a request ({got['joins']} joins, {got['edits']} edits in "
                          f"{got['seconds']:.0f} s); median {fmt(got['p50'], 's')}, edits' p95 "
                          f"{fmt(got['edit_p95'], 's')}; {len(got['errors'])} errors; whole machine busy "
                          f"{got['busy']:.0%}", got["errors"])
        finally:
            server.stop()


def tokenizer_of(name: str):
    from transformers import AutoTokenizer

    from explorer.model import loading, registry
    folder = loading.prepare(registry.EMBEDDED[name])
    return AutoTokenizer.from_pretrained(folder)


# ---------------------------------------------------------------------------------------------- output

def markdown(table: Table, info: dict, args, seconds: float) -> str:
    load = ", ".join(f"{x:.1f}" for x in info["load"])
    lines = [
        f"Run {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC with `{args.command}`"
        f" in {seconds / 60:.1f} min.",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory_gb']:.0f} GB RAM, {info['system']}; "
        f"Python {info['python']}, torch {info['torch']} ({info['torch_threads']} threads); models on "
        f"**{info['device_label']}**; load average before the run {load}.",
        "",
        "| # | measure | median | spread | n | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table.rows:
        met = "—" if r["met"] is None else ("✅" if r["met"] else "❌")
        lines.append(f"| {r['row']} | {r['what']} | **{fmt(r['value'], r['unit'])}** | "
                     f"{fmt_spread(r['spread'], r['unit'])} | {r['n']} | {r['target']} | {met} |")
    lines += ["", "Spread is the 25th–75th percentile (row 7: median – max; row 9: median – the edits' p95). "
                  "Details:", ""]
    lines += [f"- **{r['row']}**: {r['detail']}" for r in table.rows if r["detail"]]
    lines += [f"- {n}" for n in table.notes]
    return "\n".join(lines)


def write(block: str) -> None:
    OUT.parent.mkdir(exist_ok=True)
    old = OUT.read_text() if OUT.exists() else (
        "# Benchmarks\n\nHow fast the explorer is, measured by `bench/run.py` (see bench/README.md).\n\n"
        f"{BEGIN}\n{END}\n\n## Analysis\n\n(written by hand)\n")
    if BEGIN not in old:
        old += f"\n{BEGIN}\n{END}\n"
    head, rest = old.split(BEGIN, 1)
    tail = rest.split(END, 1)[1] if END in rest else ""
    OUT.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and sessions")
    parser.add_argument("--rows", default=",".join(map(str, ALL_ROWS)), help="comma-separated rows (1–9)")
    parser.add_argument("--reps", type=int, help="measured repetitions for rows 1–3 (default 9, quick 4)")
    parser.add_argument("--sessions", type=int, help="row 7 sessions (default 30, quick 10)")
    parser.add_argument("--device", help="force a device (cpu, cuda); default: the app's own choice")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md even for some rows only")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--url", help="rows 3, 5-9 on this running loopback server (with --pid, its process); rows "
                                      "4 and 8 always start their own")
    parser.add_argument("--pid", type=int, help="with --url: the server's process (memory, CPU)")
    parser.add_argument("--smoke", action="store_true",
                        help="each row once with tiny counts (rows 3 and 5 on the encoder only), printed only: that "
                             "every row is still measurable (bench/smoke.py, in CI); its numbers mean nothing")
    args = parser.parse_args(argv)
    which = {int(x) for x in args.rows.split(",") if x.strip()}
    small = args.quick or args.smoke
    args.reps = args.reps or (1 if args.smoke else 4 if args.quick else 9)
    args.sessions = args.sessions or (2 if args.smoke else 10 if args.quick else 30)
    args.cold_reps = 1 if small else 3
    args.long_reps = 1 if args.smoke else 2 if args.quick else 3
    args.interactions = 1 if args.smoke else 3
    args.think = (0.2, 0.5) if args.smoke else (5.0, 15.0)   # a student reads the new heatmap before editing again
    # row 9, the capacity issue 16 asks of one server
    args.ws_sessions = 2 if args.smoke else 120 if args.quick else 360
    args.ws_seconds = 3 if args.smoke else 40 if args.quick else 90
    args.no_write = args.no_write or args.smoke
    args.command = " ".join(["bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    if args.url and not args.pid:
        parser.error("--url needs --pid")
    if args.device:
        os.environ["EXPLORER_DEVICE"] = args.device

    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    info = machine()
    print(f"{info['cpu']} · {info['cores']} cores · {info['device_label']} · torch threads {info['torch_threads']}")
    start = time.perf_counter()
    table = Table()
    rows_in_process(table, which, args.reps, EMBEDDED_ENCODER, EMBEDDED_DECODER)
    asyncio.run(rows_in_browser(table, which, args, EMBEDDED_ENCODER, EMBEDDED_DECODER))
    order = {str(r): i for i, r in enumerate(["1", "2", "3", "3b", "4a", "4b", "5a", "5b", "5c", "5d", "5e", "6",
                                               "7", "8", "8b", "9"])}
    table.rows.sort(key=lambda r: order.get(r["row"], 99))
    block = markdown(table, info, args, time.perf_counter() - start)
    print("\n" + block)
    if not args.no_write and (which == set(ALL_ROWS) or args.write):
        write(block)
        print(f"\nwritten to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
