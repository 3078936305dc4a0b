"""A training run's child process and the pipe between it and the server (:mod:`explorer.jobs.training` queues the
runs): the child (``python -m explorer.jobs.training_child``) reads one config, trains it with one thread at a lower
priority and writes each checkpoint as it is recorded; the server reads them in a thread of its own, so every read
has a deadline (:meth:`Child.next`), and the child's stderr reaches the server's log with the config it trains.
A child that stops answering, ends without its run or writes what is not a message ends its run with one sentence
(:class:`Stopped`). Nothing on the pipe is a pickle: nothing read from it can run code.
"""
from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Iterable, Sequence

from explorer.learning import runs
from explorer.learning.config import TrainConfig
from explorer.learning.train import Run
from explorer.words.i18n import N_, Later

ROOT = Path(__file__).resolve().parents[2]
NICE = 10   # the child's priority below the server's (os.nice)
COMMAND = (sys.executable, "-m", "explorer.jobs.training_child")   # the child's command line
MAX_MESSAGE = 64 << 20   # bytes: a longer line or message on the pipe is not one
log = logging.getLogger("explorer")   # the server's log (explorer.model.loading sets its handler; not imported here)
# how a run ends without its result, said on its page inside "The training run broke off (…)"
STOPPED_ANSWERING = N_("the training process stopped answering")
ENDED_WITHOUT_RUN = N_("the training process ended without its run")
NOT_A_RUN = N_("the training process sent something that is not a run")


class Stopped(RuntimeError):
    """A run's child that ended without its run: ``str()`` is one sentence in the reader's language."""

    def __init__(self, reason: Later):
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return str(self.reason)


class Child:
    """One training child process. Its messages are read by a thread of its own into a queue, so that every read the
    parent makes has a deadline (:meth:`next`); its stderr goes to the server's log line by line, with the config it
    trains (``label``)."""

    def __init__(self, command: Sequence[str]):
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, cwd=ROOT, env=env)
        self.label = "a spare child, no config yet"
        self._messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, name="trainer-read", daemon=True).start()
        threading.Thread(target=self._log, name="trainer-log", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                message = receive(self.process.stdout)
            except Exception as error:   # noqa: BLE001 - the end of the pipe, or what is not a message
                self._messages.put(error)
                return
            self._messages.put(message)

    def _log(self) -> None:
        for line in self.process.stderr:
            log.warning("training child (%s): %s", self.label, line.decode(errors="replace").rstrip()[:1000])

    def send_config(self, cfg: TrainConfig) -> None:
        self.label = repr(cfg)
        try:
            self.process.stdin.write(json.dumps(asdict(cfg)).encode() + b"\n")
            self.process.stdin.close()
        except OSError:   # it died already: the next read says so
            pass

    def next(self, deadline: float) -> tuple[str, Run]:
        """The child's next message, waiting until ``deadline`` (``time.monotonic()``) at most; :class:`Stopped` in
        one sentence if it stopped answering, ended, or sent what is not a message."""
        try:
            message = self._messages.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            raise Stopped(Later(STOPPED_ANSWERING)) from None
        if isinstance(message, EOFError):
            raise Stopped(Later(ENDED_WITHOUT_RUN))
        if isinstance(message, Exception):
            raise Stopped(Later(NOT_A_RUN)) from message
        return message

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def send(out, kind: str, part: Run, snapshots: Iterable[int] = ()) -> None:
    """One message on the child's pipe: a JSON line (its kind, ``"checkpoint"`` or ``"end"``, and its size), then
    ``part`` of the run in the run's one format (:func:`explorer.learning.runs.dumps`)."""
    blob = runs.dumps(part, snapshots)
    out.write(json.dumps({"kind": kind, "size": len(blob)}).encode() + b"\n" + blob)
    out.flush()


def receive(source) -> tuple[str, Run]:
    """The next message on ``source``: its kind and the part of the run it holds; EOFError at the pipe's end,
    ValueError for what is not a message."""
    line = source.readline(MAX_MESSAGE)
    if not line:
        raise EOFError
    head = json.loads(line)
    if not isinstance(head, dict) or head.get("kind") not in ("checkpoint", "end") or \
            not isinstance(head.get("size"), int) or not 0 <= head["size"] <= MAX_MESSAGE:
        raise ValueError(f"not a message: {line[:80]!r}")
    blob = source.read(head["size"])
    if len(blob) < head["size"]:
        raise EOFError
    return head["kind"], runs.loads(blob)


def main() -> None:
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

    def on_checkpoint(run: Run) -> None:   # the newest checkpoint alone
        send(out, "checkpoint", Run(cfg, run.probe_tokens, checkpoints=run.checkpoints[-1:]))

    run = train(cfg, on_checkpoint=on_checkpoint)   # then how it ended and its weights, without the checkpoints
    send(out, "end", Run(cfg, run.probe_tokens, snapshots=run.snapshots, stopped=run.stopped, seconds=run.seconds),
         run.snapshots)


if __name__ == "__main__":
    main()
