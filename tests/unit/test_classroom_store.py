"""Classroom store: the same test bodies run against SQLite (a temp file) and Redis (a real redis-server)."""
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from explorer.classroom import (
    ALPHABET,
    MAX_STUDENTS,
    AlreadyRevealed,
    BadInput,
    InvalidCode,
    NoSuchRoom,
    NotJoined,
    NotTeacher,
    RedisStore,
    Removed,
    RoomClosed,
    RoomFull,
    SqliteStore,
    TooManyFromAddress,
    TooManyRooms,
    normalise_code,
    open_store,
    pretty_code,
    qr_svg,
)
from explorer.classroom.address import WRONG_FIRST_WAIT_S, WRONG_FORGET_S, WRONG_FREE_TRIES, WRONG_LONGEST_WAIT_S
from explorer.classroom.ids import new_code
from explorer.classroom.rooms import SEATS_PER_ADDRESS

ROOT = Path(__file__).resolve().parents[2]
H = 3600.0


@pytest.fixture
def env(classroom_env):
    """A fresh, empty classroom backend: SQLite, then Redis (``classroom_env`` in conftest)."""
    return classroom_env


@pytest.fixture
def store(env):
    return open_store(env)


def leftovers(env) -> int:
    """Rows (SQLite) or keys (Redis, the rooms index aside) the store still holds."""
    if "EXPLORER_CLASSROOM_URL" in env:
        return len([k for k in redis.Redis.from_url(env["EXPLORER_CLASSROOM_URL"]).keys("*") if k != b"explorer:rooms"])
    with sqlite3.connect(env["EXPLORER_CLASSROOM_DB"]) as db:
        return sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                   for t in ("rooms", "students", "votes", "questions"))


def test_create_join_answer_counts_reveal_close(store, env):
    code, key = store.create_room()
    assert store.is_teacher(code, key) and store.version(code) == 0
    for i, nick in enumerate(["Ann", "bob", "Cy"]):
        store.join(code, f"s{i}", nick)
    store.answer(code, "q1", "s0", "A")
    store.answer(code, "q1", "s1", "B")
    store.answer(code, "q1", "s2", "B")
    store.answer(code, "q2", "s0", "C")
    assert store.counts(code, "q1") == {"A": 1, "B": 2} and store.counts(code, "q2") == {"C": 1}
    store.answer(code, "q1", "s1", "A")  # replaces bob's B
    assert store.counts(code, "q1") == {"A": 2, "B": 1}
    assert store.my_answer(code, "q1", "s1") == "A" and store.my_answer(code, "q3", "s1") is None
    assert store.counts(code, "nobody-answered") == {}
    assert store.revealed(code) == frozenset()
    assert store.reveal(code, key, "q1") == 1  # a reveal is a change followers must see
    assert store.revealed(code) == {"q1"}
    with pytest.raises(AlreadyRevealed):
        store.answer(code, "q1", "s2", "A")
    assert store.counts(code, "q1") == {"A": 2, "B": 1}
    assert store.nicknames(code, key) == ["Ann", "bob", "Cy"]
    room = store.room(code)
    assert (room.code, room.students, room.version, room.locked) == (code, 3, 1, False)
    with pytest.raises(NotJoined):
        store.answer(code, "q2", "stranger", "A")
    assert leftovers(env) > 0
    store.close(code, key)
    assert store.room(code) is None and leftovers(env) == 0
    for call in (lambda: store.version(code), lambda: store.view(code), lambda: store.join(code, "s9", "Dee"),
                 lambda: store.counts(code, "q1"), lambda: store.revealed(code), lambda: store.close(code, key)):
        with pytest.raises(NoSuchRoom):
            call()


def test_wrong_key_refused_on_every_teacher_operation(store):
    code, key = store.create_room()
    other_code, other_key = store.create_room()
    store.join(code, "s0", "Ann")
    flipped = key[:-1] + ("A" if key[-1] != "A" else "B")
    ops = [lambda k: store.set_view(code, k, {"page": "x"}), lambda k: store.set_lock(code, k, True),
           lambda k: store.reveal(code, k, "q1"), lambda k: store.nicknames(code, k), lambda k: store.close(code, k)]
    for bad in ["", None, flipped, other_key, key.upper(), key + " "]:
        assert not store.is_teacher(code, bad)
        for op in ops:
            with pytest.raises(NotTeacher) as info:
                op(bad)
            assert isinstance(info.value, PermissionError)
    assert store.version(code) == 0 and store.revealed(code) == frozenset() and store.room(code).students == 1
    assert store.view(code) == (0, {"locked": False})
    assert store.is_teacher(code, key) and store.is_teacher(other_code, other_key)
    with pytest.raises(NoSuchRoom):
        store.set_view("ABCDEF" if code != "ABCDEF" else "ABCDEG", key, {})


