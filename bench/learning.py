"""Benchmark rows for "Watch heads learn" (issue 43): the class's training runs, trained the way a server trains them
(explorer.jobs.training: a niced one-thread child process per run, a spare started while a run waits).

    .venv/bin/python bench/learning.py [--seeds 10] [--smoke]
    .venv/bin/python bench/learning.py --row9 [--sessions 120]    # row 9 without, then with, a run training

Rows (printed; written into docs/benchmarks.md by hand):
  L1  default two-layer run: wall time from Train pressed to the checkpoint that shows the phase change
      (best layer-1 prefix-matching ≥ 0.5 and second-copy loss ≤ half the first's)      target ≤ 15 s, ≥ 9 of 10 seeds
  L2  one-layer control, same steps: its best prefix-matching score and second ÷ first copy loss
                                                                   target < 0.3 and ≥ 0.9, 10 of 10 seeds
  L3  knockout on the trained default: the induction heads together, their layer-0 partner alone, the least head
                                                                   target ≥ 1.5, ≥ 1.0, ≤ 0.3 nats
  L4  K-composition of the pair found by knockout: largest of all layer-0 → layer-1 pairs, ÷ the random baseline
                                                                   target largest, ≥ 3×
  L5  the induction head's OV copying score                        target ≥ 0.7
  L6  memory of one run with its checkpoints and snapshots         target ≤ 50 MB
  L9  while runs train on the server's machine, 120 browserless sessions on the heatmap page (bench/ws_load.py, one
      40 s step): p95 latency beside the same step with nothing training                 target ≤ 1 s
      (the runs train in niced one-thread child processes of this script, exactly as a server's trainer starts
      them: a child of the server or of this script competes for the same cores in the same way)
--smoke: one seed of each, a few hundred steps: checks that every row is produced (CI), not its numbers.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from explorer.jobs.training import Trainer  # noqa: E402
from explorer.learning import circuits, runs  # noqa: E402


def trained(trainer: Trainer, cfg) -> tuple[object, dict[int, float]]:
    """The finished job and, per recorded step, the seconds from start() until that checkpoint reached the server."""
    pressed = time.perf_counter()
    job, seen = trainer.start(cfg), {}
    while not job.done.wait(0.01):
        for c in job.run.checkpoints[len(seen):]:
            seen[c.step] = time.perf_counter() - pressed
    for c in job.run.checkpoints[len(seen):]:
        seen[c.step] = time.perf_counter() - pressed
    if job.error is not None:
        raise job.error
    return job, seen


def run_bytes(run) -> int:
    arrays = [np.asarray(getattr(c, n)) for c in run.checkpoints for n in ("previous", "prefix", "probe")]
    arrays += [a for weights in run.snapshots.values() for a in weights.values()]
    return sum(a.nbytes for a in arrays) + 8 * 4 * len(run.checkpoints)


def ws_step(sessions: int, seconds: float) -> list[str]:
    """One step of bench/ws_load.py on a server of its own -> the lines it printed about the step."""
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("ws_load.py")), "--start", "--steps",
                          str(sessions), "--duration", str(seconds), "--p95", "1000"],
                         capture_output=True, text=True, timeout=900)
    return [line for line in out.stdout.splitlines() if line.strip()][-6:]


def row9(sessions: int, seconds: float) -> None:
    print(f"L9  {sessions} sessions, nothing training:", *ws_step(sessions, seconds), sep="\n    ")
    stop, trainer = threading.Event(), Trainer(waiting=1)

    def keep_training() -> None:
        seed = 1000
        while not stop.is_set():
            job = trainer.start(runs.SHIPPED["two-layers"].with_(seed=seed))
            job.done.wait()
            seed += 1

    worker = threading.Thread(target=keep_training, daemon=True)
    worker.start()
    try:
        print(f"L9  {sessions} sessions, runs training all along:", *ws_step(sessions, seconds), sep="\n    ")
    finally:
        stop.set()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--row9", action="store_true", help="only row L9")
    parser.add_argument("--sessions", type=int, default=120)
    parser.add_argument("--seconds", type=float, default=40)
    args = parser.parse_args(argv)
    if args.row9:
        row9(args.sessions, args.seconds)
        return
    seeds = range(1 if args.smoke else args.seeds)
    base = runs.SHIPPED["two-layers"].with_(steps=200) if args.smoke else runs.SHIPPED["two-layers"]
    trainer = Trainer(waiting=1)
    rows: dict[str, list] = {k: [] for k in ("L1", "L2", "L3", "L4", "L5", "L6")}
    for seed in seeds:
        job, seen = trained(trainer, base.with_(seed=seed))
        run = job.run
        change = run.phase_change()
        rows["L1"].append((seed, change, seen.get(change)))
        weights, prefix = run.final_weights(), run.checkpoints[-1].prefix
        ko = circuits.knockouts(run.config, weights, prefix)
        rows["L3"].append((ko.cost(ko.together), ko.single[ko.partner], ko.single.min()))
        comp = circuits.composition(run.config, weights)
        head = ko.induction[0]
        pair = comp.k[ko.partner[1], head[1]]
        rows["L4"].append((pair == comp.k.max(), pair, comp.baseline))
        rows["L5"].append(circuits.circuits(run.config, weights, head, ko.partner).copying)
        rows["L6"].append(run_bytes(run))
        control, _ = trained(trainer, base.with_(seed=seed, n_layers=1))
        last = control.run.checkpoints[-1]
        rows["L2"].append((control.run.series("prefix").max(), last.loss_second / last.loss_first))
        print(f"seed {seed}: phase change at step {change} after {seen.get(change)} s; control prefix "
              f"{rows['L2'][-1][0]:.2f}, ratio {rows['L2'][-1][1]:.2f}", flush=True)
    within = [t for _s, c, t in rows["L1"] if c is not None and t <= 15.0]
    times = [t for _s, _c, t in rows["L1"] if t is not None]
    print(f"L1  phase change within 15 s: {len(within)} of {len(rows['L1'])} seeds; steps "
          f"{[c for _s, c, _t in rows['L1']]}; seconds median {statistics.median(times) if times else None}, "
          f"max {max(times) if times else None} (the first run starts a cold child)")
    prefixes, ratios = [p for p, _ in rows["L2"]], [r for _, r in rows["L2"]]
    print(f"L2  one-layer control: best prefix max {max(prefixes):.3f}; second/first min {min(ratios):.3f}, "
          f"median {statistics.median(ratios):.3f}; seeds with ratio ≥ 0.9: {sum(r >= 0.9 for r in ratios)}")
    together, partner, least = zip(*rows["L3"])
    print(f"L3  knockout: together min {min(together):.2f}, partner alone min {min(partner):.2f}, "
          f"least head max {max(least):.2f} nats")
    largest, pair, baseline = zip(*rows["L4"])
    print(f"L4  K-composition: pair largest in {sum(largest)} of {len(largest)}; pair {statistics.median(pair):.3f} "
          f"vs baseline {baseline[0]:.3f} (×{min(p / b for p, b in zip(pair, baseline)):.2f} at least)")
    print(f"L5  OV copying score: min {min(rows['L5']):.3f}")
    print(f"L6  memory of one run: max {max(rows['L6']) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
