"""A run saved and read back, and the ready-made runs shipped with the app (``assets/runs/*.npz``), so a class on a
slow server can scrub at once. A saved run keeps every checkpoint and the weights at the first step, around the phase
change and at the end; its config is stored beside the arrays, so a file names the run it holds.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from explorer.learning.config import TrainConfig, check
from explorer.learning.train import Checkpoint, Run

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "assets" / "runs"
# the ready-made runs: name -> the config each was trained with (tools/ship_runs.py writes them)
SHIPPED = {
    "two-layers": TrainConfig(),
    "one-layer": TrainConfig(n_layers=1),
    "no-repeat": TrainConfig(task="no-repeat"),
}
FIELDS = ("loss", "loss_first", "loss_second", "previous", "prefix", "probe")


def kept_snapshots(run: Run) -> list[int]:
    """The steps whose weights a saved run keeps: the first, the last kept before the phase change, the first at or
    after it, and the last (all that were kept, if there is no phase change)."""
    steps = sorted(run.snapshots)
    change = run.phase_change()
    if change is None:
        return steps
    before = [s for s in steps if s < change]
    after = [s for s in steps if s >= change]
    return sorted({steps[0], steps[-1], *(before[-1:]), *(after[:1])})


def save(run: Run, path: Path) -> None:
    arrays = {"steps": run.steps, "probe_tokens": run.probe_tokens}
    for name in FIELDS:
        arrays[name] = run.series(name)
    kept = kept_snapshots(run)
    for step in kept:
        for name, value in run.snapshots[step].items():
            arrays[f"w{step}/{name}"] = value
    meta = {"config": run.config.__dict__, "stopped": run.stopped, "seconds": run.seconds, "snapshots": kept}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(path, **arrays)


def load(path: Path) -> Run:
    with np.load(path) as f:
        meta = json.loads(bytes(f["meta"]).decode())
        cfg = check(TrainConfig(**meta["config"]))
        run = Run(cfg, probe_tokens=f["probe_tokens"], stopped=meta["stopped"], seconds=float(meta["seconds"]))
        series = {name: f[name] for name in FIELDS}
        for i, step in enumerate(f["steps"]):
            run.checkpoints.append(Checkpoint(int(step), **{name: (series[name][i] if series[name].ndim > 1
                                                                 else float(series[name][i])) for name in FIELDS}))
        for step in meta["snapshots"]:
            prefix = f"w{step}/"
            run.snapshots[int(step)] = {k[len(prefix):]: f[k] for k in f.files if k.startswith(prefix)}
    return run


def shipped(name: str) -> Run:
    """A ready-made run by name (one of ``SHIPPED``)."""
    return load(SHIPPED_DIR / f"{name}.npz")


def shipped_for(cfg: TrainConfig) -> str | None:
    """The name of the ready-made run trained with ``cfg``, if there is one."""
    return next((name for name, shipped_cfg in SHIPPED.items() if shipped_cfg == cfg), None)


def same_run(a: Run, b: Run) -> bool:
    """Whether two runs recorded the same numbers at the same steps (a live run against its shipped copy)."""
    if len(a.checkpoints) != len(b.checkpoints):
        return False
    return all(x.step == y.step and all(np.array_equal(np.asarray(getattr(x, n)), np.asarray(getattr(y, n)))
                                        for n in FIELDS) for x, y in zip(a.checkpoints, b.checkpoints))
