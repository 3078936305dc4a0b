"""explorer.serving.fairqueue: order, one job per session, replacement, no starvation, positions, shared keys, errors.

Every wait is on an Event or a ticket with a timeout that only guards against a hang; nothing sleeps.
"""
from __future__ import annotations

import threading

import pytest

from explorer.serving.fairqueue import Cancelled, FairQueue, QueueFull, Replaced

WAIT = 10  # seconds: a hang guard, never part of an assertion


class Jobs:
    """Job functions that record the order in which they start; gated ones block until released."""

    def __init__(self):
        self.order: list[str] = []
        self.started: dict[str, threading.Event] = {}
        self.gates: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def fn(self, name: str, gated: bool = False, error: Exception | None = None):
        self.started[name] = threading.Event()
        if gated:
            self.gates[name] = threading.Event()

        def run():
            with self.lock:
                self.order.append(name)
            self.started[name].set()
            if gated:
                assert self.gates[name].wait(WAIT), f"{name} never released"
            if error is not None:
                raise error
            return name.upper()
        return run

    def wait_started(self, name: str) -> None:
        assert self.started[name].wait(WAIT), f"{name} never started"

    def release(self, name: str) -> None:
        self.gates[name].set()


@pytest.fixture
def queue():
    made = []

    def make(**kwargs) -> FairQueue:
        made.append(FairQueue(**kwargs))
        return made[-1]
    yield make
    for q in made:
        for gate in getattr(q, "_test_gates", []):
            gate.set()
        q.shutdown()


def busy(q: FairQueue, jobs: Jobs, session: str = "X", name: str = "blocker"):
    """Occupy q's (single) worker with a gated job until jobs.release(name)."""
    ticket = q.submit(session, None, jobs.fn(name, gated=True))
    q._test_gates = [jobs.gates[name]]
    jobs.wait_started(name)
    return ticket


def test_jobs_start_in_order_of_arrival_across_sessions(queue):
    q, jobs = queue(workers=1), Jobs()
    busy(q, jobs)
    tickets = [q.submit(s, None, jobs.fn(s)) for s in ("C", "A", "B", "E", "D")]
    jobs.release("blocker")
    assert [t.result(WAIT) for t in tickets] == ["C", "A", "B", "E", "D"]
    assert jobs.order == ["blocker", "C", "A", "B", "E", "D"]


def test_one_session_never_holds_two_workers(queue):
    q, jobs = queue(workers=2), Jobs()
    s1 = busy(q, jobs, session="S", name="s1")
    s2 = q.submit("S", None, jobs.fn("s2"))         # waits: S already has s1 running, although a worker is free
    a1 = q.submit("A", None, jobs.fn("a1", gated=True))
    q._test_gates.append(jobs.gates["a1"])
    jobs.wait_started("a1")                         # the free worker skipped s2 (earlier place) for a1
    assert jobs.order == ["s1", "a1"] and not s2.done() and s2.position() == 2
    jobs.release("s1")
    assert s1.result(WAIT) == "S1" and s2.result(WAIT) == "S2"
    jobs.release("a1")
    assert a1.result(WAIT) == "A1" and jobs.order == ["s1", "a1", "s2"]


def test_a_newer_submit_replaces_the_waiting_job_and_keeps_its_place(queue):
    q, jobs = queue(workers=1), Jobs()
    busy(q, jobs)
    old = q.submit("S", None, jobs.fn("s-old"))
    a = q.submit("A", None, jobs.fn("a"))
    new = q.submit("S", None, jobs.fn("s-new"))
    with pytest.raises(Replaced):
        old.result(0)                               # resolved at once, before any worker is free
    assert q.waiting() == 2 and new.position() == 1 and a.position() == 2
    jobs.release("blocker")
    assert new.result(WAIT) == "S-NEW" and a.result(WAIT) == "A"
    assert jobs.order == ["blocker", "s-new", "a"]  # s-old never ran; s-new took its place before A


def test_a_busy_session_cannot_starve_the_others(queue):
    """S resubmits the moment each job ends (a 512-token text every second); A..E each submit one meanwhile."""
    q, jobs = queue(workers=1), Jobs()
    first = busy(q, jobs, session="S", name="s1")
    others = {s: q.submit(s, None, jobs.fn(s)) for s in "ABCDE"}

    def student_s():
        ticket = first
        for n in (2, 3, 4):
            ticket.result(WAIT)
            ticket = q.submit("S", None, jobs.fn(f"s{n}"))
        ticket.result(WAIT)

    loop = threading.Thread(target=student_s, daemon=True)
    loop.start()
    jobs.release("s1")
    loop.join(WAIT)
    assert not loop.is_alive() and all(t.result(WAIT) == s for s, t in others.items())
    order = jobs.order
    assert all(order.index(s) < order.index("s3") for s in "ABCDE")    # what the brief asks
    assert order == ["s1", "A", "B", "C", "D", "E", "s2", "s3", "s4"]  # what FIFO by arrival gives


