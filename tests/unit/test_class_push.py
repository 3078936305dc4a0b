"""class_push's bookkeeping: a session is rerun once per value that what it shows moved to, and forgotten when its
browser has gone; a session whose next run is already waiting is left to it. (That a rerun reaches a real browser
is tests/browser/test_follow_browser.py.)"""
import threading
import time

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import add_script_run_ctx

from explorer.ui.live import push
from explorer.ui.live import streamlit_internals as internals


@pytest.fixture
def no_thread(monkeypatch):
    # alive: watch starts no watcher, and one an earlier test started (an AppTest page's) ends at its next tick
    monkeypatch.setattr(push, "_thread", threading.current_thread())
    monkeypatch.setattr(push, "_shown", {})


def test_only_sessions_behind_what_they_show_are_rerun_once_per_value(no_thread, monkeypatch):
    reran, reads = [], []
    monkeypatch.setattr(push, "_rerun", lambda s: reran.append(s) or True)
    versions = {"AAAAAA": 3, "BBBBBB": 7}

    def version_of(room):
        reads.append(room)
        return versions.get(room)
    for session, room, shown in [("s1", "AAAAAA", 3), ("s2", "AAAAAA", 2), ("s3", "BBBBBB", 7)]:
        push.watch(session, room, shown, version_of)
    assert push.push() == ["s2"] and reran == ["s2"]
    assert sorted(reads) == ["AAAAAA", "BBBBBB"]                   # one read per room, not per student
    assert push.push() == []                                 # sent once: s2's run has not reported back yet
    versions["BBBBBB"] = 8
    assert push.push() == ["s3"]
    push.watch("s2", "AAAAAA", 3, version_of)               # s2's run showed version 3
    del versions["AAAAAA"]                                         # the class ended: None, everyone told once
    assert sorted(push.push()) == ["s1", "s2"]


def test_a_teachers_answer_counts_are_watched_beside_the_students_versions(no_thread, monkeypatch):
    reran = []
    monkeypatch.setattr(push, "_rerun", lambda s: reran.append(s) or True)
    counts = {("AAAAAA", ("q1",)): ({"a": 1},)}
    push.watch("student", "AAAAAA", 3, lambda room: 3)
    push.watch("teacher", ("AAAAAA", ("q1",)), ({"a": 1},), counts.get)
    assert push.push() == []
    counts[("AAAAAA", ("q1",))] = ({"a": 1, "b": 1},)             # a student answered
    assert push.push() == ["teacher"] and reran == ["teacher"]


def test_a_session_whose_browser_left_is_forgotten(no_thread):
    push.watch("gone", "AAAAAA", 1, lambda room: 2)
    assert push.push() == []                                 # no Streamlit runtime here: nobody to rerun
    assert push.watched() == {}
    push.watch("left", "AAAAAA", 1, lambda room: 1)
    push.forget("left")
    assert push.watched() == {}


class FakeSession:
    """The things of Streamlit's AppSession that ``_rerun`` (``streamlit_internals.rerun_session``) touches, with
    a real ScriptRequests and ClientState."""

    def __init__(self, waiting: bool):
        self._client_state = ClientState(query_string="layer=1&head=2", page_script_hash="heatmaps")
        self._scriptrunner = type("Runner", (), {})()
        self._scriptrunner._requests = ScriptRequests()
        if waiting:   # the browser asked for a run (a teacher's click) that has not started yet
            self._scriptrunner._requests.request_rerun(RerunData(page_script_hash="clicked"))
        self.asked = []

    def _call_soon_on_event_loop(self, fn):
        fn()

    def request_rerun(self, client_state):
        self.asked.append(client_state)


