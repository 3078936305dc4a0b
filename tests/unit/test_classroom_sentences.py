"""The class's sentences in the classroom store: the same bodies run on SQLite (a temp file) and Redis (a real
redis-server), as tests/unit/test_classroom_store.py does."""
import sqlite3
import threading

import pytest
import redis

from explorer.classroom import BadInput, NoSuchRoom, NotJoined, NotTeacher, open_store
from explorer.classroom.sentences import SENTENCE_MAX, SentenceHidden, SentencesClosed, clean_sentence


@pytest.fixture
def env(classroom_env):
    return classroom_env


@pytest.fixture
def room(class_room):
    return class_room(["Ann", "Bob", "Cy"])


def test_one_sentence_per_student_changed_until_closed(room):
    store, code, key = room
    assert store.sentence_round(code).state == "" and store.class_sentences(code) == []
    with pytest.raises(SentencesClosed):   # nothing asked yet
        store.write_sentence(code, "s0", "The cat sat.")
    v0 = store.version(code)
    assert store.open_sentences(code, key, "Write a sentence where 'it' could mean two things") > v0
    assert store.write_sentence(code, "s1", "  The dog chased it.  ") == "The dog chased it."
    store.write_sentence(code, "s0", "The cat sat on the mat because it was warm.")
    store.write_sentence(code, "s1", "The dog chased the ball until it stopped.")   # a change keeps its place
    assert store.class_sentences(code) == ["The dog chased the ball until it stopped.",
                                           "The cat sat on the mat because it was warm."]
    r = store.sentence_round(code)
    assert (r.number, r.state, r.wrote, r.open) == (1, "open", 2, True)
    assert r.prompt.startswith("Write a sentence")
    assert [(s.student, s.hidden) for s in store.sentences(code, key)] == [("s1", False), ("s0", False)]
    assert store.my_sentence(code, "s0").number == 2 and store.my_sentence(code, "s2") is None
    store.close_sentences(code, key)
    with pytest.raises(SentencesClosed):
        store.write_sentence(code, "s2", "Too late.")
    with pytest.raises(SentencesClosed):
        store.write_sentence(code, "s0", "A change after closing.")
    assert store.class_sentences(code)[1] == "The cat sat on the mat because it was warm."


def test_a_late_student_writes_until_the_round_closes(room):
    store, code, key = room
    store.open_sentences(code, key, "Use 'it'.")
    store.join(code, "late", "Dee")
    store.write_sentence(code, "late", "It rained.")
    assert store.class_sentences(code) == ["It rained."]


def test_hide_is_final_for_the_projector_and_the_writer(room):
    store, code, key = room
    store.open_sentences(code, key, "Use 'it'.")
    for sid, text in (("s0", "One it."), ("s1", "<script>alert(1)</script>"), ("s2", "Three it.")):
        store.write_sentence(code, sid, text)
    v = store.version(code)
    assert store.hide_sentence(code, key, "s1") > v
    assert store.class_sentences(code) == ["One it.", "Three it."]
    assert store.my_sentence(code, "s1").hidden and store.my_sentence(code, "s1").number is None
    assert store.my_sentence(code, "s2").number == 2
    with pytest.raises(SentenceHidden):
        store.write_sentence(code, "s1", "A new try to get round the teacher.")
    store.show_sentences(code, key, {"model": "m", "layer": 0, "head": 1, "word": "it"})
    r = store.sentence_round(code)
    assert r.state == "shown" and r.figure == {"model": "m", "layer": 0, "head": 1, "word": "it"}
    assert store.class_sentences(code) == ["One it.", "Three it."]   # still hidden after showing
    assert [s.hidden for s in store.sentences(code, key)] == [False, True, False]


def test_a_new_round_starts_empty(room):
    store, code, key = room
    store.open_sentences(code, key, "First.")
    store.write_sentence(code, "s0", "Old sentence.")
    store.hide_sentence(code, key, "s0")
    store.show_sentences(code, key, {"head": 0})
    store.open_sentences(code, key, "Second.")
    r = store.sentence_round(code)
    assert (r.number, r.prompt, r.state, r.figure, r.wrote) == (2, "Second.", "open", None, 0)
    store.write_sentence(code, "s0", "New sentence.")   # no longer hidden: a new round
    assert store.class_sentences(code) == ["New sentence."]