def test_codes_unambiguous_and_input_normalised(store):
    assert not set("0O1IL") & set(ALPHABET) and len(set(ALPHABET)) == len(ALPHABET) == 31
    codes = [new_code() for _ in range(2000)]
    assert all(len(c) == 6 and set(c) <= set(ALPHABET) for c in codes) and len(set(codes)) > 1990
    code, _ = store.create_room()
    assert len(code) == 6 and set(code) <= set(ALPHABET)
    typed = f"  {pretty_code(code).lower()}\t"
    assert normalise_code(typed) == code and normalise_code(" ".join(code)) == code
    assert store.join(typed, "s0", "Ann") == "Ann" and store.room(code).students == 1
    for bad in ["", "ABCDE", "ABCDEFG", "O0O0O0", "ABC12I", "ABCDEL", "'; --", None, 123456]:
        assert store.room(bad) is None and not store.is_teacher(bad, "k")
        with pytest.raises(InvalidCode) as info:
            store.join(bad, "s0", "Ann")
        assert isinstance(info.value, NoSuchRoom) and isinstance(info.value, ValueError)
        assert str(info.value).startswith("That is not a room code")


def test_nickname_stored_literally(store):
    code, key = store.create_room()
    markup = "<b>Ann</b> **x** {{y}} ' OR 1=1 --"
    assert store.join(code, "s0", f"  {markup}\n") == markup
    assert store.join(code, "s1", "\u202eevil\u200b") == "evil"  # bidi override and zero-width space dropped
    assert store.join(code, "s2", "a\x00b\x07c\td") == "abc d"
    assert store.join(code, "s3", "Z" * 39 + "éé") == "Z" * 39 + "é"  # 40 characters kept
    assert store.join(code, "s4", "🦊 Zoë") == "🦊 Zoë"
    for empty in ["   ", "\x00\x01", "", None]:
        with pytest.raises(BadInput):
            store.join(code, "s5", empty)
    assert store.nicknames(code, key) == [markup, "abc d", "evil", "Z" * 39 + "é", "🦊 Zoë"]  # case-blind order
    store.join(code, "s0", "Ann again")  # a rejoin renames; it takes no second seat
    assert store.room(code).students == 5 and "Ann again" in store.nicknames(code, key)


def test_fifty_threads_answer_at_once_exact_counts(store):
    code, key = store.create_room()
    n = 50
    for i in range(n):
        store.join(code, f"s{i}", f"student {i}")
    start, errors = threading.Barrier(n), []

    def student(i):
        try:
            start.wait()
            store.answer(code, "q", f"s{i}", "A" if i % 2 else "B")
            if i % 5 == 0:  # ten students change their mind
                store.answer(code, "q", f"s{i}", "C")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=student, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # i % 5 == 0 -> C (10); the other 40: odd -> A (20), even -> B (20)
    assert store.counts(code, "q") == {"A": 20, "B": 20, "C": 10}
    assert [store.my_answer(code, "q", f"s{i}") for i in (0, 1, 2, 5)] == ["C", "A", "B", "C"]


def test_concurrent_view_changes_get_distinct_growing_versions(store):
    code, key = store.create_room()
    got, start = [], threading.Barrier(10)

    def teacher_tab(t):
        start.wait()
        for j in range(5):
            got.append(store.set_view(code, key, {"tab": t, "step": j}))
    threads = [threading.Thread(target=teacher_tab, args=(t,)) for t in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 51)) and store.version(code) == 50


