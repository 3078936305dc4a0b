"""Homework in the classroom store: the same test bodies against SQLite and a real redis-server. A homework is a
room whose view names a lesson, with every question stored before a student comes; a student votes once per
question (a second vote, from any device with the same id, is refused and the first counts); forged questions,
options and codes are refused with a sentence; the report counts who started and finished; ending it deletes
everything, and a link opened later says it has ended; a server restart in the middle loses nothing."""
import sqlite3

import pytest
import redis

from explorer.classroom import (
    AlreadyAnswered,
    BadInput,
    InvalidCode,
    NoSuchRoom,
    NotJoined,
    NotTeacher,
    SqliteStore,
    open_store,
)
from explorer.classroom.report import collect, csv_text

QUESTIONS = [("lesson-1-a", "Rows sum to?", ["1", "0"], "1"), ("lesson-3-b", "Mask?", ["yes", "no", "maybe"], "no")]


@pytest.fixture
def store(classroom_env):
    return open_store(classroom_env)


def homework(store, now=None):
    return store.set_homework("app:1-attention", "Attention", QUESTIONS, now, steps=4)


def leftovers(env) -> int:
    if "EXPLORER_CLASSROOM_URL" in env:
        return len([k for k in redis.Redis.from_url(env["EXPLORER_CLASSROOM_URL"]).keys("*") if k != b"explorer:rooms"])
    with sqlite3.connect(env["EXPLORER_CLASSROOM_DB"]) as db:
        return sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                   for t in ("rooms", "students", "votes", "questions", "homework"))


def test_a_homework_names_its_lesson_and_stores_its_questions(store):
    code, key = homework(store)
    info = store.homework(code)
    assert (info.source, info.title, info.steps) == ("app:1-attention", "Attention", 4)
    assert [(q.qid, q.correct, q.options) for q in store.questions(code)] == [
        ("lesson-1-a", "1", ("1", "0")), ("lesson-3-b", "no", ("yes", "no", "maybe"))]
    live, _ = store.create_room()
    assert store.homework(live) is None   # a live class's code is not homework


def test_one_vote_per_student_and_question_the_first_counts(store):
    code, key = homework(store)
    store.join(code, "ann-1", "Ann")
    store.homework_answer(code, "lesson-1-a", "ann-1", "0")
    with pytest.raises(AlreadyAnswered, match="first answer counts"):    # the same id on a second device
        store.homework_answer(code, "lesson-1-a", "ann-1", "1")
    assert store.counts(code, "lesson-1-a") == {"0": 1} and store.my_answer(code, "lesson-1-a", "ann-1") == "0"
    store.homework_answer(code, "lesson-3-b", "ann-1", "no")
    assert store.my_answers(code, "ann-1") == {"lesson-1-a": {1: "0"}, "lesson-3-b": {1: "no"}}


def test_forged_questions_options_codes_and_strangers_are_refused(store):
    code, key = homework(store)
    store.join(code, "bob-1", "(no nickname)")
    with pytest.raises(BadInput, match="not a question of this homework"):
        store.homework_answer(code, "lesson-9-forged", "bob-1", "1")
    with pytest.raises(BadInput, match="not a question of this homework"):
        store.homework_answer(code, "lesson-1-a", "bob-1", "42")
    with pytest.raises(NotJoined):
        store.homework_answer(code, "lesson-1-a", "stranger", "1")
    with pytest.raises(InvalidCode):
        store.homework("not a code!")
    with pytest.raises(NoSuchRoom, match="homework has ended"):
        store.homework("ZZZZZZ")
    live, _ = store.create_room()
    store.join(live, "bob-1", "Bob")
    store.answer(live, "lesson-1-a", "bob-1", "1")   # a live poll is untouched by homework
    with pytest.raises(BadInput, match="live class"):
        store.homework_answer(live, "lesson-1-a", "bob-1", "1")
    with pytest.raises(BadInput):
        store.homework_step(code, "bob-1", -1)
    assert store.counts(code, "lesson-1-a") == {}


