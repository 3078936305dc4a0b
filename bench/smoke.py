"""Every benchmark script in its smoke mode (``--smoke``: tiny counts, a few seconds), one after another in this
one process, so that a page change that breaks a benchmark fails CI; the numbers mean nothing.

    .venv/bin/python -m bench.smoke models    # the scripts that time models, pages and training in their own process
    .venv/bin/python -m bench.smoke server    # the ones that drive a server (one shared, or their own) and Chromium
    .venv/bin/python -m bench.smoke effects floors   # some scripts by name

One process for all: each script alone would import torch, transformers and Streamlit and load a model again,
which costs more than its smoke run. The scripts of the server group that can use a running server (``--url``)
share one, started here with a temporary classroom file and bench/memory.py's probe; run.py's cold start (rows 4
and 8) and bench/cold_ab.py start their own, since a fresh server is what they measure. Each script's output is printed
between ``### NAME`` and ``### NAME ok`` (or ``FAILED``, with the traceback); ``ROWS`` lists what each must print,
which tests/integration/test_bench_smoke.py and tests/browser/test_bench_smoke_browser.py check.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from explorer.serving import process  # noqa: E402

# name -> (module, its entry point, the arguments after --smoke ("{url}", "{db}", "{pid}": the shared server's))
MODELS = {
    "run-1-2": ("bench.run", "main", ["--rows", "1,2"]),
    "effects": ("bench.effects", "main", []),
    "attribution": ("bench.attribution", "main", []),
    "geometry": ("bench.geometry", "main", []),
    "breakdown_bench": ("bench.breakdown_bench", "main", []),
    "floors": ("bench.floors", "main", []),
    "language_bench": ("bench.language_bench", "main", []),
    "generation_bench": ("bench.generation_bench", "main", []),
    "learning": ("bench.learning", "main", []),
    "sentences_bench": ("bench.sentences_bench", "main", []),
    "atlas_bench": ("bench.atlas_bench", "main", []),
    "atlas_on_demand_bench": ("bench.atlas_on_demand_bench", "main", []),
    "patching_bench": ("bench.patching_bench", "main", []),
}
SERVER = {
    "ws_load": ("bench.ws_load", "main", ["--url", "{url}", "--pid", "{pid}"]),
    "queue_bench": ("bench.queue_bench", "main", ["--url", "{url}"]),
    "lesson_bench": ("bench.lesson_bench", "main", ["--url", "{url}", "--classroom", "{db}", "--pids", "{pid}"]),
    "classroom_bench": ("bench.classroom_bench", "main", ["--url", "{url}", "--classroom", "{db}", "--pid", "{pid}"]),
    "teacher_next": ("bench.teacher_next", "main", ["--url", "{url}"]),
    "memory": ("bench.memory", "cli", ["--url", "{url}", "--pid", "{pid}", "--probe", "{probe}"]),
    "run-3-9": ("bench.run", "main", ["--rows", "3,4,5,6,7,8,9", "--url", "{url}", "--pid", "{pid}"]),
    "cold_ab": ("bench.cold_ab", "main", []),
    "sentences_follow_bench": ("bench.sentences_follow_bench", "main",
                               ["--url", "{url}", "--classroom", "{db}", "--pids", "{pid}"]),
}
SCRIPTS = {**MODELS, **SERVER}
GROUPS = {"models": MODELS, "server": SERVER}

# what each script's smoke run must print: one regular expression (multiline) per row
ROWS = {
    "run-1-2": [r"^  row 1: \d", r"^  row 2: \d"],
    "effects": [r"^S1 all-MiniLM-L6-v2 sweep: wall \d", r"^V1 all-MiniLM-L6-v2 value-weighted \d"],
    "attribution": [r"^A2 all-MiniLM-L6-v2 \d+ tokens: wall \d"],
    "geometry": [r"^G1/G2 .* corpus pass: \d+ tokens", r"^G3 .* PCA map", r"^G4 .* t-SNE map", r"^G5 .* \d+ kB",
                 r"^G6 .* your text on a PCA map", r"^G6 .* 512-token text .* \d+ kB"],
    "breakdown_bench": [r"^B1 +open a breakdown, SmolLM2", r"^B2 +relative-position curve", r"^B3 +breakdown section"],
    "floors": [r"^all-MiniLM-L6-v2: new text [\d.]+ ms, unchanged [\d.]+ ms, bare forward [\d.]+ ms, one-line page "
               r"[\d.]+ ms", r"^row 9: the encoder's bare forward .* [\d.]+ ms of CPU",
               r"^all-MiniLM-L6-v2: CPU of a new-text rerun [\d.]+ ms = the page's script thread [\d.]+ \+ "
               r"extraction [\d.]+ \+ AppTest's own -?[\d.]+"],
    "language_bench": [r'"edit_de_ms": [\d.]+', r'"switch_ms": [\d.]+', r'"same_view_ms": [\d.]+'],
    "generation_bench": [r"^\| G1 ratio recording ÷ bare \| [\d.]+ ×", r"^\| G2 generate 8 tokens .* [\d.]+ ms",
                         r"^\| G2 page's first run, 8 tokens \(AppTest\) \| [\d.]+ ms",
                         r"^\| G3 rerun: new step .* [\d.]+ ms", r"^\| G4 a 16-token generation .* [\d.]+ MB"],
    "learning": [r"^seed 0: phase change", *(rf"^{row}  " for row in ("L1", "L2", "L3", "L4", "L5", "L6"))],
    "sentences_bench": [r"^S1 all-MiniLM-L6-v2 .* wall \d", r"^S1 SmolLM2-135M-Instruct .* wall \d",
                        r"^S3 all-MiniLM-L6-v2: batch vs alone", r"^S3 SmolLM2-135M-Instruct: batch vs alone"],
    "atlas_bench": [r"^H1 all-MiniLM-L6-v2: atlas page first draw \d+ ms",
                    r"^H2 SmolLM2-135M-Instruct: a head's card \d+ ms",
                    r"^H3 stored data, both models: [\d.]+ MB"],
    "atlas_on_demand_bench": [r"^H5 all-MiniLM-L6-v2: [\d,]+ tokens in \d+ windows, wall [\d.]+ s"],
    "patching_bench": [r"^P5 all-MiniLM-L6-v2 flip pair \(\d+ tokens\), every granularity: wall \d"],
    "ws_load": [r"^ +2 +\d+ +\d+ ms .* +0 +", r"^capacity: 2 sessions"],
    "queue_bench": [r"^\| as running \| [1-9]\d* \| \d+ ms \| \d+ ms \| \d+ ms \| [1-9]\d* \(\d+ ms\) \| 0 \|"],
    "lesson_bench": [r"^2/2 followers on step \d+", r"^  next 1 \([^)]+\): 2/2", r"^  next 2 \([^)]+\): 2/2",
                     r"^next -> follower's script finished, 2 followers x 2 steps x 1: .* missed 0",
                     r"^render store after the lessons: [1-9]"],
    "classroom_bench": [r"^2/2 followers on the teacher's page", r"^  head 1: 2/2 followers",
                        r"^follow latency over 1 changes x 2 followers: .* missed 0", r"^idle: 2 followers"],
    "teacher_next": [r"^  step 2 \([^)]+\): Next \d",
                     r"^Attention in 20 minutes: teacher's Next -> page drawn, p50 \d"],
    "run-3-9": [rf"^  row {row}: \d.* (met|MISSED)" for row in ("3", "4a", "4b", "5a", "5d", "5e", "6")]
               + [r"^  row 5c: \d", r"^  row 7: \d.*(met|MISSED) .* 0 errors", r"^  row 8: \d", r"^  row 8b: \d",
                  r"^  row 9: \d.* 0 errors"],
    "memory": [r"^encoder shown: RSS \d+ MiB", r"^both models shown \(row 8\): RSS \d+ MiB", r"weights \(mapped\)"],
    "cold_ab": [r"^this \(.*\): median \d+\.\d\d s, runs \d"],
    "sentences_follow_bench": [r"^  all-MiniLM-L6-v2 round 1 show: 2/2 drew the figure",
                               r"^S2 all-MiniLM-L6-v2, show: .* missed 0", r"^S2 all-MiniLM-L6-v2, again: .* missed 0"],
}


def sections(output: str) -> dict[str, tuple[str, str]]:
    """name -> (what it printed, "ok" or "FAILED") for every script the output ran."""
    found = re.finditer(r"^### (\S+)\n(.*?)^### \1 (ok|FAILED)\b", output, re.M | re.S)
    return {m.group(1): (m.group(2), m.group(3)) for m in found}


def missing_rows(name: str, printed: str) -> list[str]:
    """The patterns of ``ROWS[name]`` that ``printed`` lacks."""
    return [row for row in ROWS[name] if not re.search(row, printed, re.M)]


def problems(group: str, output: str) -> list[str]:
    """What is wrong with a run of ``group``'s scripts that printed ``output``: a script that did not run, failed
    or lacks a row; empty when every script printed all of its rows."""
    found = sections(output)
    out = []
    for name in GROUPS[group]:
        if name not in found:
            out.append(f"{name}: did not run")
            continue
        printed, status = found[name]
        out += [f"{name}: failed"] if status != "ok" else []
        out += [f"{name}: no row matching {row!r}" for row in missing_rows(name, printed)]
    return out


def check(group: str, timeout: float) -> list[str]:
    """Run ``group`` in a fresh interpreter (``python -m bench.smoke GROUP``): its ``problems``, followed by the
    output's tail to read when there are any."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "bench.smoke", group], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    found = problems(group, done.stdout) or ([f"bench.smoke exited with {done.returncode}"] if done.returncode
                                             else [])
    return found and [*found, "--- output (tail):", done.stdout[-8000:], done.stderr[-4000:]]


