"""What the classroom benchmarks share (a helper module, not a script): a server with a temporary classroom file,
browser-less followers that join a room, and the file a measured run's results land in.

``lesson_bench.py``, ``sentences_follow_bench.py``, ``classroom_bench.py`` and ``teacher_next.py`` use it; each
keeps what it measures (which runs it waits for, what it counts) in its own follower class and loop.
"""
from __future__ import annotations

import asyncio
import json
import secrets
import tempfile
from contextlib import contextmanager
from pathlib import Path

from bench.wsclient import EARLY, ForwardMsg, Session

ROOT = Path(__file__).resolve().parents[1]
AT_ONCE = 4   # followers loading their first page at a time: more at once time out on a loaded server


@contextmanager
def classroom_server(log_prefix: str, **env: str):
    """A ``streamlit run app.py`` (tests/chromium.py's ``Server``) whose classroom is a SQLite file in a temporary
    folder, stopped and removed at the end: yields (server, the classroom environment it was started with, which
    ``explorer.classroom.open_store`` takes to reach the same store). ``env`` adds settings."""
    from chromium import Server

    with tempfile.TemporaryDirectory() as tmp:
        where = {"EXPLORER_CLASSROOM_DB": str(Path(tmp) / "classroom.sqlite3"), "EXPLORER_CLASSROOM_URL": "", **env}
        server = Server(env=where, log_prefix=log_prefix)
        try:
            yield server, where
        finally:
            server.stop()


class Follower(Session):
    """A browser-less student of a room on ``page``: its id ``me``, the bytes and messages received since
    ``received`` and ``messages`` were last zeroed, and ``run_finished()`` called at the end of each run that was
    not cut short by a newer one. A benchmark's follower overrides ``seen`` (each new element) and
    ``run_finished`` to note what it measures."""

    def __init__(self, url: str, page: str = "classroom"):
        super().__init__(url, page, timeout=120, on_element=self.seen)
        self.me = secrets.token_urlsafe(12)
        self.received = 0   # bytes
        self.messages = 0

    def seen(self, element) -> None:
        pass

    def run_finished(self) -> None:
        pass

    def _handle(self, data: bytes) -> None:
        super()._handle(data)
        self.received += len(data)
        self.messages += 1
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != EARLY:
            self.run_finished()

    async def enter(self, room: str) -> bool:
        """Open the page as this student of ``room`` (already joined through the store): whether its run ended
        without an exception."""
        await self.connect()
        return (await self.load({"room": room, "me": self.me})).ok


async def join_class(store, room: str, followers: list, enter=None) -> list:
    """Join each follower (anything with a ``me``) to ``room`` through ``store`` as "student i", then let them open
    their page, ``AT_ONCE`` at a time: ``enter(f)`` (by default ``f.enter(room)``), whose answers come back in
    order."""
    for i, f in enumerate(followers):
        store.join(room, f.me, f"student {i}")
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(f):
        async with gate:
            return await (enter(f) if enter else f.enter(room))
    return await asyncio.gather(*(one(f) for f in followers))


def save(results, name: str, smoke: bool = False) -> None:
    """Write a measured run's ``results`` to test-artifacts/``name`` as JSON; a smoke run's numbers mean nothing,
    so it writes nothing and the last measured run's file stays."""
    if smoke:
        return
    out = ROOT / "test-artifacts" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print(f"results in {out}")