def test_started_and_finished_and_the_report_equals_the_votes(store):
    code, key = homework(store)
    for sid in ("a", "b", "c"):
        store.join(code, f"student-{sid}", sid)
    store.homework_step(code, "student-a", 3, finished=True)
    store.homework_step(code, "student-b", 2)
    store.homework_step(code, "student-b", 1)                # going back keeps the furthest step
    assert store.homework_place(code, "student-b") == (2, False)
    assert store.homework_place(code, "student-c") == (0, False)
    store.homework_step(code, "student-a", 0)                 # finished stays finished
    assert store.homework_place(code, "student-a") == (3, True)
    progress = store.homework_progress(code, key)
    assert (progress.started, progress.finished) == (3, 1)
    with pytest.raises(NotTeacher):
        store.homework_progress(code, "wrong key")
    for sid, vote in (("a", "1"), ("b", "0"), ("c", "1")):
        store.homework_answer(code, "lesson-1-a", f"student-{sid}", vote)
    lines = csv_text(collect(store, code, key)).splitlines()
    assert lines[1:3] == ["Rows sum to?,1,1,2,yes", "Rows sum to?,1,0,1,no"]


def test_a_removed_student_no_longer_counts_as_started_or_finished(store):
    """On every store (the Redis one on a real redis-server): a student who finished and is then removed from the
    room leaves the teacher's counts, as they leave the roster."""
    code, key = homework(store)
    for sid in ("a", "b", "c"):
        store.join(code, f"student-{sid}", sid)
    store.homework_step(code, "student-a", 3, finished=True)
    store.homework_step(code, "student-b", 3, finished=True)
    progress = store.homework_progress(code, key)
    assert (progress.started, progress.finished) == (3, 2)
    store.remove(code, key, ["student-b"])
    progress = store.homework_progress(code, key)
    assert (progress.started, progress.finished) == (2, 1)
    assert sorted(n for _, n in store.roster(code, key)) == ["a", "c"]


def test_a_homework_asks_for_a_sentence_and_its_report_holds_them_without_names(store, classroom_env):
    from explorer.classroom.report import collect_sentences, summary_html

    with pytest.raises(BadInput):   # a prompt that cannot be stored: refused before any room is made
        store.set_homework("app:1-attention", "Attention", QUESTIONS, steps=4, sentence_prompt="x" * 301)
    assert leftovers(classroom_env) == 0
    plain, plain_key = homework(store)
    assert store.sentence_round(plain).number == 0 and collect_sentences(store, plain, plain_key) is None
    code, key = store.set_homework("app:1-attention", "Attention", QUESTIONS, steps=4,
                                   sentence_prompt="  Write one where 'it' could mean two things. ")
    r = store.sentence_round(code)
    assert (r.prompt, r.open) == ("Write one where 'it' could mean two things.", True)   # open while it runs
    for sid, name in (("ann-1", "Ann"), ("bo-2", "Bo"), ("cy-3", "Cy")):
        store.join(code, sid, name)
    store.write_sentence(code, "ann-1", "The dog chased the cat because it was hungry.")
    store.write_sentence(code, "bo-2", "<b>It</b> rained, =1+1")
    store.write_sentence(code, "ann-1", "The cat chased the dog because it was hungry.")   # changed: kept in place
    store.write_sentence(code, "cy-3", "rude words")
    store.hide_sentence(code, key, "cy-3")
    with pytest.raises(NotJoined):
        store.write_sentence(code, "stranger", "hello")
    assert [(s.student, s.hidden) for s in store.sentences(code, key)] == [("ann-1", False), ("bo-2", False),
                                                                          ("cy-3", True)]
    found = collect_sentences(store, code, key)
    assert found.texts == ("The cat chased the dog because it was hungry.", "<b>It</b> rained, =1+1")
    lines = csv_text(collect(store, code, key), found).splitlines()
    assert lines[-2:] == ["Write one where 'it' could mean two things.,1,The cat chased the dog because it was "
                          "hungry.,1,", "Write one where 'it' could mean two things.,1,\"<b>It</b> rained, =1+1\",1,"]
    page = summary_html(collect(store, code, key), room=code, when="now", sentences=found)
    assert "&lt;b&gt;It&lt;/b&gt; rained" in page and "<b>It</b>" not in page
    assert "rude words" not in page and "Ann" not in page and "Cy" not in page   # hidden, and no names
    store.close(code, key)
    store.close(plain, plain_key)
    assert leftovers(classroom_env) == 0
    if "EXPLORER_CLASSROOM_DB" in classroom_env:
        with sqlite3.connect(classroom_env["EXPLORER_CLASSROOM_DB"]) as db:
            assert db.execute("SELECT COUNT(*) FROM sentences").fetchone()[0] == 0
            assert db.execute("SELECT COUNT(*) FROM sentence_rounds").fetchone()[0] == 0