def shared_server(folder: Path):
    """One ``streamlit run app.py`` with a classroom file and bench/memory.py's probe in ``folder``, for the
    scripts that accept ``--url``."""
    from chromium import Server

    from bench.memory import probe_env

    db, probe = folder / "classroom.sqlite3", folder / "memprobe"
    probe.mkdir()
    server = Server(env={"EXPLORER_CLASSROOM_DB": str(db), "EXPLORER_CLASSROOM_URL": "", **probe_env(probe)},
                    log_prefix="bench-smoke")
    return server, {"url": server.url, "db": str(db), "pid": str(server.proc.pid), "probe": str(probe)}


def run_one(name: str, where: dict) -> bool:
    module, entry, extra = SCRIPTS[name]
    print(f"### {name}", flush=True)
    start = time.perf_counter()
    try:
        getattr(importlib.import_module(module), entry)(["--smoke", *(a.format(**where) for a in extra)])
    except BaseException:   # SystemExit of a bad argument too: the next script still runs
        traceback.print_exc(file=sys.stdout)
        print(f"### {name} FAILED after {time.perf_counter() - start:.1f} s", flush=True)
        return False
    print(f"### {name} ok in {time.perf_counter() - start:.1f} s", flush=True)
    return True


def main(argv=None) -> int:
    process.server_defaults()   # run.py's rows 1 and 2 and floors.py time the server's rerun here: before numpy
    wanted = list(sys.argv[1:] if argv is None else argv) or list(GROUPS)
    names = [n for w in wanted for n in (GROUPS[w] if w in GROUPS else [w])]
    unknown = [n for n in names if n not in SCRIPTS]
    if unknown:
        print(f"unknown: {', '.join(unknown)}; scripts: {', '.join(SCRIPTS)}; groups: {', '.join(GROUPS)}")
        return 2
    ok, server = [], None
    with tempfile.TemporaryDirectory(prefix="bench-smoke-") as tmp:
        where = {"url": "", "db": "", "pid": "", "probe": ""}
        try:
            for name in names:
                if not server and any("{url}" in a for a in SCRIPTS[name][2]):
                    server, where = shared_server(Path(tmp))
                ok.append(run_one(name, where))
        finally:
            if server:
                server.stop()
    print(f"smoke: {sum(ok)} of {len(ok)} scripts ran")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