def served(monkeypatch, app) -> None:
    runtime = type("Runtime", (), {"get_app_session": lambda self, s: app})()
    monkeypatch.setattr(internals.Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(internals.Runtime, "instance", staticmethod(lambda: runtime))


@pytest.mark.parametrize("waiting", [False, True])
def test_a_session_with_a_run_waiting_is_not_asked_again(monkeypatch, waiting):
    app = FakeSession(waiting)
    served(monkeypatch, app)
    assert push._rerun("s1")
    assert [(s.page_script_hash, s.query_string) for s in app.asked] == (
        [] if waiting else [("heatmaps", "layer=1&head=2")])
    if waiting:   # the waiting run keeps its page (a request now would have replaced it with the last run's)
        assert app._scriptrunner._requests._state == ScriptRequestType.RERUN


def test_a_rerun_during_a_run_keeps_that_runs_page_and_address(monkeypatch):
    """Streamlit's client state is the one of the session's last finished script thread: here the heatmap page
    at head 2. The teacher has since opened the flip page and set its query, in a run still under way: the
    server's rerun must run that page at that address, not the heatmap page's."""
    app = FakeSession(waiting=False)
    app._client_state.context_info.timezone = "Europe/Paris"
    running = threading.Thread(target=lambda: None)   # the script thread of the run under way (never started)
    live = type("Ctx", (), {"query_string": "query=3&text=it", "page_script_hash": "flip"})()
    add_script_run_ctx(running, live)
    app._scriptrunner._script_thread = running
    served(monkeypatch, app)
    assert push._rerun("s1")
    (asked,) = app.asked
    assert (asked.page_script_hash, asked.query_string) == ("flip", "query=3&text=it")
    assert asked.context_info.timezone == "Europe/Paris"            # the rest of the session's state is kept
    assert app._client_state.query_string == "layer=1&head=2"        # a copy: Streamlit's own record is untouched


def test_a_poke_makes_the_watcher_look_at_once(monkeypatch):
    """A teacher's view stored by this process pokes the watcher: it reads the versions now, not a tick later."""
    monkeypatch.setattr(push, "EVERY_S", 60.0)   # a tick far away: only the poke can explain a read
    monkeypatch.setattr(push, "_rerun", lambda s: True)
    monkeypatch.setattr(push, "_poked", threading.Event())   # not one set by an earlier test's publish
    read, stop = threading.Event(), threading.Event()

    class Stop(BaseException):   # ends the watcher (it outlives any Exception)
        pass

    def version_of(room):
        if stop.is_set():
            raise Stop
        read.set()
        return 2
    monkeypatch.setattr(push, "_shown", {("s1", "class"): ("AAAAAA", 1, version_of)})

    def watch():
        try:
            push._loop()
        except Stop:
            pass

    watcher = threading.Thread(target=watch, daemon=True)
    monkeypatch.setattr(push, "_thread", watcher)   # the process's watcher: one an earlier test started ends
    watcher.start()
    assert not read.wait(0.5)                 # nothing before the poke
    push.poke()
    assert read.wait(30)                      # looked at once (a tick would take 60 s)
    stop.set()
    push.poke()
    watcher.join(30)
    assert not watcher.is_alive()


def test_the_teachers_watch_reads_how_many_voted_never_the_counts(tmp_path, monkeypatch):
    """Before "Show answers" the teacher's page shows "n of m answered": the server reruns it when n or m moves,
    and not when a student only changes their vote (the value it watches holds no count of any option)."""
    from explorer.classroom import Progress, SqliteStore
    from explorer.ui.live import teacher_watch

    store = SqliteStore(tmp_path / "c.sqlite3")
    monkeypatch.setattr(teacher_watch, "store", lambda: store)
    code, key = store.create_room()
    store.join(code, "s0", "Ann")
    what = (code, key, ("q",), False, False)
    assert teacher_watch._teacher_sees(what) == (((Progress(1, "open", 0),), 1), None, None)
    store.answer(code, "q", "s0", "a")
    assert teacher_watch._teacher_sees(what) == (((Progress(1, "open", 1),), 1), None, None)
    store.answer(code, "q", "s0", "b")   # a change of mind: nothing on the teacher's screen moves
    assert teacher_watch._teacher_sees(what) == (((Progress(1, "open", 1),), 1), None, None)
    store.join(code, "s1", "Bob")   # m moves
    assert teacher_watch._teacher_sees(what) == (((Progress(1, "open", 1),), 2), None, None)
    store.close(code, key)
    assert teacher_watch._teacher_sees(what) is None


def test_the_teachers_watch_sees_each_sentence_come_in_and_change(tmp_path, monkeypatch):
    """With the class's sentences on screen, the teacher's page is rerun when one comes in or changes."""
    from explorer.classroom import SqliteStore
    from explorer.ui.live import teacher_watch

    store = SqliteStore(tmp_path / "c.sqlite3")
    monkeypatch.setattr(teacher_watch, "store", lambda: store)
    code, key = store.create_room()
    store.join(code, "s0", "Ann")
    store.open_sentences(code, key, "Use it.")
    what = (code, key, (), False, True)
    before = teacher_watch._teacher_sees(what)
    assert before[2] == []
    store.write_sentence(code, "s0", "It rained.")
    after = teacher_watch._teacher_sees(what)
    assert after != before and [s.text for s in after[2]] == ["It rained."]
    store.write_sentence(code, "s0", "It snowed.")
    assert teacher_watch._teacher_sees(what) != after


def test_a_session_watches_its_class_and_a_training_run_apart(no_thread, monkeypatch):
    """A student on Watch heads learn watches its room (slot "class") and the run that trains (slot "training"):
    either moving reruns it once; leaving the class forgets only the class; a gone browser forgets both."""
    reruns = []
    monkeypatch.setattr(push, "_rerun", lambda s: reruns.append(s) or s != "gone")
    versions, progress = {"AAAAAA": 3}, {"run": 1}
    push.watch("s", "AAAAAA", 3, versions.get)
    push.watch("s", "run", 1, progress.get, slot="training")
    assert push.push() == [] and reruns == []
    progress["run"] = 2
    assert push.push() == ["s"]
    versions["AAAAAA"], progress["run"] = 4, 3                 # both moved: still one rerun
    assert push.push() == ["s"] and reruns == ["s", "s"]
    push.forget("s")
    assert set(push.watched()) == {("s", "training")}
    push.watch("gone", "run", 0, progress.get, slot="training")
    push.watch("gone", "AAAAAA", 0, versions.get)
    push.push()
    assert not any(session == "gone" for session, _ in push.watched())
    push.forget("s", None)
    assert push.watched() == {}


def test_a_replaced_watcher_ends_and_reads_nothing_more(monkeypatch):
    """One watcher reads the values: a watcher that is no longer the process's (``_thread``) ends at its next tick
    without a round (what keeps a watcher an earlier test started out of the next test's)."""
    monkeypatch.setattr(push, "EVERY_S", 0.01)
    monkeypatch.setattr(push, "_poked", threading.Event())
    rounds = []
    monkeypatch.setattr(push, "push", lambda: rounds.append(1) or [])
    watcher = threading.Thread(target=push._loop, daemon=True)
    monkeypatch.setattr(push, "_thread", watcher)
    watcher.start()
    deadline = time.monotonic() + 30   # a wait, not a measure: rounds come every 10 ms
    while not rounds and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rounds and watcher.is_alive()
    monkeypatch.setattr(push, "_thread", threading.current_thread())
    watcher.join(30)
    counted = len(rounds)
    assert not watcher.is_alive()
    time.sleep(0.05)
    assert len(rounds) == counted