def test_ending_deletes_everything_and_a_later_link_says_it_ended(store, classroom_env):
    code, key = homework(store)
    store.join(code, "ann-1", "Ann")
    store.homework_answer(code, "lesson-1-a", "ann-1", "1")
    store.homework_step(code, "ann-1", 1)
    store.close(code, key)
    assert leftovers(classroom_env) == 0
    for call in (lambda: store.homework(code), lambda: store.homework_answer(code, "lesson-1-a", "ann-1", "0"),
                 lambda: store.homework_step(code, "ann-1", 2)):
        with pytest.raises(NoSuchRoom, match="homework has ended"):
            call()


def test_a_restart_in_the_middle_keeps_answers_and_places(tmp_path):
    path = tmp_path / "classroom.sqlite3"
    first = SqliteStore(path)
    code, key = homework(first)
    first.join(code, "ann-1", "Ann")
    first.homework_answer(code, "lesson-1-a", "ann-1", "1")
    first.homework_step(code, "ann-1", 2)
    again = SqliteStore(path)                                  # the server restarted: a new store on the same file
    assert again.homework_place(code, "ann-1") == (2, False) and again.homework(code).title == "Attention"
    with pytest.raises(AlreadyAnswered):
        again.homework_answer(code, "lesson-1-a", "ann-1", "0")
    again.homework_answer(code, "lesson-3-b", "ann-1", "no")
    again.homework_step(code, "ann-1", 3, finished=True)
    assert again.homework_progress(code, key).finished == 1
    assert again.counts(code, "lesson-1-a") == {"1": 1}


def test_two_hundred_students_at_once_one_vote_each_and_the_rest_told_the_room_is_full(classroom_env):
    """200 students open the homework link at the same moment, each on its own thread, and each answers twice (a
    second device): a store sized for a lecture (max 300) seats all 200, counts one vote each (the first) and keeps
    every answer; a store of the default size seats exactly MAX_STUDENTS and tells everyone else in one sentence."""
    from concurrent.futures import ThreadPoolExecutor

    from explorer.classroom import MAX_STUDENTS, RoomFull

    def attempt(store, code, i):
        try:
            store.join(code, f"s-{i}", f"n{i}")
        except RoomFull as full:
            return str(full)
        store.homework_answer(code, "lesson-1-a", f"s-{i}", "1" if i % 3 else "0")
        try:
            store.homework_answer(code, "lesson-1-a", f"s-{i}", "0" if i % 3 else "1")
        except AlreadyAnswered:
            return "once"
        return "twice"

    for size, seated in ((300, 200), (None, MAX_STUDENTS)):
        limits = {"max_students": size} if size else {}
        store = open_store(classroom_env, seats_per_address=0, **limits)
        code, key = homework(store)
        with ThreadPoolExecutor(32) as pool:
            said = list(pool.map(attempt, [store] * 200, [code] * 200, range(200)))
        assert said.count("once") == seated and "twice" not in said
        assert set(said) - {"once"} <= {f"This room is full ({MAX_STUDENTS} students); please ask your teacher."}
        voted = [i for i, s in enumerate(said) if s == "once"]
        assert store.counts(code, "lesson-1-a") == {k: v for k, v in (
            ("0", sum(i % 3 == 0 for i in voted)), ("1", sum(i % 3 != 0 for i in voted))) if v}
        assert store.homework_progress(code, key).started == seated
        store.close(code, key)
