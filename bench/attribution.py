"""Benchmark rows for "Which words mattered?": all six scores, the agreement and the faithfulness rows for one
prediction on each embedded model.

    .venv/bin/python bench/attribution.py [--repeat 3] [--smoke]

Prints one line per row: median wall time and median process CPU time (all threads of this process; on a shared
machine other work inflates wall time, not this process's CPU time), the seconds of each part, and integrated
gradients' completeness gap. Rows:
  A1 SmolLM2-135M-Instruct, the antecedent prompt (21 tokens), 32 IG steps     target ≤ 10 s
  A2 all-MiniLM-L6-v2, the same sentence (16 tokens), 32 IG steps              target ≤ 3 s
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

TEXT = "The animal didn't cross the street because it was too tired."


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="A2 once with 4 IG steps (CI: that it still runs)")
    args = parser.parse_args(argv)
    import torch

    from explorer.attribution.explain import explain
    from explorer.model.loading import load_model
    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    rows = (("A1", EMBEDDED_DECODER, 10.0), ("A2", EMBEDDED_ENCODER, 3.0))
    steps = {"steps": 4} if args.smoke else {}
    if args.smoke:
        args.repeat, rows = 1, rows[1:]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    for row, name, target in rows:
        loaded = load_model(name, device="cpu")
        explain(loaded, TEXT, **steps)                          # warm-up (imports Captum)
        walls, cpus, last = [], [], None
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            last = explain(loaded, TEXT, **steps)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        parts = ", ".join(f"{k} {v:.2f}" for k, v in last.seconds.items())
        print(f"{row} {name} {last.n_tokens} tokens: wall {wall:.2f} s, cpu {cpu:.2f} s (target ≤ {target:.0f} s: "
              f"{'met' if wall <= target else 'wall MISSED'}{'' if cpu <= target else ', cpu MISSED'}); parts (s, "
              f"last run): {parts}; IG gap {last.ig.delta:+.3f} = {last.ig.relative_gap:.1%} of "
              f"f(x) − f(b) = {last.ig.f_input - last.ig.f_baseline:+.3f}; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
