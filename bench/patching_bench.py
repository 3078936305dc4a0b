"""Benchmark rows for patching (issue 55): the attribution preview, exact head-output patching, the exact residual
grid and path patching on SmolLM2's indirect-object pair, every granularity of the encoder's flip pair, and the
correlation between the preview and the exact grids of each ready pair.

    .venv/bin/python bench/patching_bench.py [--repeat 3] [--smoke] [--rows P2,P2w,P3,P3w]

Prints one line per row: median wall time and median CPU time of this process (``bench.stats.timed``; on a
shared machine other work inflates wall time, not CPU time), the load average, and the target. Rows:
  P1 attribution preview, residual grid + all heads, SmolLM2, ioi pair (14 tokens)      target ≤ 1 s
  P2 exact head-output patching, all 270 heads of SmolLM2                               target ≤ 10 s
  P3 exact residual grid, 30 layers × every position                                    target ≤ 10 s
  P4 path patching, every sender head into one receiver (layer 23 head 3, qkv)          target ≤ 15 s
  P1w-P4w the same at the targets' limit: 24 tokens differing at the first (every position run), receiver in the
          last layer
  P5 encoder flip pair, every granularity (residual, heads, heads at "it", patterns, path)  target ≤ 2 s
  P6 attribution vs exact, each ready pair × residual / heads: Pearson and Spearman     (no target)
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

RECEIVER = (23, 3)
LONG = "John said that when Mary and John went to the store after a long day at work, John gave a small drink to"


def _row(row: str, what: str, wall: float, cpu: float, target: float | None, extra: str = "") -> None:
    met = "" if target is None else f" (target ≤ {target:g} s: {'met' if wall <= target else 'wall MISSED'})"
    print(f"{row} {what}: wall {wall:.2f} s, cpu {cpu:.2f} s{met}{extra}; load {os.getloadavg()[0]:.1f}",
          flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="the encoder's rows once (CI: that it still runs)")
    parser.add_argument("--rows", default="", help="only these rows, comma-separated (P1 … P6, P1w … P4w)")
    args = parser.parse_args(argv)
    chosen = {r.strip() for r in args.rows.split(",") if r.strip()}

    def wanted(row: str) -> bool:
        return not chosen or row in chosen
    import torch

    from bench.stats import timed
    from explorer.model.loading import load_model
    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
    from explorer.patching import READY, MinimalPair, compare, patch, prepare, preview

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    encoder = load_model(EMBEDDED_ENCODER, device="cpu")
    flip = prepare(encoder, READY["flip"])
    it = flip.query_rows[0]

    def every_granularity():
        for g in ("residual", "heads", "heads_at", "patterns"):
            patch(flip, g, position=it)
        patch(flip, "path", receiver=(flip.pair.layer, flip.pair.head))
    if wanted("P5") or args.smoke:
        wall, cpu = timed(every_granularity, 1 if args.smoke else args.repeat, warm=True)
        _row("P5", f"{EMBEDDED_ENCODER} flip pair ({flip.n_tokens} tokens), every granularity", wall, cpu, 2.0)
    if args.smoke:
        return
    decoder = load_model(EMBEDDED_DECODER, device="cpu")
    ioi = prepare(decoder, READY["ioi"])
    n = f"{EMBEDDED_DECODER} ioi pair ({ioi.n_tokens} tokens)"
    if wanted("P1"):
        wall, cpu = timed(lambda: preview(ioi), args.repeat, warm=True)
        _row("P1", f"{n}, attribution preview (residual + heads)", wall, cpu, 1.0)
    if wanted("P2"):
        wall, cpu = timed(lambda: patch(ioi, "heads"), args.repeat)
        _row("P2", f"{n}, exact patching of all {ioi.n_layers * ioi.n_heads} heads", wall, cpu, 10.0)
    if wanted("P3"):
        grid = patch(ioi, "residual")
        wall, cpu = timed(lambda: patch(ioi, "residual"), args.repeat)
        _row("P3", f"{n}, exact residual grid {ioi.n_layers} × {ioi.n_tokens}", wall, cpu, 10.0,
             f"; {grid.runs} batches, positions before the first difference not run")
    if wanted("P4"):
        wall, cpu = timed(lambda: patch(ioi, "path", receiver=RECEIVER), args.repeat)
        _row("P4", f"{n}, path patching every sender into {RECEIVER} via qkv", wall, cpu, 15.0)
    # the worst case at the limit of the targets: 24 tokens differing at the first one (every position is run),
    # the receiver in the last layer (every earlier head a sender); timing only, so no threshold on the metric
    worst = prepare(decoder, MinimalPair(LONG, "Anna" + LONG[4:], answer="Mary", wrong="John"), least=0.0)
    w = f"{EMBEDDED_DECODER} worst case ({worst.n_tokens} tokens, first token differs)"
    for row, what, target, fn in (
            ("P1w", "attribution preview", 1.0, lambda: preview(worst)),
            ("P2w", f"exact patching of all {worst.n_layers * worst.n_heads} heads", 10.0,
             lambda: patch(worst, "heads")),
            ("P3w", f"exact residual grid {worst.n_layers} × {worst.n_tokens}", 10.0,
             lambda: patch(worst, "residual")),
            ("P4w", f"path patching every sender into ({worst.n_layers - 1}, 1) via qkv", 15.0,
             lambda: patch(worst, "path", receiver=(worst.n_layers - 1, 1)))):
        if wanted(row):
            wall, cpu = timed(fn, args.repeat)
            _row(row, f"{w}, {what}", wall, cpu, target)
    for name, pair in READY.items() if wanted("P6") else ():
        loaded = encoder if pair.kind == "encoder" else decoder
        c = flip if name == "flip" else ioi if name == "ioi" else prepare(loaded, pair)
        est = preview(c)
        for g in ("residual", "heads"):
            agree = compare(patch(c, g), est)
            print(f"P6 {name} {g}: clean {c.clean:+.3f}, corrupted {c.corrupted:+.3f}, Pearson {agree.pearson:.3f}, "
                  f"Spearman {agree.spearman:.3f}", flush=True)


if __name__ == "__main__":
    main()