def test_several_processes_share_one_store(store, env):
    code, key = store.create_room()
    child = ("import sys; from explorer.classroom import open_store; s = open_store(); c, k, p = sys.argv[1:]\n"
             "for i in range(10):\n"
             "    s.join(c, p + str(i), 'n'); s.answer(c, 'q', p + str(i), p); print(s.set_view(c, k, {'p': p}))\n")
    procs = [subprocess.Popen([sys.executable, "-c", child, code, key, p], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, **env, "PYTHONPATH": str(ROOT)}) for p in "XYZ"]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    versions = [int(v) for out in outs for v in out.split()]
    assert sorted(versions) == list(range(1, 31))  # no version handed out twice across processes
    assert store.counts(code, "q") == {"X": 10, "Y": 10, "Z": 10} and store.room(code).students == 30


def test_version_increases_and_is_cheap(store):
    code, key = store.create_room()
    v1 = store.set_view(code, key, {"page": "heatmaps", "model": "m", "layer": 2, "head": 3, "options": [1, 2]})
    v2 = store.set_lock(code, key, True)
    v3 = store.set_view(code, key, {"page": "flip", "text": "Le chat"})
    v4 = store.reveal(code, key, "q1")
    assert v1 < v2 < v3 < v4 == store.version(code)
    assert store.view(code) == (v4, {"page": "flip", "text": "Le chat", "locked": True})
    assert store.set_lock(code, key, False) == v4 + 1 and store.view(code)[1]["locked"] is False
    touched = store.room(code).touched
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        store.version(code)
        times.append(time.perf_counter() - t0)
    assert statistics.median(times) < 0.005, f"version() median {statistics.median(times) * 1e3:.2f} ms"
    assert store.room(code).touched == touched and store.version(code) == v4 + 1  # polling writes nothing
    for bad in [{1, 2}, {"x": float("nan")}, ["not", "a", "dict"], {"big": "x" * 70_000}]:
        with pytest.raises(BadInput):
            store.set_view(code, key, bad)
    assert store.version(code) == v4 + 1


def test_restart_new_store_object_loses_nothing(env):
    first = open_store(env)
    code, key = first.create_room()
    first.set_view(code, key, {"page": "p"})
    first.join(code, "s0", "Ann")
    first.answer(code, "q", "s0", "B")
    first.reveal(code, key, "q")
    del first
    again = open_store(env)
    assert again.view(code) == (2, {"page": "p", "locked": False})
    assert again.counts(code, "q") == {"B": 1} and again.revealed(code) == {"q"}
    assert again.nicknames(code, key) == ["Ann"] and again.is_teacher(code, key)


def test_idle_rooms_expire_after_12_hours(store, env):
    t0 = time.time()
    code, key = store.create_room(now=t0)
    store.join(code, "s0", "Ann", now=t0)
    assert store.room(code, now=t0 + 12 * H - 1) is not None
    assert store.version(code, now=t0 + 11 * H) == 0  # reads do not keep a room alive
    assert store.room(code, now=t0 + 12 * H) is None
    store.answer(code, "q", "s0", "A", now=t0 + 11 * H)  # a student write does
    assert store.expire(now=t0 + 22 * H) == 0 and store.counts(code, "q", now=t0 + 22 * H) == {"A": 1}
    store.set_view(code, key, {}, now=t0 + 20 * H)  # so does a teacher write
    assert store.room(code, now=t0 + 31 * H) is not None
    assert store.expire(now=t0 + 32 * H) == 1 and leftovers(env) == 0
    with pytest.raises(NoSuchRoom):
        store.version(code, now=t0 + 20 * H)


def test_limits_room_full_and_too_many_rooms(env):
    store = open_store(env, max_students=3, max_rooms=3)
    t0 = time.time()
    rooms = [store.create_room(now=t0) for _ in range(3)]
    with pytest.raises(TooManyRooms) as info:
        store.create_room(now=t0)
    assert str(info.value).endswith("please try again later.")
    store.close(*rooms[0])
    code, key = store.create_room(now=t0)
    for i in range(3):
        store.join(code, f"s{i}", f"n{i}", now=t0)
    with pytest.raises(RoomFull):
        store.join(code, "s3", "late", now=t0)
    store.join(code, "s2", "renamed", now=t0)  # already seated: allowed
    assert store.room(code, now=t0).students == 3
    assert len({store.create_room(now=t0 + 13 * H)[0] for _ in range(3)}) == 3  # idle rooms made way


