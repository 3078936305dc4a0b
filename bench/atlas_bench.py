"""Benchmark rows for the head atlas (issue 56), from the stored atlas, without a browser.

    .venv/bin/python bench/atlas_bench.py [--repeat 5]
    .venv/bin/python bench/atlas_bench.py --smoke    # once (CI: that it still runs)

Rows (median wall and CPU time of the page's script run in AppTest, the load average printed beside them):
  H1 the atlas page's first draw for a model: the stored atlas read and checked (its memo emptied first), the
     scatter of every head, the default head's card and the class question                target ≤ 1 s
  H2 a head's card: the page run again with another head picked (the atlas already read)   target ≤ 300 ms
  H3 the stored data, both models (assets/atlas/)                                          target ≤ 10 MB
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def page_times(model: str, repeat: int) -> tuple[float, float, float, float]:
    """(H1, H2) medians in seconds of wall time, then of this process's CPU time, for ``model``."""
    from streamlit.testing.v1 import AppTest

    from explorer.ui.views import atlas as view

    first, card, first_cpu, card_cpu = [], [], [], []
    for i in range(repeat):
        view.stored.memo.clear()
        at = AppTest.from_file(str(ROOT / "pages" / "atlas.py"), default_timeout=120)
        at.query_params.update({"model": model, "layer": "0", "head": "0"})
        start, cpu = time.perf_counter(), time.process_time()
        at.run()
        first.append(time.perf_counter() - start)
        first_cpu.append(time.process_time() - cpu)
        assert not at.exception, at.exception
        at.session_state["head"] = 1 + i % 5
        start, cpu = time.perf_counter(), time.process_time()
        at.run()
        card.append(time.perf_counter() - start)
        card_cpu.append(time.process_time() - cpu)
        assert not at.exception, at.exception
    return tuple(statistics.median(v) for v in (first, card, first_cpu, card_cpu))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one repetition (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat = 1
    from explorer.atlas import shipped
    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    page_times(EMBEDDED_ENCODER, 1)   # a warm-up: Streamlit's and plotly's imports, the page compiled
    for model in (EMBEDDED_ENCODER, EMBEDDED_DECODER):
        h1, h2, c1, c2 = page_times(model, args.repeat)
        print(f"H1 {model}: atlas page first draw {h1 * 1000:.0f} ms wall, {c1 * 1000:.0f} ms CPU (target ≤ 1000 ms: "
              f"{'yes' if h1 <= 1 else 'no'}); load average {os.getloadavg()[0]:.1f}")
        print(f"H2 {model}: a head's card {h2 * 1000:.0f} ms wall, {c2 * 1000:.0f} ms CPU (target ≤ 300 ms: "
              f"{'yes' if h2 <= 0.3 else 'no'})")
    size = sum(p.stat().st_size for p in shipped.FOLDER.iterdir())
    met = "yes" if size <= 10 * 2**20 else "no"
    print(f"H3 stored data, both models: {size / 2**20:.2f} MB (target ≤ 10 MB: {met})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
