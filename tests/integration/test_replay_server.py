"""A follower's replayed page on a real ``streamlit run app.py`` server, as its websocket receives it.

Under AppTest there is no event loop and no message hashing on the way out, so tests/app/test_replayed_app.py
cannot see the two things ``page_replay.replay_page`` does for a real session: a replay's messages reach
the session's event loop in one call (``_one_handoff``), and a recorded element's hash is computed at its first
replay and reused. Here two followers of one room get one step: the first draws the page, the second gets it
replayed, and what the second receives is what the first did (every element and block of the page, in order, at
the same place, with the same hash), and each hash is the one Streamlit computes for that message.
"""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request

from chromium import Server
from streamlit import util
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.wsclient import Session
from explorer.classroom import open_store
from explorer.lessons import catalogue
from explorer.lessons.run import place

STEP_PAGE = "pages/lab_softmax.py"   # lesson 1's softmax lab: its own class question, drawn on Next


class Recorder(Session):
    """A follower that keeps, for its latest run, every delta it received but transients: (where, what, hash), and
    the kinds of those whose hash is not Streamlit's."""

    def __init__(self, url: str):
        super().__init__(url, "classroom", timeout=120)
        self.deltas: list[tuple[tuple, bytes, str]] = []
        self.wrong_hashes: list[str] = []

    def _handle(self, data: bytes) -> None:
        super()._handle(data)
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "new_session":
            self.deltas = []
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") == "new_transient":
            return   # a transient: the spinner the drawing follower showed while its page computed
        self.deltas.append((tuple(msg.metadata.delta_path), msg.delta.SerializeToString(deterministic=True),
                            msg.hash))
        bare = ForwardMsg()
        bare.CopyFrom(msg)
        bare.ClearField("metadata")
        bare.ClearField("hash")
        if msg.hash != util.calc_hash(bare.SerializeToString(deterministic=True)):   # Streamlit's own rule
            self.wrong_hashes.append(msg.delta.WhichOneof("type"))


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/_explorer/stats", timeout=60) as answer:
        return json.loads(answer.read())["followers"]


def ready(url: str) -> bool:
    """The server has loaded the embedded models (app.py's readiness route): no follower's run waits on them."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_explorer/ready", timeout=10) as answer:
                return answer.status == 200
        except OSError:
            time.sleep(0.5)
    return False


def test_a_replayed_follower_receives_what_the_drawing_follower_did(tmp_path):
    db = str(tmp_path / "classroom.sqlite3")
    env = {"EXPLORER_CLASSROOM_DB": db, "EXPLORER_CLASSROOM_URL": ""}
    server = Server(env=env, log_prefix="replay-server")
    try:
        assert ready(server.url)
        store = open_store(env)
        room, key = store.create_room()
        lesson = next(x for x in catalogue({})[0] if x.source == "app:1-attention-in-20-minutes")
        step = next(i for i, s in enumerate(lesson.steps) if s.page == STEP_PAGE)
        started = time.time()
        store.set_view(room, key, {"page": STEP_PAGE, "params": dict(lesson.steps[step].params), "opts": {},
                                   "lesson": place(lesson, step, started, started)})

        async def follow() -> tuple[Recorder, Recorder, dict, dict]:
            first, second = Recorder(server.url), Recorder(server.url)
            for i, f in enumerate((first, second)):
                store.join(room, me := f"follower{i}", "Sam")   # one nickname: their banners match too
                f.me = me
            try:
                await first.connect()
                before = await asyncio.to_thread(stats, server.url)
                await first.load({"room": room, "me": first.me})
                await second.connect()
                drawn = await asyncio.to_thread(stats, server.url)
                await second.load({"room": room, "me": second.me})
                return first, second, before, drawn
            finally:
                await asyncio.gather(first.close(), second.close(), return_exceptions=True)
        first, second, before, drawn = asyncio.run(follow())
        after = stats(server.url)
    finally:
        server.stop()
    assert drawn["page"] > before["page"]                                # the first follower drew the page
    assert after["replayed"] == drawn["replayed"] + 1 and after["page"] == drawn["page"]   # the second replayed it
    assert len(first.deltas) > 20 and first.wrong_hashes == [] and second.wrong_hashes == []
    assert second.deltas == first.deltas   # every element and block, in order, in its place, with its hash