def test_only_the_teacher_and_only_joined_students(room):
    store, code, key = room
    for call in (lambda k: store.open_sentences(code, k, "p"), lambda k: store.close_sentences(code, k),
                 lambda k: store.hide_sentence(code, k, "s0"), lambda k: store.show_sentences(code, k, {}),
                 lambda k: store.sentences(code, k)):
        with pytest.raises(NotTeacher):
            call("wrong key")
    store.open_sentences(code, key, "p")
    with pytest.raises(NotJoined):
        store.write_sentence(code, "stranger", "Hello there.")
    store.remove(code, key, ["s0"])
    store.open_sentences(code, key, "again")
    assert store.sentence_round(code).wrote == 0


@pytest.mark.parametrize("bad", ["", "   ", "\t\n", "x" * (SENTENCE_MAX + 1), "bell\x07here", "nul\x00", None, 42])
def test_bad_sentences_get_one_clear_sentence_and_change_nothing(room, bad):
    store, code, key = room
    store.open_sentences(code, key, "p")
    store.write_sentence(code, "s0", "Kept.")
    with pytest.raises(BadInput) as err:
        store.write_sentence(code, "s0", bad)
    message = str(err.value)
    assert message[0].isupper() and message.endswith(".") and "\n" not in message
    assert store.class_sentences(code) == ["Kept."]


def test_any_script_is_kept_as_written():
    for text in ("Das Tier überquerte die Straße nicht, weil es müde war.", "القطة نامت لأنها كانت متعبة",
                 "The 🐱 sat because it was tired 😴", "<b>bold</b> & **stars**", "a\nline\tbreak"):
        assert clean_sentence(text) == text.replace("\n", " ").replace("\t", " ")
    assert len(clean_sentence("x" * SENTENCE_MAX)) == SENTENCE_MAX


def test_five_hundred_submissions_from_one_student_keep_one_sentence(room):
    store, code, key = room
    store.open_sentences(code, key, "p")
    store.write_sentence(code, "s1", "Bob's sentence.")
    threads = [threading.Thread(target=lambda k=k: [store.write_sentence(code, "s0", f"spam {k} {i}")
                                                    for i in range(125)]) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    mine = [s for s in store.sentences(code, key) if s.student == "s0"]
    assert len(mine) == 1 and mine[0].text.startswith("spam ") and mine[0].text.endswith(" 124")
    assert store.class_sentences(code)[0] == "Bob's sentence."   # nothing else lost, its place kept
    assert store.sentence_round(code).wrote == 2


def test_ending_the_class_deletes_the_sentences(room, env):
    store, code, key = room
    store.open_sentences(code, key, "p")
    store.write_sentence(code, "s0", "Secret sentence.")
    store.close(code, key)
    with pytest.raises(NoSuchRoom):
        store.class_sentences(code)
    if "EXPLORER_CLASSROOM_URL" in env:
        assert [k for k in redis.Redis.from_url(env["EXPLORER_CLASSROOM_URL"]).keys("*")
                if k != b"explorer:rooms"] == []
    else:
        with sqlite3.connect(env["EXPLORER_CLASSROOM_DB"]) as db:
            assert db.execute("SELECT COUNT(*) FROM sentences").fetchone()[0] == 0
            assert db.execute("SELECT COUNT(*) FROM sentence_rounds").fetchone()[0] == 0


def test_a_restart_keeps_every_sentence(room, env):
    store, code, key = room
    store.open_sentences(code, key, "p")
    store.write_sentence(code, "s2", "Still here.")
    again = open_store(env)
    assert again.class_sentences(code) == ["Still here."] and again.sentence_round(code).open


def test_the_report_holds_the_sentences_not_hidden_without_names(room):
    import csv
    import io

    from explorer.classroom import report

    store, code, key = room
    assert report.collect_sentences(store, code, key) is None   # nothing asked yet
    store.open_sentences(code, key, "Use it.")
    store.write_sentence(code, "s0", "=SUM(A1) it")   # a spreadsheet formula stays text
    store.write_sentence(code, "s1", "Hidden it.")
    store.write_sentence(code, "s2", "Kept it.")
    store.hide_sentence(code, key, "s1")
    rows = list(csv.reader(io.StringIO(report.csv_text([], report.collect_sentences(store, code, key)))))
    assert rows[1:] == [["Use it.", "1", "'=SUM(A1) it", "1", ""], ["Use it.", "1", "Kept it.", "1", ""]]
    assert "Ann" not in str(rows) and "Cy" not in str(rows)
    with pytest.raises(NotTeacher):
        report.collect_sentences(store, code, "wrong key")
