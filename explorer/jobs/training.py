"""Training runs shared by a whole server: one run per config, trained once, in a child process of its own.

A class of thirty pressing Train with the same settings gets one run (:meth:`Trainer.start` returns the same
:class:`TrainingJob` for an equal config); different settings wait in a bounded queue, one run training at a time, and
past ``waiting`` queued runs :meth:`Trainer.start` refuses in one sentence (:class:`Busy`) instead of letting the
server fall behind. The run trains in a child process (``python -m explorer.jobs.training``) at a lower priority
with one thread: the server's own interpreter, which every student's page needs, never waits on it, and a student
leaving the page does not stop it. The child sends each checkpoint as it is recorded; the job's :attr:`TrainingJob.run`
grows while pages read it. A server restart loses the runs that were training (never the shipped ones,
:mod:`explorer.learning.runs`).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import asdict
from pathlib import Path

import numpy as np

from explorer.learning.config import TrainConfig, check
from explorer.learning.train import Checkpoint, Run
from explorer.words.i18n import ngettext

ROOT = Path(__file__).resolve().parents[2]
NICE = 10   # the child's priority below the server's (os.nice)


class Busy(RuntimeError):
    """The queue is full: ``str()`` is one sentence in the reader's language."""

    def __init__(self, waiting: int):
        super().__init__(waiting)
        self.waiting = waiting

    def __str__(self) -> str:   # in the language of whoever reads it
        return ngettext("The server is already training {n} other run: pick a ready-made run, or press Train again in "
                        "a minute.", "The server is already training {n} other runs: pick a ready-made run, or press "
                        "Train again in a minute.", self.waiting).format(n=self.waiting)


class TrainingJob:
    """One config's run: queued, training (``run`` grows checkpoint by checkpoint) or done (``error`` if it broke)."""

    def __init__(self, cfg: TrainConfig, trainer: "Trainer"):
        self.config = cfg
        self.run = Run(cfg, probe_tokens=None)
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.finished_at: float | None = None   # time.time() when it ended (a playback says when it was trained)
        self._trainer = trainer

    def ahead(self) -> int:
        """How many runs will train before this one starts (0 once it trains)."""
        return self._trainer.ahead_of(self)

    def fraction(self) -> float:
        if self.done.is_set():
            return 1.0
        return self.run.checkpoints[-1].step / self.config.steps if self.run.checkpoints else 0.0


class Trainer:
    """The server's training queue: ``waiting`` runs may wait behind the one training; the last ``keep`` finished
    runs stay, the least recently asked for dropped first."""

    def __init__(self, waiting: int = 3, keep: int = 8):
        self.waiting, self.keep = waiting, keep
        self._jobs: OrderedDict[tuple, TrainingJob] = OrderedDict()
        self._queue: deque[TrainingJob] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._worker: threading.Thread | None = None

    def peek(self, cfg: TrainConfig) -> TrainingJob | None:
        with self._lock:
            return self._jobs.get(cfg.key())

    def start(self, cfg: TrainConfig) -> TrainingJob:
        """The job for ``cfg``: the queued, training or finished one if there is one, else a new one queued."""
        check(cfg)
        with self._lock:
            job = self._jobs.get(cfg.key())
            if job is not None and job.error is None:
                self._jobs.move_to_end(cfg.key())
                return job
            if len(self._queue) >= self.waiting:
                raise Busy(len(self._queue))
            job = self._jobs[cfg.key()] = TrainingJob(cfg, self)
            self._queue.append(job)
            finished = [k for k, j in self._jobs.items() if j.done.is_set()]
            while len(self._jobs) > self.keep and finished:
                del self._jobs[finished.pop(0)]
            if self._worker is None:
                self._worker = threading.Thread(target=self._serve, name="trainer", daemon=True)
                self._worker.start()
            self._wake.notify()
        return job

    def ahead_of(self, job: TrainingJob) -> int:
        with self._lock:
            return list(self._queue).index(job) if job in self._queue else 0

    def _serve(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._wake.wait()
                job = self._queue[0]
            try:
                train_in_child(job)
            except BaseException as error:   # noqa: BLE001 - kept for the pages; the next request tries again
                job.error = error
            finally:
                with self._lock:
                    self._queue.popleft()
                    if job.error is not None:
                        self._jobs.pop(job.config.key(), None)
                job.finished_at = time.time()
                job.done.set()


_spare: subprocess.Popen | None = None   # a child already started, waiting for its config (torch imported)
_spare_lock = threading.Lock()


def _new_child() -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "explorer.jobs.training"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)


