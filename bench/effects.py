"""Benchmark rows for what heads do: knockout sweeps and value-weighted extraction on the embedded models.

    .venv/bin/python bench/effects.py [--repeat 3] [--models encoder,decoder] [--smoke]

Prints one line per row: median wall time and median process CPU time (all threads of this process; on a shared
machine other work inflates wall time, not this process's CPU time), with the target. Rows:
  S1 encoder sweep (all-MiniLM-L6-v2, 72 heads × 2 texts, zero ablation)         target ≤ 3 s
  S2 decoder sweep (SmolLM2-135M-Instruct, 270 heads × 2 texts, zero ablation)   target ≤ 30 s
  V1/V2 value-weighted extraction ÷ plain extract(), same text, each model       target ≤ 1.3×
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

A = "The animal didn't cross the street because it was too tired."
B = "The animal didn't cross the street because it was too wide."


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default="encoder,decoder", help="encoder (S1, V1), decoder (S2, V2) or both")
    parser.add_argument("--smoke", action="store_true", help="the encoder's rows once (CI: that they still run)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat, args.models = 1, "encoder"
    import torch

    from bench.stats import timed
    from explorer.attention.result import extract
    from explorer.heads_do import knockout, values
    from explorer.model.loading import load_model
    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    rows = [("S1", EMBEDDED_ENCODER, 3.0), ("S2", EMBEDDED_DECODER, 30.0)]
    for (row, name, target), vrow in zip(rows, ("V1", "V2")):
        if ("encoder" if name == EMBEDDED_ENCODER else "decoder") not in args.models.split(","):
            continue
        loaded = load_model(name, device="cpu")
        repeat = args.repeat if loaded.kind == "encoder" else max(1, args.repeat // 2)
        wall, cpu = timed(lambda m=loaded: knockout.sweep(m, A, B), repeat, warm=True)
        print(f"{row} {name} sweep: wall {wall:.2f} s, cpu {cpu:.2f} s (target ≤ {target:.0f} s: "
              f"{'met' if wall <= target else 'wall MISSED'}{'' if cpu <= target else ', cpu MISSED'})", flush=True)
        plain = timed(lambda m=loaded: extract(m, A), args.repeat * 3, warm=True)
        weighted = timed(lambda m=loaded: values.value_weighted(m, A), args.repeat * 3, warm=True)
        ratio = weighted[0] / plain[0]
        print(f"{vrow} {name} value-weighted {weighted[0] * 1e3:.0f} ms vs extract {plain[0] * 1e3:.0f} ms: "
              f"{ratio:.2f}× wall, {weighted[1] / plain[1]:.2f}× cpu (target ≤ 1.3×: "
              f"{'met' if ratio <= 1.3 else 'MISSED'})", flush=True)


if __name__ == "__main__":
    main()
