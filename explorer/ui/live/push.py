"""A class is told when something it shows has moved, instead of its browsers asking on a timer.

One thread per server process reads, a few times a second, what each watched session's last run showed (for a
student: its room's version, one read per room; for a teacher: how many have voted on the questions on screen,
never the counts, and the number of students), and asks Streamlit to rerun each session whose value has moved,
exactly as "run on save" reruns a page when its file changes. The rerun is the server's: the browser sends nothing,
so no timer tick with stale widget values or an old page can cross a page change. (A teacher's one-second poll in a
timed fragment did: a tick that reached the server while the teacher's click on another page was waiting to run was
merged with it, and Streamlit keeps the later request's page, so the click was lost; another left the teacher's
page running for good.) With replicas, each process watches its own sessions; the values live in the shared store.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable

from explorer.ui.live import streamlit_internals as internals

EVERY_S = 0.2   # how often the watched values are read (one read per watched thing, not per session)
_LOG = logging.getLogger(__name__)
Read = Callable[[Hashable], object]   # a watched thing -> its value now (None once it has gone)
_lock = threading.Lock()
# (session id, slot) -> (what, the value its last run showed, read); a session watches one thing a slot: its class
# ("class") and, while its page shows a run that trains, that run ("training", explorer/ui/views/learn.py)
_shown: dict[tuple[str, str], tuple[Hashable, object, Read]] = {}
_thread: threading.Thread | None = None
_poked = threading.Event()   # set when a teacher on this process has just shared a view: look now


def watch(session: str, what: Hashable, shown: object, read: Read, slot: str = "class") -> None:
    """``session`` has just run showing the value ``shown`` of ``what``: rerun it when ``read(what)`` differs.
    Starts the watcher on first use."""
    global _thread
    with _lock:
        _shown[(session, slot)] = (what, shown, read)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_loop, name="class-push", daemon=True)
            _thread.start()


def forget(session: str, slot: str | None = "class") -> None:
    """The session left its class (or shows nothing to watch in ``slot``; None: in any slot): no more reruns."""
    with _lock:
        for key in [k for k in _shown if k[0] == session and slot in (None, k[1])]:
            del _shown[key]


def watched() -> dict[tuple[str, str], tuple[Hashable, object, Read]]:
    with _lock:
        return dict(_shown)


def poke() -> None:
    """A teacher's view has just been stored by this process: read the versions now, not at the next tick (the
    students of a teacher on another replica are found at that replica's next tick)."""
    _poked.set()


def _loop() -> None:
    """The watcher: one round a tick or a poke, for as long as it is the process's watcher (``_thread``)."""
    logged = 0.0
    while True:
        _poked.wait(EVERY_S)
        _poked.clear()
        if _thread is not threading.current_thread():
            return   # replaced (a test that stands in its own watcher): one watcher reads the values
        try:
            push()
        except Exception:   # a store that is briefly unreachable must not end the watcher (nor flood the log)
            if time.monotonic() - logged > 60:
                logged = time.monotonic()
                _LOG.exception("class push: reading the watched values failed (logged once a minute)")


def push() -> list[str]:
    """One round: rerun every watched session whose value moved since its last run -> their ids."""
    shown = watched()
    current: dict[tuple[Read, Hashable], object] = {}
    for what, _, read in shown.values():
        if (read, what) not in current:
            current[(read, what)] = read(what)
    pushed = []
    for (session, slot), entry in shown.items():
        what, value, read = entry
        now = current[(read, what)]
        if now == value:
            continue
        with _lock:   # sent once per value: its run calls watch again with what it showed
            if _shown.get((session, slot)) == entry:
                _shown[(session, slot)] = (what, now, read)
        if session in pushed:
            continue
        if _rerun(session):
            pushed.append(session)
        else:
            forget(session, None)   # the browser has gone
    return pushed


def _rerun(session: str) -> bool:
    """Ask Streamlit to rerun ``session`` at its latest address, unless a run is already waiting to start ->
    False when its browser has gone (``streamlit_internals.rerun_session``)."""
    return internals.rerun_session(session)


def served(session: str) -> bool:
    """A session of a real server (AppTest's runtime is a mock: nothing there for the server to rerun)."""
    return internals.app_session(session) is not None
