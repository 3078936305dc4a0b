"""Train the ready-made runs (explorer.learning.runs.SHIPPED) the way a server trains them, and write them to
assets/runs/: one child process each, one thread (explorer.jobs.training), so a live run of the same config and seed
on the same machine reproduces the shipped one bit for bit.

    .venv/bin/python tools/ship_runs.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.jobs.training import Trainer  # noqa: E402
from explorer.learning import runs  # noqa: E402


def main() -> None:
    runs.SHIPPED_DIR.mkdir(parents=True, exist_ok=True)
    trainer = Trainer(waiting=len(runs.SHIPPED))
    jobs = {name: trainer.start(cfg) for name, cfg in runs.SHIPPED.items()}
    for name, job in jobs.items():
        job.done.wait()
        if job.error is not None:
            raise SystemExit(f"{name}: {job.error}")
        path = runs.SHIPPED_DIR / f"{name}.npz"
        runs.save(job.run, path)
        print(f"{name}: phase change at {job.run.phase_change()}, {job.run.seconds:.1f} s, "
              f"{path.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
