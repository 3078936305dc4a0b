"""A run saved and read back, and the ready-made runs shipped with the app (``assets/runs/*.npz``), so a class on a
slow server can scrub at once. A saved run keeps every checkpoint and the weights at the first step, around the phase
change and at the end; its config is stored beside the arrays, so a file names the run it holds. The same format
(:func:`to_arrays`, :func:`from_arrays`) carries a live run from the training child to the server, a part at a time.
"""
from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict
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


def to_arrays(run: Run, snapshots: Iterable[int] = ()) -> dict[str, np.ndarray]:
    """A run, or the part of one recorded so far, as named arrays: the one format of a run. A file holds it
    (:func:`save`), and the training child sends a run in it, a part at a time (:mod:`explorer.jobs.training_child`).
    Its checkpoints as series over the steps (``steps``, ``loss`` … ``probe``; none for a part without checkpoints),
    ``probe_tokens``, the weights at each step of ``snapshots`` (``w{step}/{name}``) and ``meta``: the config, how it
    ended and which steps' weights it holds, as UTF-8 JSON bytes."""
    kept = [int(step) for step in snapshots]
    meta = {"config": asdict(run.config), "stopped": run.stopped, "seconds": run.seconds, "snapshots": kept}
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
    if run.probe_tokens is not None:
        arrays["probe_tokens"] = np.asarray(run.probe_tokens)
    if run.checkpoints:
        arrays["steps"] = run.steps
        arrays.update({name: run.series(name) for name in FIELDS})
    for step in kept:
        arrays.update({f"w{step}/{name}": value for name, value in run.snapshots[step].items()})
    return arrays


def from_arrays(arrays: Mapping[str, np.ndarray]) -> Run:
    """The run (or part) :func:`to_arrays` made, its config checked; ``arrays`` may be an open npz file."""
    meta = json.loads(bytes(arrays["meta"]).decode())
    cfg = check(TrainConfig(**meta["config"]))
    run = Run(cfg, probe_tokens=arrays["probe_tokens"] if "probe_tokens" in arrays else None,
              stopped=meta["stopped"], seconds=float(meta["seconds"]))
    if "steps" in arrays:
        series = {name: arrays[name] for name in FIELDS}
        for i, step in enumerate(arrays["steps"]):
            run.checkpoints.append(Checkpoint(int(step), **{name: (series[name][i] if series[name].ndim > 1
                                                                 else float(series[name][i])) for name in FIELDS}))
    for step in meta["snapshots"]:
        prefix = f"w{step}/"
        run.snapshots[int(step)] = {k[len(prefix):]: arrays[k] for k in arrays if k.startswith(prefix)}
    return run


def save(run: Run, path: Path) -> None:
    """``run`` as a compressed npz file, with the weights of :func:`kept_snapshots`."""
    np.savez_compressed(path, **to_arrays(run, kept_snapshots(run)))


def load(path: Path) -> Run:
    with np.load(path, allow_pickle=False) as f:
        return from_arrays(f)


def dumps(run: Run, snapshots: Iterable[int] = ()) -> bytes:
    """``run`` (or a part) in the file's format, as bytes (uncompressed): what the training child sends."""
    out = io.BytesIO()
    np.savez(out, **to_arrays(run, snapshots))
    return out.getvalue()


def loads(blob: bytes) -> Run:
    """The run (or part) :func:`dumps` wrote; ValueError (or a subclass) for bytes that are not one. No pickles: nothing
    read can run code."""
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as f:
            return from_arrays(f)
    except (OSError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"not a run: {error}") from error


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