def test_error_messages_are_sentences(store):
    code, key = store.create_room()
    with pytest.raises(NoSuchRoom) as info:
        store.version("ABCDEF" if code != "ABCDEF" else "ABCDEG")
    text = str(info.value)
    assert text[0].isupper() and text.endswith(".") and "'" not in text[:1]  # no KeyError quoting


def test_open_store_picks_backend(tmp_path):
    sql = open_store({"EXPLORER_CACHE": str(tmp_path / "cache")})
    assert isinstance(sql, SqliteStore) and sql.path == tmp_path / "cache" / "classroom.sqlite3"
    moved = open_store({"EXPLORER_CACHE": str(tmp_path), "EXPLORER_CLASSROOM_DB": str(tmp_path / "x" / "c.db")})
    assert moved.path == tmp_path / "x" / "c.db" and moved.path.exists()
    red = open_store({"EXPLORER_CLASSROOM_URL": "redis://127.0.0.1:1/3", "EXPLORER_CLASSROOM_DB": str(tmp_path / "y")})
    assert isinstance(red, RedisStore) and not (tmp_path / "y").exists()  # no server is contacted until first use
    assert red.r.connection_pool.connection_kwargs["db"] == 3


def test_redis_server_restart_keeps_room(make_redis_server):
    srv = make_redis_server()
    store = RedisStore(srv.url)
    code, key = store.create_room()
    store.set_view(code, key, {"page": "p"})
    store.join(code, "s0", "Ann")
    store.answer(code, "q", "s0", "A")
    srv.stop()
    srv.start()
    again = RedisStore(srv.url)
    assert again.view(code) == (1, {"page": "p", "locked": False}) and again.counts(code, "q") == {"A": 1}
    assert again.nicknames(code, key) == ["Ann"]
    ttl = redis.Redis.from_url(srv.url).ttl(f"explorer:room:{{{code}}}")
    assert 11 * H < ttl <= 12 * H  # the backstop TTL survived too


def test_roster_and_remove_a_student_who_cannot_sit_again_under_that_id(store):
    code, key = store.create_room()
    for i, nick in enumerate(["Ann", "bob", "Cy", "bob"]):
        store.join(code, f"s{i}", nick)
    assert store.roster(code, key) == [("s0", "Ann"), ("s1", "bob"), ("s3", "bob"), ("s2", "Cy")]
    store.answer(code, "q1", "s1", "A")
    store.answer(code, "q1", "s2", "B")
    store.reveal(code, key, "q1")
    store.answer(code, "q2", "s1", "A")
    store.answer(code, "q2", "s2", "A")
    before = store.version(code)
    assert store.remove(code, key, ["s1", "s3"]) == before + 1   # a change the removed sessions' polls see
    assert store.roster(code, key) == [("s0", "Ann"), ("s2", "Cy")] and store.room(code).students == 2
    assert not store.joined(code, "s1") and store.joined(code, "s2") and not store.joined(code, "never")
    assert store.counts(code, "q2") == {"A": 1}   # the removed student's open answer went
    assert store.counts(code, "q1") == {"A": 1, "B": 1}   # a revealed question's answers stay frozen
    for sid in ("s1", "s3"):
        with pytest.raises(Removed) as info:
            store.join(code, sid, "bob again")
        assert isinstance(info.value, PermissionError) and "join again with the code" in str(info.value)
    with pytest.raises(NotJoined):
        store.answer(code, "q2", "s1", "B")
    assert store.join(code, "s1-new", "bob") == "bob" and store.joined(code, "s1-new")   # a new id is a new seat
    with pytest.raises(NotTeacher):
        store.remove(code, key[:-1], ["s0"])
    with pytest.raises(BadInput):
        store.remove(code, key, [])
    assert store.joined(code, "s0") and store.version(code) == before + 1
    store.close(code, key)
    with pytest.raises(NoSuchRoom):
        store.joined(code, "s0")


def test_a_closed_room_refuses_new_students_and_keeps_the_class(store, env):
    code, key = store.create_room()
    store.join(code, "s0", "Ann")
    version = store.version(code)
    store.set_joinable(code, key, False)
    assert store.room(code).joinable is False and store.version(code) == version   # followers need not rerun
    with pytest.raises(RoomClosed) as info:
        store.join(code, "s1", "late")
    assert str(info.value).startswith("Your teacher has closed this class to new students")
    assert store.join(code, "s0", "Ann B") == "Ann B"   # already in: a reload or rename still works
    store.answer(code, "q", "s0", "A")
    with pytest.raises(NotTeacher):
        store.set_joinable(code, "forged", True)
    assert store.room(code).joinable is False
    store.set_joinable(code, key, True)
    assert store.join(code, "s1", "late") == "late" and store.room(code).students == 2
    assert store.room(code).joinable is True
    store.close(code, key)
    assert leftovers(env) == 0


