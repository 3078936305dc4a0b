"""Training runs shared by a whole server: one run per config, trained once, in a child process of its own.

A class of thirty pressing Train with the same settings gets one run (:meth:`Trainer.start` returns the same
:class:`TrainingJob` for an equal config); different settings wait in a bounded queue, one run training at a time, and
past ``waiting`` queued runs :meth:`Trainer.start` refuses in one sentence (:class:`Busy`) instead of letting the
server fall behind. The run trains in a child process (:mod:`explorer.jobs.training_child`) at a lower priority
with one thread: the server's own interpreter, which every student's page needs, never waits on it, and a student
leaving the page does not stop it. The child sends each checkpoint as it is recorded; the job's :attr:`TrainingJob.run`
grows while pages read it. A child that has not finished ``deadline_s`` after its config (the run's own cap plus a
margin) is killed, its run ends with one sentence and the queue moves on. While a run waits behind the one training,
its child is started (importing torch takes seconds the run then does not wait for); when nothing waits, no child
is left running. A server restart loses the runs that were training (never the shipped ones,
:mod:`explorer.learning.runs`).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Sequence

from explorer.jobs.training_child import COMMAND, NOT_A_RUN, Child, Stopped, log
from explorer.learning.config import MAX_SECONDS, TrainConfig, check
from explorer.learning.train import Run
from explorer.serving import cache, regions
from explorer.serving.cache import ByteLRU
from explorer.words.i18n import Later, ngettext
from explorer.words.numbers import integer

MARGIN_S = 60.0   # beyond a run's own cap (MAX_SECONDS): the child's start (torch imported at low priority), its end


class Busy(RuntimeError):
    """The queue is full: ``str()`` is one sentence in the reader's language."""

    def __init__(self, waiting: int):
        super().__init__(waiting)
        self.waiting = waiting

    def __str__(self) -> str:   # in the language of whoever reads it
        return ngettext("The server is already training {n} other run: pick a ready-made run, or press Train again in "
                        "a minute.", "The server is already training {n} other runs: pick a ready-made run, or press "
                        "Train again in a minute.", self.waiting).format(n=integer(self.waiting))


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

    @property
    def nbytes(self) -> int:
        """Its run's bytes (checkpoints, snapshots): what keeping it costs (its trainer is not its own)."""
        return cache.nbytes(self.run)

    def fraction(self) -> float:
        if self.done.is_set():
            return 1.0
        return self.run.checkpoints[-1].step / self.config.steps if self.run.checkpoints else 0.0


TAG = "training"   # its finished runs' keys in the ``work`` region: (TAG, config key); keepers.py's row


