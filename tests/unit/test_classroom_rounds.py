"""Peer Instruction rounds in the classroom store, on SQLite (a temp file) and Redis (a real redis-server): votes
hidden until shown, round 2 apart from round 1, one vote per student per round, a restart keeps both rounds."""
import re
import sqlite3

import pytest

from explorer.classroom import (
    AlreadyRevealed,
    BadInput,
    NotTeacher,
    Progress,
    RedisStore,
    RoundClosed,
    SqliteStore,
)
from explorer.classroom.polls import next_state

QUESTION = dict(prompt="Which word does **it** attend to?", options=("animal", "street", "<b>tired</b>"),
                correct="animal")


@pytest.fixture
def room(class_room):
    """Four students in a room on a fresh backend: SQLite, then Redis (``class_room`` in conftest)."""
    return class_room([f"n{i}" for i in range(4)])


def test_a_poll_moves_through_its_rounds_and_keeps_them_apart(room):
    store, code, key = room
    store.ask(code, key, "q", **QUESTION)
    assert store.progress(code, "q") == Progress(1, "open", 0) and store.progress(code, "q").shown_rounds == ()
    for i, option in enumerate(["street", "animal", "street"]):
        assert store.answer(code, "q", f"s{i}", option) == 1
    store.answer(code, "q", "s0", "<b>tired</b>")   # a change of mind replaces the vote: one per student
    assert store.progress(code, "q") == Progress(1, "open", 3)
    assert store.counts(code, "q") == {"<b>tired</b>": 1, "animal": 1, "street": 1}
    version = store.version(code)
    assert store.show(code, key, "q", round=1) == version + 1   # followers rerun to draw the counts
    assert store.progress(code, "q") == Progress(1, "shown", 3) and store.progress(code, "q").shown_rounds == (1,)
    with pytest.raises(RoundClosed) as info:
        store.answer(code, "q", "s3", "animal")   # round 1 closed: a late vote is refused
    assert isinstance(info.value, AlreadyRevealed) and "round of votes is closed" in str(info.value)
    store.again(code, key, "q", round=1)
    assert store.progress(code, "q") == Progress(2, "open", 0) and store.progress(code, "q").shown_rounds == (1,)
    for i, option in enumerate(["animal", "animal", "street", "animal"]):
        assert store.answer(code, "q", f"s{i}", option) == 2
    store.answer(code, "q", "s2", "animal")   # changeable until the round closes
    assert store.counts(code, "q", round=1) == {"<b>tired</b>": 1, "animal": 1, "street": 1}   # round 1 untouched
    assert store.counts(code, "q", round=2) == store.counts(code, "q") == {"animal": 4}
    assert store.my_answer(code, "q", "s0", round=1) == "<b>tired</b>" and store.my_answer(code, "q", "s0") == "animal"
    assert store.my_answer(code, "q", "s3", round=1) is None and store.my_answer(code, "q", "s3", round=2) == "animal"
    assert store.revealed(code) == frozenset()
    store.show(code, key, "q", round=2)   # the last round's "Show answers" is the reveal
    assert store.progress(code, "q") == Progress(2, "revealed", 4) and store.progress(code, "q").shown_rounds == (1, 2)
    assert store.revealed(code) == {"q"}
    with pytest.raises(AlreadyRevealed):
        store.answer(code, "q", "s1", "street")
    assert store.my_answers(code, "s0") == {"q": {1: "<b>tired</b>", 2: "animal"}}
    assert store.my_answers(code, "s3") == {"q": {2: "animal"}}
    [asked] = store.questions(code)
    assert (asked.qid, asked.prompt, asked.options, asked.correct, asked.round, asked.state) == (
        "q", QUESTION["prompt"], QUESTION["options"], "animal", 2, "revealed")


def test_stale_clicks_and_wrong_keys_change_nothing(room):
    store, code, key = room
    store.answer(code, "q", "s0", "a")
    store.again(code, key, "q")   # round 1 is still open: "again" comes only after the counts were shown
    assert store.progress(code, "q") == Progress(1, "open", 1)
    store.show(code, key, "q", round=1)
    store.again(code, key, "q", round=1)
    store.show(code, key, "q", round=1)   # a second tab's stale "Show answers" of round 1: round 2 stays open
    store.again(code, key, "q", round=1)
    assert store.progress(code, "q") == Progress(2, "open", 0)
    for op in (store.show, store.again, store.reveal):
        with pytest.raises(NotTeacher):
            op(code, key[:-1] + "x", "q")
    with pytest.raises(NotTeacher):
        store.ask(code, "forged", "q", **QUESTION)
    with pytest.raises(BadInput):
        store.show(code, key, "q", round=3)
    store.reveal(code, key, "q")   # the right answer, from any state
    assert store.progress(code, "q") == Progress(2, "revealed", 0)