def test_a_prank_of_sixty_joins_cannot_lock_the_class_out(store):
    code, key = store.create_room()
    prank = "203.0.113.66"
    took = 0
    for i in range(60):   # one script, one address
        try:
            store.join(code, f"p{i}", "prank", address=prank)
            took += 1
        except TooManyFromAddress as err:
            assert "from your network address" in str(err)
    assert took == SEATS_PER_ADDRESS < store.max_students
    for i in range(store.max_students - SEATS_PER_ADDRESS):   # the class still fits, each on its own address
        store.join(code, f"s{i}", f"student {i}", address=f"198.51.100.{i}")
    # The teacher removes the prank's seats by its nickname and closes the room: the script finds it shut.
    store.remove(code, key, [sid for sid, nick in store.roster(code, key) if nick == "prank"])
    store.set_joinable(code, key, False)
    for i in range(60, 120):
        with pytest.raises(RoomClosed):
            store.join(code, f"p{i}", "prank", address=prank)
    assert store.room(code).students == store.max_students - SEATS_PER_ADDRESS
    assert {n for _, n in store.roster(code, key)} == {f"student {i}" for i in range(30)}


def test_without_a_client_address_removing_frees_the_places(store):
    """Behind a proxy that is not trusted every join comes without an address: a prank can fill the room, and
    removing its seats gives them back to the class."""
    code, key = store.create_room()
    for i in range(store.max_students):
        store.join(code, f"p{i}", "prank")
    with pytest.raises(RoomFull):
        store.join(code, "s0", "Ann")
    store.remove(code, key, [sid for sid, _ in store.roster(code, key)])
    for i in range(25):
        store.join(code, f"s{i}", f"student {i}")
    store.set_joinable(code, key, False)
    with pytest.raises(RoomClosed):
        store.join(code, "p-new", "prank")
    assert store.room(code).students == 25


def test_seats_per_address_is_configurable(tmp_path):
    env = {"EXPLORER_CLASSROOM_DB": str(tmp_path / "c.sqlite3"), "EXPLORER_SEATS_PER_ADDRESS": "2"}
    capped, free = open_store(env), open_store({**env, "EXPLORER_SEATS_PER_ADDRESS": "0"})
    code, _ = capped.create_room()
    capped.join(code, "a", "A", address="10.0.0.5")
    capped.join(code, "b", "B", address="10.0.0.5")
    capped.join(code, "b", "B2", address="10.0.0.5")   # a rename takes no new seat
    with pytest.raises(TooManyFromAddress):
        capped.join(code, "c", "C", address="10.0.0.5")
    capped.join(code, "c", "C", address="10.0.0.6")
    free.join(code, "d", "D", address="10.0.0.5")   # 0: no cap
    assert capped.room(code).students == 4


def test_wrong_codes_are_counted_per_address_in_the_store(store, env):
    other = open_store(env)   # another replica: the same backend, another store object
    t0, addr = 1_000_000.0, "192.0.2.7"
    for i in range(1, WRONG_FREE_TRIES):
        assert store.wrong_code(addr, now=t0 + i) == 0
        assert other.code_wait(addr, now=t0 + i) == 0
    last = t0 + WRONG_FREE_TRIES
    assert other.wrong_code(addr, now=last) == WRONG_FIRST_WAIT_S   # the other replica's try counts on
    assert store.code_wait(addr, now=last + 4) == pytest.approx(WRONG_FIRST_WAIT_S - 4)
    assert store.code_wait("192.0.2.8", now=last + 4) == 0   # another address is not slowed
    assert store.code_wait(addr, now=last + WRONG_FIRST_WAIT_S) == 0
    assert store.wrong_code(addr, now=last + 11) == 2 * WRONG_FIRST_WAIT_S   # doubling
    waits = [store.wrong_code(addr, now=last + 12 + i) for i in range(8)]
    assert waits[-1] == WRONG_LONGEST_WAIT_S and waits == sorted(waits)
    quiet = last + 20 + WRONG_FORGET_S
    assert store.code_wait(addr, now=quiet) == 0 and store.wrong_code(addr, now=quiet) == 0   # forgotten
    if "EXPLORER_CLASSROOM_URL" in env:   # the address is kept hashed
        assert not any(addr.encode() in k for k in redis.Redis.from_url(env["EXPLORER_CLASSROOM_URL"]).keys("*"))
    else:
        db = Path(env["EXPLORER_CLASSROOM_DB"])
        files = [f for f in db.parent.iterdir() if f.name.startswith(db.name)]   # the WAL file included
        assert files and not any(addr.encode() in f.read_bytes() for f in files)
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM wrong").fetchone()[0] == 1
    store.expire(now=quiet + WRONG_FORGET_S + 1)   # old counts are swept (Redis: by their own TTL)
    assert store.code_wait(addr, now=quiet + 1) == 0