def test_positions_count_running_and_earlier_jobs(queue):
    q, jobs = queue(workers=1), Jobs()
    blocker = busy(q, jobs)
    a = q.submit("A", None, jobs.fn("a", gated=True))
    q._test_gates.append(jobs.gates["a"])
    b = q.submit("B", None, jobs.fn("b"))
    c = q.submit("C", None, jobs.fn("c"))
    assert [blocker.position(), a.position(), b.position(), c.position()] == [0, 1, 2, 3]
    assert blocker.running() and not a.running()
    jobs.release("blocker")
    jobs.wait_started("a")
    assert [blocker.position(), a.position(), b.position(), c.position()] == [0, 0, 1, 2]
    b2 = q.submit("B", None, jobs.fn("b2"))
    assert b2.position() == 1 and c.position() == 2 and b.position() == 0   # b was replaced: done
    jobs.release("a")
    assert c.result(WAIT) == "C" and c.position() == 0 and jobs.order == ["blocker", "a", "b2", "c"]


def test_the_same_key_is_computed_once(queue):
    q, jobs = queue(workers=1), Jobs()
    blocker = q.submit("X", "model|text-0", jobs.fn("blocker", gated=True))
    q._test_gates = [jobs.gates["blocker"]]
    jobs.wait_started("blocker")
    joins_running = q.submit("Y", "model|text-0", jobs.fn("never-0"))
    s = q.submit("S", "model|text-1", jobs.fn("text-1"))
    a = q.submit("A", "model|text-1", jobs.fn("never-1"))
    n1, n2 = q.submit("N", None, jobs.fn("n1")), q.submit("M", None, jobs.fn("n2"))   # no key: never shared
    assert q.waiting() == 3 and a.position() == s.position() == 1
    jobs.release("blocker")
    assert blocker.result(WAIT) == joins_running.result(WAIT) == "BLOCKER"
    assert s.result(WAIT) == a.result(WAIT) == "TEXT-1" and n1.result(WAIT) == "N1" and n2.result(WAIT) == "N2"
    assert jobs.order == ["blocker", "text-1", "n1", "n2"]


def test_a_shared_job_outlives_one_replaced_ticket(queue):
    q, jobs = queue(workers=1), Jobs()
    busy(q, jobs)
    s = q.submit("S", "k", jobs.fn("k"))
    a = q.submit("A", "k", jobs.fn("never"))
    s2 = q.submit("S", "other", jobs.fn("other"))   # S moves on; A still wants k
    with pytest.raises(Replaced):
        s.result(0)
    jobs.release("blocker")
    assert a.result(WAIT) == "K" and s2.result(WAIT) == "OTHER"
    assert jobs.order == ["blocker", "other", "k"]  # S's new job keeps S's place; k now holds A's (later) one


def test_an_exception_reaches_only_its_tickets(queue):
    q, jobs = queue(workers=1), Jobs()
    busy(q, jobs)
    bad = q.submit("S", "bad", jobs.fn("bad", error=ValueError("boom")))
    bad_too = q.submit("A", "bad", jobs.fn("never"))
    good = q.submit("B", None, jobs.fn("good"))
    jobs.release("blocker")
    for ticket in (bad, bad_too):
        with pytest.raises(ValueError, match="boom"):
            ticket.result(WAIT)
    assert good.result(WAIT) == "GOOD"
    assert q.submit("S", "bad", jobs.fn("again")).result(WAIT) == "AGAIN"   # worker alive, key not stuck


def test_queue_full_counts_new_waiting_jobs_only(queue):
    q, jobs = queue(workers=1, max_waiting=2), Jobs()
    busy(q, jobs)                                   # running: not counted
    a = q.submit("A", "ka", jobs.fn("a"))
    q.submit("B", "kb", jobs.fn("b"))
    with pytest.raises(QueueFull, match="2 jobs are waiting"):
        q.submit("C", "kc", jobs.fn("c"))
    a2 = q.submit("A", "ka2", jobs.fn("a2"))        # a replacement adds no job
    c = q.submit("C", "kb", jobs.fn("never"))      # nor does a shared key
    with pytest.raises(Replaced):
        a.result(0)
    jobs.release("blocker")
    assert a2.result(WAIT) == "A2" and c.result(WAIT) == "B" and q.waiting() == 0


def test_timeout_cancel_and_lazy_daemon_workers(queue):
    q, jobs = queue(workers=2, name="fq-test"), Jobs()
    assert not [t for t in threading.enumerate() if t.name.startswith("fq-test")]
    blocker = busy(q, jobs)
    mine = [t for t in threading.enumerate() if t.name.startswith("fq-test")]
    assert len(mine) == 2 and all(t.daemon for t in mine)
    with pytest.raises(TimeoutError):
        blocker.result(0)
    waiting = q.submit("X", None, jobs.fn("later"))   # X is busy: it waits
    waiting.cancel()
    with pytest.raises(Cancelled):
        waiting.result(0)
    assert q.waiting() == 0
    jobs.release("blocker")
    assert blocker.result(WAIT) == "BLOCKER" and jobs.order == ["blocker"]
    q.shutdown()
    assert not any(t.is_alive() for t in mine)
