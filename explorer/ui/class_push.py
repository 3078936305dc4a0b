"""Students in a class are told when the teacher moves, instead of asking once a second.

One thread per server process reads the version of every room that has students connected to this process
(``watch``, called by each of their runs) a few times a second, and asks Streamlit to rerun the session of each
student whose last run showed an older version, exactly as "run on save" reruns a page when its file changes. The
rerun is the server's: the student's browser sends nothing, so no poll tick with stale widget values can cross a
page change (which is what stranded followers and made Streamlit's frontend reject a late fragment message, "Bad
delta path index"). With replicas, each process watches its own students; the version lives in the shared store.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from streamlit.runtime import Runtime

EVERY_S = 0.2   # how often the watched rooms' versions are read (one read per room, not per student)
_LOG = logging.getLogger(__name__)
_lock = threading.Lock()
_shown: dict[str, tuple[str, int | None]] = {}   # session id -> (room, the version its last run showed / was sent)
_thread: threading.Thread | None = None
_poked = threading.Event()   # set when a teacher on this process has just shared a view: look now


def watch(session: str, room: str, version: int | None, version_of: Callable[[str], int | None]) -> None:
    """``session`` (a student's) has just run showing ``version`` of ``room``: rerun it when the room moves on.
    ``version_of(room)``: the room's current version, None once it has ended. Starts the watcher on first use."""
    global _thread
    with _lock:
        _shown[session] = (room, version)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_loop, args=(version_of,), name="class-push", daemon=True)
            _thread.start()


def forget(session: str) -> None:
    """The session left its class: no more reruns for it."""
    with _lock:
        _shown.pop(session, None)


def watched() -> dict[str, tuple[str, int | None]]:
    with _lock:
        return dict(_shown)


def poke() -> None:
    """A teacher's view has just been stored by this process: read the versions now, not at the next tick (the
    students of a teacher on another replica are found at that replica's next tick)."""
    _poked.set()


def _loop(version_of: Callable[[str], int | None]) -> None:
    logged = 0.0
    while True:
        _poked.wait(EVERY_S)
        _poked.clear()
        try:
            push(version_of)
        except Exception:   # a store that is briefly unreachable must not end the watcher (nor flood the log)
            if time.monotonic() - logged > 60:
                logged = time.monotonic()
                _LOG.exception("class push: reading the rooms' versions failed (logged once a minute)")


def push(version_of: Callable[[str], int | None]) -> list[str]:
    """One round: rerun every watched session whose room moved on since its last run -> their ids."""
    shown = watched()
    current = {room: version_of(room) for room in {room for room, _ in shown.values()}}
    pushed = []
    for session, (room, version) in shown.items():
        if current[room] == version:
            continue
        with _lock:   # sent once per version: its run calls watch again with what it showed
            if _shown.get(session) == (room, version):
                _shown[session] = (room, current[room])
        if _rerun(session):
            pushed.append(session)
        else:
            forget(session)   # the browser has gone
    return pushed


def _rerun(session: str) -> bool:
    """Ask Streamlit to run ``session``'s page again with the state of its last run, as run-on-save does."""
    app = Runtime.instance().get_app_session(session) if Runtime.exists() else None
    if app is None:
        return False
    app._call_soon_on_event_loop(lambda: app.request_rerun(app._client_state))
    return True
