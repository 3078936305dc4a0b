"""Benchmark rows for one score taken apart (issue 32), on both embedded models.

    .venv/bin/python bench/breakdown_bench.py [--repeat 30] [--tokens 32,512] [--smoke]

Prints one line per row: median wall and CPU time of the server's work (no browser), with the target, judged on
the CPU time (on a machine other programs load, wall time measures them too; the load average is printed). Rows:
  B1 opening a breakdown: ``breakdown`` + ``origin`` (the split or the rotary view) + every figure of the section
     serialised as Streamlit sends it (plotly JSON), for a new (query, key) each time      target ≤ 100 ms
  B2 the relative-position curve alone (``rotary_view``: unrotate, then score at every distance), decoder
                                                                                          target ≤ 50 ms
  B3 the same inside the heatmap page's rerun (AppTest, same text, result cached): ``score_breakdown.section``'s
     own time, Streamlit's elements included, on the script's thread                      target ≤ 100 ms
Texts of ``--tokens`` tokens (repeated example words); the result is extracted once before timing (no forward pass
is part of any row).
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from bench.stats import timed  # noqa: E402

WORDS = "the animal didn't cross the street because it was too tired".split()


def each_new(fn):
    """A call of ``fn(0)``, then ``fn(1)``, … on each call: every timed call opens a new (query, key)."""
    count = itertools.count()
    return lambda: fn(next(count))


def text_of(loaded, n_tokens: int) -> str:
    words = []
    while len(loaded.tokenizer(" ".join(words))["input_ids"]) < n_tokens:
        words.append(WORDS[len(words) % len(WORDS)])
    return " ".join(words)


def line(row: str, what: str, wall: float, cpu: float, target: float | None) -> None:
    met = "" if target is None else (" met" if cpu <= target else " MISSED") + f" (target ≤ {target * 1e3:.0f} ms)"
    print(f"{row:3} {what:70} {wall * 1e3:7.1f} ms wall {cpu * 1e3:7.1f} ms CPU{met}", flush=True)


def core_rows(name: str, tokens: int, repeat: int) -> None:
    import plotly.io

    from explorer.attention.breakdown import breakdown, dimension_question
    from explorer.attention.by_distance import rotary_view
    from explorer.attention.result import extract
    from explorer.attention.score_origin import distance_question, origin
    from explorer.model import anatomy, families
    from explorer.model.loading import load_model
    from explorer.plots import breakdown as plots

    loaded = load_model(name, device="cpu")
    result = extract(loaded, text_of(loaded, tokens))
    n = len(result.tokens)
    layers, heads = result.facts.n_layers, result.facts.n_heads

    def pair(i: int) -> tuple[int, int, int, int]:
        layer = 0 if i % 2 else i % layers                 # the encoder's split (layer 0) every other time
        query = n - 1 - (i % 5)
        return layer, i % heads, query, (i * 7) % (query + 1)

    def open_one(i: int) -> None:
        layer, head, query, key = pair(i)
        b = breakdown(result, layer, head, query, key)
        float(result.head_scores(layer, head)[query, key])   # the page's check against the heatmap's score
        where = origin(loaded.model, result, b)
        figs = [plots.vectors(b), plots.products(b)]
        if where.split is not None:
            figs.append(plots.split_parts(where.split))
        if where.rotary is not None:
            figs.append(plots.rotary_curve(where.rotary, query))
            distance_question(where.rotary, b)
        else:
            dimension_question(b)
        for fig in figs:
            plotly.io.to_json(fig.to_dict(), validate=False)

    wall, cpu = timed(each_new(open_one), repeat, warm=True)
    line("B1", f"open a breakdown, {name}, {n} tokens", wall, cpu, 0.100)
    if families.positions_of(loaded.model) == "rope":
        layout = families.family_of(loaded.model).rotary_layout

        def curve(i: int) -> None:
            layer, head, query, key = pair(i)
            inv_freq, scaling = anatomy.rope_table(loaded.model, layer)
            rotary_view(inv_freq, scaling, layout, breakdown(result, layer, head, query, key), n)
        base_wall, base_cpu = timed(each_new(lambda i: breakdown(result, *pair(i))), repeat, warm=True)
        wall, cpu = timed(each_new(curve), repeat, warm=True)
        line("B2", f"relative-position curve, {name}, {n} tokens (breakdown itself taken off)",
             wall - base_wall, cpu - base_cpu, 0.050)


def page_row(name: str, repeat: int) -> None:
    """B3: the section's own time inside the heatmap page's rerun (AppTest; the script thread's CPU time and wall
    time of ``score_breakdown.section``, Streamlit's elements and the figures' serialisation included)."""
    from streamlit.testing.v1 import AppTest

    from explorer.ui.views import score_breakdown as view

    page = str(Path(__file__).resolve().parents[1] / "pages" / "heatmaps.py")
    walls, cpus, whole = [], [], []
    section = view.section

    def measured(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.thread_time()   # the script runs in its own thread
        section(*args, **kwargs)
        cpus.append(time.thread_time() - cpu)
        walls.append(time.perf_counter() - wall)

    view.section = measured
    try:
        at = AppTest.from_file(page, default_timeout=240)
        at.query_params.update(dict(model=name, layer="0", head="1", breakdown="1"))
        at.run()
        walls.clear(), cpus.clear()
        for i in range(repeat):
            at.selectbox(key="key").set_value(i % 5)
            start = time.perf_counter()
            at.run()
            whole.append(time.perf_counter() - start)
    finally:
        view.section = section
    line("B3", f"breakdown section in the page's rerun, {name} (whole rerun {statistics.median(whole) * 1e3:.0f} ms)",
         statistics.median(walls), statistics.median(cpus), 0.100)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--tokens", default="32,512")
    parser.add_argument("--models", default="all-MiniLM-L6-v2,SmolLM2-135M-Instruct")
    parser.add_argument("--no-page", action="store_true", help="skip B3 (AppTest)")
    parser.add_argument("--smoke", action="store_true",
                        help="every row once, 16 tokens, B1 and B2 on the decoder, B3 on the encoder (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        core_rows("SmolLM2-135M-Instruct", 16, 1)   # B1 and B2 (the rotary curve: the decoder only)
        page_row("all-MiniLM-L6-v2", 1)             # B3
        return
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    for name in args.models.split(","):
        for tokens in (int(t) for t in args.tokens.split(",")):
            core_rows(name, tokens, args.repeat)
        if not args.no_page:
            page_row(name, max(5, args.repeat // 3))


if __name__ == "__main__":
    main()
