"""A bounded, fair queue for model forward passes shared by every session of a server (threads, no asyncio).

Rules:

- Each session has at most one job running and at most one waiting. A new submit while its job waits replaces
  it: the old ticket ends with ``Replaced`` and the new job keeps the old one's place in line (a student who
  edits the text while waiting does not lose their turn, and still holds one place only). A waiting job does
  not start while a job its session started is still running, so one session never holds two workers.
- Jobs start in order of place: a fresh submit gets the next number, so a session that resubmits as soon as
  its job ends goes behind everyone who arrived meanwhile; nobody starves.
- Jobs with the same ``key`` (not None) are computed once: a submit whose key matches a waiting or running job
  attaches its ticket to that job. A waiting job shared by several sessions takes the earliest of their places
  and may start when any of them has no job running.
- At most ``max_waiting`` jobs wait; one more raises ``QueueFull`` (a replacement or a shared key adds none).
- Worker threads are daemon threads, started by the first submit. An exception in ``fn`` goes to that job's
  tickets only; the worker carries on.
"""
from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Hashable

from explorer.words import i18n


class Replaced(Exception):
    """A newer submit from the same session took this waiting job's place."""


class Cancelled(Exception):
    """The ticket was cancelled (its session left) before its job finished."""


class QueueFull(RuntimeError):
    """Too many jobs are waiting; try again shortly."""


class _Job:
    __slots__ = ("fn", "key", "lang", "place", "started_by", "state", "tickets")

    def __init__(self, key: Hashable | None, fn: Callable[[], object], place: int, lang: str = i18n.SOURCE):
        self.key, self.fn, self.place, self.lang = key, fn, place, lang
        self.tickets: list[Ticket] = []
        self.state = "waiting"            # waiting -> running -> done
        self.started_by: list[Hashable] = []


