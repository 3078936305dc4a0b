"""A finished run played back from its checkpoints, so that a class sees its curves grow and its phase change arrive
even when the run was trained before (by the teacher alone in the morning, by the class of the period before) or
is the ready-made one, which no server trains.

One clock per server, as the live run has (:mod:`explorer.jobs.training`): :class:`Playbacks` keeps one playback
per run config, started at one moment of the server's clock; every session showing it (the teacher's, each
follower's) reads how far it has got at that clock, so all screens show the same checkpoints. The recorded pace is
the run's own: it took ``Run.seconds`` for its last recorded step, and each checkpoint comes at its share of that
time (steps are evenly timed: the loop does the same work every step); ``speed`` plays it that many times faster.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from explorer.learning.config import TrainConfig
from explorer.learning.train import Run

SPEEDS = (1, 2, 5)     # the recorded pace, and faster
LIVE, SHIPPED = "live", "shipped"   # where a played-back run comes from: trained on this server, or ready-made


@dataclass(frozen=True)
class Playback:
    """``run`` (finished) played from ``started`` (``time.time()``) at ``speed``; ``source`` LIVE (trained on this
    server, finished at ``trained_at``) or SHIPPED (the ready-made run)."""
    run: Run
    started: float
    speed: int
    source: str
    trained_at: float | None = None

    @property
    def duration(self) -> float:
        """Seconds the playback lasts: the recorded time divided by ``speed``."""
        return float(self.run.seconds) / self.speed

    def shown(self, now: float | None = None) -> int:
        """How many checkpoints are on screen at ``now`` (the server's clock): those recorded by the share of the
        run's steps that the playback's elapsed share of its duration has reached; at least the first."""
        steps = self.run.steps
        if len(steps) == 0:
            return 0
        elapsed = (time.time() if now is None else now) - self.started
        share = min(max(elapsed / self.duration, 0.0), 1.0) if self.duration > 0 else 1.0
        reached = steps[0] + share * (steps[-1] - steps[0])
        return max(int(np.searchsorted(steps, reached, side="right")), 1)

    def done(self, now: float | None = None) -> bool:
        return self.shown(now) >= len(self.run.checkpoints)

    def so_far(self, now: float | None = None) -> Run:
        """The run as it stood when its shown checkpoints were recorded (no weights: nothing is taken apart yet)."""
        n = self.shown(now)
        return replace(self.run, checkpoints=self.run.checkpoints[:n], snapshots={}, stopped=None)


class Playbacks:
    """The server's playbacks, one per run config; the last ``keep`` are kept, the oldest dropped first."""

    def __init__(self, keep: int = 16):
        self.keep = keep
        self._plays: OrderedDict[tuple, Playback] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, run: Run, speed: int, source: str, trained_at: float | None = None,
              now: float | None = None) -> Playback:
        """Play ``run`` from its first checkpoint for everyone from now on (a playback of its config under way is
        replaced: the class starts again together)."""
        if speed not in SPEEDS:
            raise ValueError(f"speed {speed!r} is not one of {SPEEDS}")
        if not run.checkpoints:
            raise ValueError("a run without checkpoints has nothing to play back")
        play = Playback(run, time.time() if now is None else now, speed, source, trained_at)
        with self._lock:
            self._plays[run.config.key()] = play
            self._plays.move_to_end(run.config.key())
            while len(self._plays) > self.keep:
                self._plays.popitem(last=False)
        return play

    def peek(self, cfg: TrainConfig) -> Playback | None:
        with self._lock:
            return self._plays.get(cfg.key())


_PLAYBACKS = Playbacks()


def playbacks() -> Playbacks:
    """The server's one set of playbacks."""
    return _PLAYBACKS
