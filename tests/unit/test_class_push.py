"""class_push's bookkeeping: a session is rerun once per version its room moved to, and forgotten when its browser
has gone. (That a rerun reaches a real browser is tests/browser/test_follow_browser.py.)"""
import threading

import pytest

from explorer.ui import class_push


@pytest.fixture
def no_thread(monkeypatch):
    monkeypatch.setattr(class_push, "_thread", threading.current_thread())   # alive: watch starts no watcher
    monkeypatch.setattr(class_push, "_shown", {})


def test_only_sessions_behind_their_room_are_rerun_once_per_version(no_thread, monkeypatch):
    reran = []
    monkeypatch.setattr(class_push, "_rerun", lambda s: reran.append(s) or True)
    versions = {"AAAAAA": 3, "BBBBBB": 7}
    for session, room, shown in [("s1", "AAAAAA", 3), ("s2", "AAAAAA", 2), ("s3", "BBBBBB", 7)]:
        class_push.watch(session, room, shown, versions.get)
    assert class_push.push(versions.get) == ["s2"] and reran == ["s2"]
    assert class_push.push(versions.get) == []                     # sent once: s2's run has not reported back yet
    versions["BBBBBB"] = 8
    assert class_push.push(versions.get) == ["s3"]
    class_push.watch("s2", "AAAAAA", 3, versions.get)             # s2's run showed version 3
    del versions["AAAAAA"]                                         # the class ended: None, everyone told once
    assert sorted(class_push.push(versions.get)) == ["s1", "s2"]


def test_a_session_whose_browser_left_is_forgotten(no_thread):
    class_push.watch("gone", "AAAAAA", 1, lambda room: 2)
    assert class_push.push(lambda room: 2) == []                   # no Streamlit runtime here: nobody to rerun
    assert class_push.watched() == {}
    class_push.watch("left", "AAAAAA", 1, lambda room: 1)
    class_push.forget("left")
    assert class_push.watched() == {}


def test_a_poke_makes_the_watcher_look_at_once(monkeypatch):
    """A teacher's view stored by this process pokes the watcher: it reads the versions now, not a tick later."""
    monkeypatch.setattr(class_push, "EVERY_S", 60.0)   # a tick far away: only the poke can explain a read
    monkeypatch.setattr(class_push, "_shown", {"s1": ("AAAAAA", 1)})
    monkeypatch.setattr(class_push, "_rerun", lambda s: True)
    monkeypatch.setattr(class_push, "_poked", threading.Event())   # not one set by an earlier test's publish
    read, stop = threading.Event(), threading.Event()

    class Stop(BaseException):   # ends the watcher (it outlives any Exception)
        pass

    def version_of(room):
        if stop.is_set():
            raise Stop
        read.set()
        return 2

    def watch():
        try:
            class_push._loop(version_of)
        except Stop:
            pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert not read.wait(0.5)                 # nothing before the poke
    class_push.poke()
    assert read.wait(30)                      # looked at once (a tick would take 60 s)
    stop.set()
    class_push.poke()
    watcher.join(30)
    assert not watcher.is_alive()