def test_the_stored_question_follows_round_one_then_stays(room):
    store, code, key = room
    store.ask(code, key, "q", **QUESTION)
    version = store.version(code)
    store.ask(code, key, "q", prompt="moved", options=["x", "y"], correct="y")   # a control moved: replaced
    assert store.version(code) == version   # nothing for followers to redraw
    assert store.questions(code)[0].options == ("x", "y")
    store.show(code, key, "q")
    store.ask(code, key, "q", **QUESTION)   # once a round has closed, the question the class answered stays
    assert store.questions(code)[0].prompt == "moved"
    for bad in [dict(QUESTION, correct="nope"), dict(QUESTION, options=()), dict(QUESTION, prompt="x" * 20_000)]:
        with pytest.raises(BadInput):
            store.ask(code, key, "q2", **bad)
    store.answer(code, "voted-first", "s0", "a")   # a vote on a question the teacher's page never stored
    assert [(q.qid, q.prompt, q.correct) for q in store.questions(code)] == [("q", "moved", "y"),
                                                                              ("voted-first", "voted-first", None)]


def test_removing_a_student_takes_their_open_votes_of_both_rounds(room):
    store, code, key = room
    for qid in ("open", "done"):
        store.answer(code, qid, "s1", "a")
        store.show(code, key, qid)
        store.again(code, key, qid)
        store.answer(code, qid, "s1", "b")
        store.answer(code, qid, "s2", "b")
    store.reveal(code, key, "done")
    store.remove(code, key, ["s1"])
    assert store.counts(code, "open", round=1) == {} and store.counts(code, "open", round=2) == {"b": 1}
    assert store.counts(code, "done", round=1) == {"a": 1} and store.counts(code, "done", round=2) == {"b": 2}


def test_the_lua_scripts_know_as_many_rounds_as_python():
    from explorer.classroom import ROUNDS, redis_scripts

    loops = re.findall(r"for r = 1, (\d+) do", redis_scripts.PRELUDE + redis_scripts.TEACHER)
    assert loops and set(loops) == {str(ROUNDS)}
    assert f"p.r >= {ROUNDS}" in redis_scripts.TEACHER and f"p.r < {ROUNDS}" in redis_scripts.TEACHER


def test_the_state_machine():
    assert next_state("show", 1, "open", None) == (1, "shown")
    assert next_state("show", 2, "open", 2) == (2, "revealed")
    assert next_state("again", 1, "shown", 1) == (2, "open")
    assert next_state("again", 2, "shown", None) == (2, "shown")   # no third round
    assert next_state("show", 2, "open", 1) == (2, "open")   # stale
    assert next_state("reveal", 2, "open", 1) == (2, "revealed")
    assert next_state("again", 1, "revealed", None) == (1, "revealed")


def test_a_restart_mid_question_keeps_both_rounds_sqlite(tmp_path):
    path = tmp_path / "c.sqlite3"
    first = SqliteStore(path)
    code, key = _two_rounds(first)
    del first
    _check_two_rounds(SqliteStore(path), code, key)


def test_a_restart_mid_question_keeps_both_rounds_redis(make_redis_server):
    srv = make_redis_server()
    code, key = _two_rounds(RedisStore(srv.url))
    srv.stop()
    srv.start()   # redis-server itself restarts (append-only file), and so does the app's store object
    _check_two_rounds(RedisStore(srv.url), code, key)


def _two_rounds(store):
    code, key = store.create_room()
    for i in range(3):
        store.join(code, f"s{i}", f"n{i}")
    store.ask(code, key, "q", **QUESTION)
    for i, option in enumerate(["street", "street", "animal"]):
        store.answer(code, "q", f"s{i}", option)
    store.show(code, key, "q")
    store.again(code, key, "q")
    store.answer(code, "q", "s0", "animal")   # mid round 2: one vote in
    return code, key


def _check_two_rounds(store, code, key):
    assert store.progress(code, "q") == Progress(2, "open", 1)
    assert store.counts(code, "q", round=1) == {"street": 2, "animal": 1}
    assert store.counts(code, "q", round=2) == {"animal": 1}
    store.answer(code, "q", "s1", "animal")   # the round goes on after the restart
    assert store.show(code, key, "q") and store.progress(code, "q") == Progress(2, "revealed", 2)
    assert store.questions(code)[0].correct == "animal"


def test_an_sqlite_file_from_before_rounds_keeps_its_answers(tmp_path):
    path = tmp_path / "old.sqlite3"
    store = SqliteStore(path)
    code, key = store.create_room()
    store.join(code, "s0", "Ann")
    with sqlite3.connect(path) as db:   # the tables before rounds, with one answer and one revealed question
        db.executescript(f"""
            CREATE TABLE answers(code TEXT, qid TEXT, student TEXT, option TEXT NOT NULL,
                PRIMARY KEY(code, qid, student)) WITHOUT ROWID;
            CREATE TABLE revealed(code TEXT, qid TEXT, PRIMARY KEY(code, qid)) WITHOUT ROWID;
            INSERT INTO answers VALUES('{code}', 'q', 's0', 'A'), ('{code}', 'p', 's0', 'B');
            INSERT INTO revealed VALUES('{code}', 'q');""")
    again = SqliteStore(path)
    assert again.counts(code, "q", round=1) == {"A": 1} and again.revealed(code) == {"q"}
    assert again.progress(code, "p") == Progress(1, "open", 1)
    with sqlite3.connect(path) as db:
        assert not db.execute("SELECT 1 FROM sqlite_master WHERE name IN ('answers', 'revealed')").fetchall()