class Trainer:
    """The server's training queue: ``waiting`` runs may wait behind the one training. It holds a run only while the
    run is queued or training; an ended run (finished, or failed: its pages say why) goes to ``store`` (the ``work``
    region's, under ``(TAG, config key)``; a test's trainer: a store of ``keep`` runs of its own) and is asked for
    there. ``child`` is the child's command line, ``deadline_s`` how long a run's child may take from its config to
    its last message (the run's own cap plus a margin)."""

    def __init__(self, waiting: int = 3, keep: int = 8, child: Sequence[str] = COMMAND,
                 deadline_s: float = MAX_SECONDS + MARGIN_S, store: ByteLRU | None = None):
        self.waiting = waiting
        self.store = store if store is not None else regions.unlisted("work", keep)
        self.child, self.deadline_s = list(child), deadline_s
        self._jobs: dict[tuple, TrainingJob] = {}   # queued or training
        self._queue: deque[TrainingJob] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._worker: threading.Thread | None = None
        self._spare: Child | None = None   # started while a run waits, so that it need not wait for torch's import

    def peek(self, cfg: TrainConfig) -> TrainingJob | None:
        """The job of ``cfg`` if this server holds one: queued or training here, finished or failed (``error``) in
        the region."""
        with self._lock:
            return self._jobs.get(cfg.key()) or self.store.peek((TAG, cfg.key()))

    def start(self, cfg: TrainConfig) -> TrainingJob:
        """The job for ``cfg``: the queued, training or finished one if there is one, else (also after a failed one) a
        new one queued."""
        check(cfg)
        with self._lock:
            job = self._jobs.get(cfg.key()) or self.store.peek((TAG, cfg.key()))
            if job is not None and job.error is None:
                return job
            if len(self._queue) >= self.waiting:
                raise Busy(len(self._queue))
            job = self._jobs[cfg.key()] = TrainingJob(cfg, self)
            self._queue.append(job)
            if self._worker is None:
                self._worker = threading.Thread(target=self._serve, name="trainer", daemon=True)
                self._worker.start()
            self._start_spare()
            self._wake.notify()
        return job

    @property
    def spare(self) -> Child | None:
        """The child started for a waiting run, if there is one (none while nothing waits)."""
        with self._lock:
            return self._spare

    def counts(self) -> dict[str, int]:
        """How many runs it holds (queued or training: ``running``), how many ended runs its region holds
        (``finished``) and their bytes."""
        with self._lock:
            running = len(self._jobs)
        ended = [n for key, n in self.store.sizes() if isinstance(key, tuple) and key[:1] == (TAG,)]
        return {"running": running, "finished": len(ended), "bytes": sum(ended)}

    def ahead_of(self, job: TrainingJob) -> int:
        with self._lock:
            return list(self._queue).index(job) if job in self._queue else 0

    def take_child(self) -> Child:
        """A child for the run about to train: the spare one if it is alive, else a new one; a new spare if another
        run waits behind this one."""
        with self._lock:
            child, self._spare = self._spare, None
            self._start_spare()
        if child is not None and child.process.poll() is None:
            return child
        if child is not None:
            child.end()
        return Child(self.child)

    def _start_spare(self) -> None:
        """Under the lock: a spare child started when a run waits behind the one training and there is none."""
        if len(self._queue) > 1 and self._spare is None:
            try:
                self._spare = Child(self.child)
            except OSError as error:   # the run starts its own child then, and says why if it cannot
                log.warning("no spare training child: %s", error)

    def _serve(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._wake.wait()
                job = self._queue[0]
            try:
                train_in_child(job, self)
            except BaseException as error:   # noqa: BLE001 - kept for the pages; the next request tries again
                job.error = error
                log.warning("training run %s failed: %s", job.config, error)
            finally:
                job.finished_at = time.time()
                size = job.nbytes   # measured outside the locks
                with self._lock:
                    self._queue.popleft()   # a failed job is kept too, for its pages to say why; Train starts anew
                    self.store.put((TAG, job.config.key()), job, size)   # the region keeps it from now on
                    if self._jobs.get(job.config.key()) is job:
                        del self._jobs[job.config.key()]
                    idle, spare = not self._queue, self._spare
                    if idle:
                        self._spare = None
                    job.done.set()
                if idle and spare is not None:   # nothing waits: no child sits idle for the server's life
                    spare.end()


def train_in_child(job: TrainingJob, trainer: Trainer) -> None:
    """Train ``job.config`` in a child process, appending each checkpoint to ``job.run`` as it arrives; a child that
    does not finish within ``trainer.deadline_s`` is killed (:class:`Stopped`)."""
    child = trainer.take_child()
    deadline = time.monotonic() + trainer.deadline_s
    try:
        child.send_config(job.config)
        while True:
            kind, part = child.next(deadline)
            if part.config != job.config:
                raise Stopped(Later(NOT_A_RUN))
            if kind == "checkpoint":
                if job.run.probe_tokens is None:
                    job.run.probe_tokens = part.probe_tokens
                job.run.checkpoints.extend(part.checkpoints)
            else:   # "end"
                job.run.snapshots = part.snapshots
                job.run.stopped, job.run.seconds = part.stopped, part.seconds
                return
    finally:
        child.end()


_TRAINER: Trainer | None = None
_TRAINER_LOCK = threading.Lock()


def started() -> Trainer | None:
    """The server's trainer if a run was ever asked for, else None (starts nothing)."""
    with _TRAINER_LOCK:
        return _TRAINER


def trainer() -> Trainer:
    """The server's one trainer; its ended runs are kept by the ``work`` region (keepers.py's ``training`` row)."""
    global _TRAINER
    with _TRAINER_LOCK:
        if _TRAINER is None:
            _TRAINER = Trainer(store=regions.store("work"))
        return _TRAINER