class Ticket:
    """One session's claim on a job's result."""

    def __init__(self, queue: FairQueue, session_id: Hashable, key: Hashable | None, place: int):
        self.session_id, self.key = session_id, key
        self._queue, self._place = queue, place
        self._job: _Job | None = None
        self._done = threading.Event()
        self._value: object = None
        self._error: BaseException | None = None

    def done(self) -> bool:
        return self._done.is_set()

    def running(self) -> bool:
        """True while the job this ticket waits on is being computed."""
        job = self._job
        return not self.done() and job is not None and job.state == "running"

    def position(self) -> int:
        """Jobs ahead of this one: all running jobs plus waiting jobs with an earlier place. 0 once running or done.

        An estimate for "waiting for N others": a job whose sessions are all busy may be passed by later ones.
        """
        return self._queue._position(self)

    def result(self, timeout: float | None = None) -> object:
        """fn's return value; re-raises fn's exception, Replaced or Cancelled; TimeoutError if not done in time."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"job {self.key!r} of session {self.session_id!r} not finished after {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value

    def cancel(self) -> None:
        """Give up this ticket (ends with Cancelled); a waiting job nobody else wants is dropped."""
        self._queue._detach(self, Cancelled(f"job {self.key!r} of session {self.session_id!r} was cancelled"))

    def _resolve(self, value: object = None, error: BaseException | None = None) -> None:
        if not self._done.is_set():
            self._value, self._error = value, error
            self._done.set()


class FairQueue:
    """Runs submitted callables on ``workers`` threads, fairly across sessions (see the module docstring)."""

    def __init__(self, workers: int = 1, max_waiting: int = 200, name: str = "fairqueue"):
        if workers < 1 or max_waiting < 1:
            raise ValueError("workers and max_waiting must be at least 1")
        self.workers, self.max_waiting, self.name = workers, max_waiting, name
        self._cond = threading.Condition()
        self._places = itertools.count()
        self._waiting: list[_Job] = []                       # in submit order; chosen by min place
        self._running: list[_Job] = []
        self._by_key: dict[Hashable, _Job] = {}              # waiting or running jobs with a key
        self._waiting_ticket: dict[Hashable, Ticket] = {}    # session -> its one waiting ticket
        self._busy: Counter = Counter()                      # session -> running jobs it started
        self._threads: list[threading.Thread] = []
        self._closed = False

    # ------------------------------------------------------------------------------------------ public

    def submit(self, session_id: Hashable, key: Hashable | None, fn: Callable[[], object],
               lang: str = i18n.SOURCE) -> Ticket:
        """Queue ``fn()`` for ``session_id``, to run in ``lang`` (the language it was asked in: English unless its
        sentences are kept per language, with ``lang`` in ``key``); returns at once. Raises QueueFull when the
        queue is full."""
        with self._cond:
            if self._closed:
                raise RuntimeError(f"{self.name} is shut down")
            old = self._waiting_ticket.get(session_id)
            shared = self._by_key.get(key) if key is not None else None
            if shared is not None and old is not None and shared is old._job and len(shared.tickets) == 1:
                shared = None                                # its only ticket is being replaced: a new job
            frees = old is not None and old._job is not None and old._job.tickets == [old]
            if shared is None and len(self._waiting) - frees >= self.max_waiting:
                raise QueueFull(f"{len(self._waiting)} jobs are waiting already (at most {self.max_waiting}).")
            place = next(self._places) if old is None else old._place
            if old is not None:
                self._detach_locked(old, Replaced(f"replaced by a newer job of session {session_id!r}"))
            ticket = Ticket(self, session_id, key, place)
            if shared is not None:
                self._attach(shared, ticket)
            else:
                job = _Job(key, fn, place, i18n.spoken(lang) or i18n.SOURCE)
                self._attach(job, ticket)
                self._waiting.append(job)
                if key is not None:
                    self._by_key[key] = job
            self._start_workers()
            self._cond.notify_all()
            return ticket

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def running(self) -> int:
        with self._cond:
            return len(self._running)

    def shutdown(self, timeout: float | None = 5.0) -> None:
        """Cancel waiting jobs, let running ones finish, and stop the workers."""
        with self._cond:
            self._closed = True
            for job in list(self._waiting):
                for ticket in list(job.tickets):
                    self._detach_locked(ticket, Cancelled(f"{self.name} was shut down"))
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    # ------------------------------------------------------------------------------------------ internals

    def _attach(self, job: _Job, ticket: Ticket) -> None:
        job.tickets.append(ticket)
        ticket._job = job
        if job.state == "waiting":
            job.place = min(job.place, ticket._place)
            self._waiting_ticket[ticket.session_id] = ticket

    def _detach(self, ticket: Ticket, error: BaseException) -> None:
        with self._cond:
            self._detach_locked(ticket, error)

    def _detach_locked(self, ticket: Ticket, error: BaseException) -> None:
        job = ticket._job
        if self._waiting_ticket.get(ticket.session_id) is ticket:
            del self._waiting_ticket[ticket.session_id]
        if job is not None and ticket in job.tickets:
            job.tickets.remove(ticket)
            if job.state == "waiting":
                if job.tickets:
                    job.place = min(t._place for t in job.tickets)
                else:                                          # nobody wants it any more
                    self._waiting.remove(job)
                    if job.key is not None and self._by_key.get(job.key) is job:
                        del self._by_key[job.key]
        ticket._resolve(error=error)

    def _position(self, ticket: Ticket) -> int:
        with self._cond:
            job = ticket._job
            if ticket.done() or job is None or job.state != "waiting":
                return 0
            return len(self._running) + sum(1 for other in self._waiting if other.place < job.place)

    def _next(self) -> _Job | None:
        """The waiting job with the smallest place among those with a session that has no job running."""
        ready = [job for job in self._waiting if any(self._busy[t.session_id] == 0 for t in job.tickets)]
        return min(ready, key=lambda job: job.place, default=None)

    def _start_workers(self) -> None:
        while len(self._threads) < self.workers:
            thread = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._next()
                while job is None:
                    if self._closed:
                        return
                    self._cond.wait()
                    job = self._next()
                self._waiting.remove(job)
                self._running.append(job)
                job.state = "running"
                job.started_by = list({t.session_id: None for t in job.tickets})
                for ticket in job.tickets:
                    if self._waiting_ticket.get(ticket.session_id) is ticket:
                        del self._waiting_ticket[ticket.session_id]
                self._busy.update(job.started_by)
            value, error = None, None
            try:
                with i18n.language(job.lang):
                    value = job.fn()
            except BaseException as err:  # noqa: BLE001 - handed to this job's tickets only
                error = err
            with self._cond:
                job.state = "done"
                self._running.remove(job)
                if job.key is not None and self._by_key.get(job.key) is job:
                    del self._by_key[job.key]
                self._busy.subtract(job.started_by)
                self._busy += Counter()                      # drop zero counts
                tickets = list(job.tickets)
                self._cond.notify_all()
            for ticket in tickets:
                ticket._resolve(value, error)