def _take_child() -> subprocess.Popen:
    """A child ready to train (the spare one, if it is alive), and a new spare started for the next run: starting a
    Python with torch takes seconds, which the next run then does not wait for."""
    global _spare
    with _spare_lock:
        child = _spare if _spare is not None and _spare.poll() is None else _new_child()
        _spare = _new_child()
    return child


def send(out, kind: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """One message on the child's pipe: a JSON line (its kind, plain values, the names of its arrays), then each
    array in numpy's own format. No pickles: nothing read from the pipe can run code."""
    blobs = []
    for value in arrays.values():
        blob = io.BytesIO()
        np.save(blob, np.ascontiguousarray(value), allow_pickle=False)
        blobs.append(blob.getvalue())
    head = {"kind": kind, "meta": meta, "arrays": list(arrays), "sizes": [len(b) for b in blobs]}
    out.write(json.dumps(head).encode() + b"\n" + b"".join(blobs))
    out.flush()


def receive(source) -> tuple[str, dict, dict[str, np.ndarray]]:
    line = source.readline()
    if not line:
        raise EOFError
    head = json.loads(line)
    arrays = {}
    for name, size in zip(head["arrays"], head["sizes"]):
        arrays[name] = np.load(io.BytesIO(source.read(size)), allow_pickle=False)
    return head["kind"], head["meta"], arrays


def train_in_child(job: TrainingJob) -> None:
    """Train ``job.config`` in a child process, appending each checkpoint to ``job.run`` as it arrives."""
    child = _take_child()
    try:
        child.stdin.write(json.dumps(asdict(job.config)).encode() + b"\n")
        child.stdin.close()
        while True:
            try:
                kind, meta, arrays = receive(child.stdout)
            except EOFError:
                raise RuntimeError("the training process ended without its run") from None
            if kind == "checkpoint":
                if job.run.probe_tokens is None:
                    job.run.probe_tokens = arrays.pop("probe_tokens")
                job.run.checkpoints.append(Checkpoint(**meta, **arrays))
            elif kind == "end":
                job.run.snapshots = {int(step): {name: arrays[f"{step}/{name}"] for name in names}
                                     for step, names in meta["snapshots"].items()}
                job.run.stopped, job.run.seconds = meta["stopped"], meta["seconds"]
                return
    finally:
        child.kill() if child.poll() is None else None
        child.wait()


def _child() -> None:
    """The child's side: read a config, train it with one thread at low priority, write what it records."""
    import torch

    from explorer.learning.train import train

    torch.set_num_threads(1)
    try:
        os.nice(NICE)
    except OSError:
        pass
    out = os.fdopen(os.dup(1), "wb")   # the messages' own channel; anything else printed goes to stderr
    os.dup2(2, 1)
    line = sys.stdin.buffer.readline()
    if not line:   # a spare child whose server ended
        return
    cfg = TrainConfig(**json.loads(line))

    def on_checkpoint(run: Run) -> None:
        c = run.checkpoints[-1]
        arrays = {"previous": c.previous, "prefix": c.prefix, "probe": c.probe}
        if len(run.checkpoints) == 1:
            arrays["probe_tokens"] = run.probe_tokens
        send(out, "checkpoint", {"step": c.step, "loss": c.loss, "loss_first": c.loss_first,
                                 "loss_second": c.loss_second}, arrays)

    run = train(cfg, on_checkpoint=on_checkpoint)
    send(out, "end", {"stopped": run.stopped, "seconds": run.seconds,
                      "snapshots": {str(step): list(w) for step, w in run.snapshots.items()}},
         {f"{step}/{name}": value for step, w in run.snapshots.items() for name, value in w.items()})


_TRAINER: Trainer | None = None
_TRAINER_LOCK = threading.Lock()


def trainer() -> Trainer:
    """The server's one trainer."""
    global _TRAINER
    with _TRAINER_LOCK:
        if _TRAINER is None:
            _TRAINER = Trainer()
        return _TRAINER


if __name__ == "__main__":
    _child()