def test_an_older_sqlite_file_gets_the_new_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:   # the schema before rosters, closing and address caps
        db.executescript("""
            CREATE TABLE rooms(code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, created REAL NOT NULL,
                touched REAL NOT NULL, version INTEGER NOT NULL, locked INTEGER NOT NULL, view TEXT NOT NULL);
            CREATE TABLE students(code TEXT, student TEXT, nickname TEXT NOT NULL,
                PRIMARY KEY(code, student)) WITHOUT ROWID;""")
    old = SqliteStore(path)
    code, key = old.create_room()
    old.join(code, "s0", "Ann", address="10.0.0.1")
    assert old.room(code).joinable and old.roster(code, key) == [("s0", "Ann")]
    assert SqliteStore(path).joined(code, "s0")   # a second open finds the columns there


def test_qr_svg():
    a, b = qr_svg("http://127.0.0.1:8501/?room=K7M2QX"), qr_svg("http://127.0.0.1:8501/?room=K7M2QY")
    assert a.startswith("<svg") and a.rstrip().endswith("</svg>") and "<path" in a and 'xmlns="http' in a
    assert a != b and a == qr_svg("http://127.0.0.1:8501/?room=K7M2QX")


def test_a_lecture_hall_sets_its_own_room_size(tmp_path):
    env = {"EXPLORER_CLASSROOM_DB": str(tmp_path / "c.sqlite3"), "EXPLORER_SEATS_PER_ADDRESS": "0"}
    hall, small = open_store({**env, "EXPLORER_MAX_STUDENTS": "300"}), open_store({**env, "EXPLORER_MAX_STUDENTS": "3"})
    assert hall.max_students == 300 and open_store(env).max_students == MAX_STUDENTS
    code, _ = small.create_room()
    for i in range(3):
        small.join(code, f"s{i}", f"S{i}")
    with pytest.raises(RoomFull):
        small.join(code, "s3", "S3")
    hall.join(code, "s3", "S3")   # the same room, opened by a server that seats 300
    assert hall.room(code).students == 4


def test_each_run_does_not_open_a_connection_of_its_own(tmp_path, monkeypatch):
    """Streamlit runs every script run in a new thread: a thread that has finished hands its SQLite connection to
    the next, so thirty followers' runs do not each open and set up one."""
    import sqlite3
    import threading

    from explorer.classroom import sqlite_file

    opened = []
    real = sqlite3.connect
    monkeypatch.setattr(sqlite_file.sqlite3, "connect", lambda *a, **k: opened.append(1) or real(*a, **k))
    store = SqliteStore(tmp_path / "c.sqlite3")
    code, key = store.create_room()
    before = len(opened)
    for _ in range(20):   # one run after another, each in its own thread; no gc.collect(), as in Streamlit: a
        t = threading.Thread(target=lambda: store.version(code))   # finished thread's connection is handed on as
        t.start()                                                  # soon as the thread is dropped
        t.join()
        del t
    assert len(opened) - before <= 2
    store.set_view(code, key, {"page": "pages/heatmaps.py"})   # and the store still writes and reads
    got = []
    t = threading.Thread(target=lambda: got.append(store.view(code)[1]["page"]))
    t.start()
    t.join()
    assert got == ["pages/heatmaps.py"]
