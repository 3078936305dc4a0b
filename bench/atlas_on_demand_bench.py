"""The on-demand atlas pass (``explorer.atlas.on_demand.atlas_for``, what the Head atlas page runs in its shared job
for a model with no stored atlas) timed on a local model as if it had none: its bounds (20,000 tokens, 120 s),
wall and CPU time, how often it reported progress.

    .venv/bin/python bench/atlas_on_demand_bench.py [--model all-MiniLM-L6-v2] [--tokens 20000]
    .venv/bin/python bench/atlas_on_demand_bench.py --smoke    # 300 tokens of the encoder (CI: that it still runs)

No hub model is reachable here, so the row measures an embedded one: the same code path, another model's weights.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="all-MiniLM-L6-v2")
    p.add_argument("--tokens", type=int, default=None, help="token bound (default: the pass's own, 20,000)")
    p.add_argument("--smoke", action="store_true", help="300 tokens only")
    args = p.parse_args(argv)
    if args.smoke:
        args.tokens = 300
    from explorer.atlas import on_demand
    from explorer.model.loading import load_model

    loaded = load_model(args.model)
    reports = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    atlas = on_demand.atlas_for(loaded, lambda share, text: reports.append((time.perf_counter() - wall0, share)),
                                max_tokens=args.tokens)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(f"H5 {args.model}: {atlas.n_tokens:,} tokens in {atlas.n_windows} windows, wall {wall:.1f} s, "
          f"CPU {cpu:.1f} s, {len(reports)} progress reports (largest gap "
          f"{max((b[0] - a[0] for a, b in zip(reports, reports[1:])), default=0):.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
