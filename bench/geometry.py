"""Benchmark rows for head geometry: the corpus pass, one head's PCA and t-SNE maps, and the bytes of a map.

    .venv/bin/python bench/geometry.py [--repeat 3] [--models all-MiniLM-L6-v2,SmolLM2-135M-Instruct] [--smoke]

Prints one line per row: wall time and process CPU time (all threads of this process; on a shared machine other
work inflates wall time, not this process's CPU time), with the target. Rows:
  G1/G2 corpus pass (200 sentences), encoder / decoder             target ≤ 15 s / ≤ 60 s
  G3 one head's PCA map after the pass (alignment + check + PCA)  target ≤ 300 ms
  G4 one head's t-SNE map (scikit-learn, 1,500 tokens = 3,000 points)  target ≤ 5 s
  G5 bytes of one head's map as Streamlit sends it (plotly JSON), and of the page's other figures  target ≤ 300 kB
  G6 the student's text on a map: one forward pass of a short text through the capture + placing it on a PCA map
     (no target yet), and the bytes of the map with it (a short text and a 512-token one)      target ≤ 300 kB
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from bench.stats import timed  # noqa: E402


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "MISSED"


SHORT = "The trophy didn't fit in the suitcase because it was too big, so she packed a smaller one."


def overlay_rows(name: str, loaded, run, layer: int, head: int, repeat: int) -> None:
    """G6: the student's text on one head's PCA map (``geometry.overlay``)."""
    import plotly.io

    from explorer.geometry import maps, overlay
    from explorer.plots import geometry as plots
    hm = maps.head_map(run, layer, head, "pca")
    box = {}
    wall, cpu = timed(lambda: box.update(xy=overlay.place(overlay.text_pass(loaded, SHORT).run, hm)),
                      repeat * 3, warm=True)
    t = len(box["xy"]) // 2
    print(f"G6 {name} your text on a PCA map ({t} tokens: forward pass + placing): wall {wall * 1e3:.0f} ms, cpu "
          f"{cpu * 1e3:.0f} ms; load {os.getloadavg()[0]:.1f}", flush=True)
    hover = [maps.context(run, i) for i in range(run.n_points)]
    for label, text in (("short", SHORT), ("512-token", " ".join([SHORT] * 40))):
        typed = overlay.text_pass(loaded, text).run
        xy = overlay.drawn(overlay.place(typed, hm))
        mine = (xy, [maps.context(typed, i) for i in range(len(xy) // 2)])
        fig = plots.joint_map(hm.xy, run.position, run.token_ids, hover, colour="position", title="t", text=mine)
        size = len(plotly.io.to_json(fig, validate=False).encode())
        print(f"G6 {name} one head's PCA map with a {label} text ({typed.n_points} tokens, {len(xy) // 2} drawn): "
              f"{size / 1e3:.0f} kB "
              f"(target ≤ 300 kB: {verdict(size, 300e3)})", flush=True)


def one_model(name: str, repeat: int, only_overlay: bool = False, sentences: int | None = None) -> None:
    import numpy as np
    import plotly.io

    from explorer.geometry import maps
    from explorer.geometry.corpus_pass import SENTENCES, run_pass
    from explorer.model.loading import load_model
    from explorer.plots import geometry as plots
    loaded = load_model(name, device="cpu")
    target = 15.0 if loaded.kind == "encoder" else 60.0
    box = {}
    wall, cpu = timed(lambda: box.update(run=run_pass(loaded, SENTENCES[:sentences])))
    run = box["run"]
    print(f"G1/G2 {name} corpus pass: {run.n_points} tokens, {run.nbytes / 2**20:.0f} MB float16, wall "
          f"{wall:.2f} s, cpu {cpu:.2f} s (target ≤ {target:.0f} s: wall {verdict(wall, target)}, cpu "
          f"{verdict(cpu, target)}); fidelity {run.fidelity:.1e}; load {os.getloadavg()[0]:.1f}", flush=True)
    layer, head = np.unravel_index(int(run.previous.argmax()), run.previous.shape)
    overlay_rows(name, loaded, run, int(layer), int(head), repeat)
    if only_overlay:
        return
    wall, cpu = timed(lambda: maps.head_map(run, int(layer), int(head), "pca"), repeat * 3, warm=True)
    print(f"G3 {name} PCA map L{layer}H{head}: wall {wall * 1e3:.0f} ms, cpu {cpu * 1e3:.0f} ms "
          f"(target ≤ 300 ms: wall {verdict(wall, 0.3)}, cpu {verdict(cpu, 0.3)})", flush=True)
    points = 2 * len(maps.evenly(run.n_points, maps.TSNE_TOKENS))
    wall, cpu = timed(lambda: maps.head_map(run, int(layer), int(head), "tsne"), repeat)
    print(f"G4 {name} t-SNE map (scikit-learn, {points} points): wall {wall:.2f} s, cpu {cpu:.2f} s "
          f"(target ≤ 5 s: wall {verdict(wall, 5)}, cpu {verdict(cpu, 5)}); load {os.getloadavg()[0]:.1f}",
          flush=True)
    hm = maps.head_map(run, int(layer), int(head), "pca")
    hover = [maps.context(run, i) for i in range(run.n_points)]
    top = maps.top_keys(run, int(layer), int(head), 5)
    for colour in plots.COLOURS:
        fig = plots.joint_map(hm.xy, run.position, run.token_ids, hover, colour=colour, chosen=5,
                              top=[(k, w, run.tokens[k]) for k, w in top], title="t")
        size = len(plotly.io.to_json(fig, validate=False).encode())
        print(f"G5 {name} one head's PCA map, colour by {colour}, a query clicked: {size / 1e3:.0f} kB "
              f"(target ≤ 300 kB: {verdict(size, 300e3)})", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default="all-MiniLM-L6-v2,SmolLM2-135M-Instruct")
    parser.add_argument("--overlay-only", action="store_true", help="the corpus pass and G6 only")
    parser.add_argument("--sentences", type=int, help="the corpus's first N sentences only (default: all 200)")
    parser.add_argument("--smoke", action="store_true",
                        help="every row once on the encoder and 12 sentences (CI: that they still run)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat, args.models, args.sentences = 1, "all-MiniLM-L6-v2", 12
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    for name in args.models.split(","):
        one_model(name, args.repeat, args.overlay_only, args.sentences)


if __name__ == "__main__":
    main()
