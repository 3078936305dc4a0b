"""Homework in AppTest (one AppTest per browser session, one store): the teacher sets a lesson as homework from
the Lessons page; three students run it alone and stop at different steps, each voting once per question and
seeing the answer after; the teacher's CSV equals the votes cast and the panel counts who started and finished; a
second device with a student's own link sees their vote and cannot vote again; a server restart in the middle (the
SQLite store opened again) loses nothing; a garbled code and a link after the end each say so in one sentence. A
homework that asks for a sentence: each student writes theirs under the lesson bar, the teacher sees them with the
nicknames (the projector view without), hides one, and the report holds the rest; ending it deletes them."""
import csv
import io
import os
import sqlite3
from pathlib import Path

import pytest
from pagetest import APP, click, seat_of
from streamlit.testing.v1 import AppTest
from test_lessons_app import texts

from explorer.lessons import catalogue, find
from explorer.ui.live import homework_panel, lesson_bar, membership

LESSON = """title = "Softmax at home"
about = "Three lab questions."
{steps}"""
STEP = """
[[step]]
title = "Step {n}"
page = "{page}"
minutes = 2
notes = "n"
[step.question]
prompt = "Question {n}?"
options = ["yes {n}", "no {n}"]
answer = "yes {n}"
explain = "Because {n}."
"""
PAGES = ("pages/lab_softmax.py", "pages/lab_masks.py", "pages/lab_worked_example.py")


@pytest.fixture
def lesson(tmp_path, monkeypatch, fresh_store):
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "home.toml").write_text(LESSON.format(steps="".join(STEP.format(n=n, page=p)
                                                                  for n, p in enumerate(PAGES, 1))))
    monkeypatch.setenv("EXPLORER_LESSONS_DIR", str(folder))
    return next(x for x in catalogue()[0] if x.title == "Softmax at home")


def lessons_page(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update(query)
    at.run()
    at.switch_page("pages/lessons.py").run()
    assert not at.exception, at.exception
    return at


def set_homework(lesson) -> tuple[AppTest, str, str]:
    teacher = lessons_page()
    slug = lesson.source.replace(":", "-")
    [b for b in teacher.button if b.key == f"_lessons_{slug}_homework"][0].click().run()
    (code, key), = teacher.session_state[homework_panel.SET].items()
    assert "0 started, 0 finished" in texts(teacher)
    return teacher, code, key


def student(code: str, nickname: str = "", me: str | None = None) -> AppTest:
    at = lessons_page(homework=code, **({"me": me} if me else {}))
    if nickname:
        at.text_input(key="_hw_nick").input(nickname)
    click(at, "Go on with my homework" if me else "Start the homework")
    return on_step(at)


def on_step(at: AppTest) -> AppTest:
    """The step's page, as the browser lands on it (AppTest keeps running the page it was switched to)."""
    lesson, index = at.session_state[lesson_bar.LESSON], at.session_state[lesson_bar.STEP]
    at.switch_page(lesson.steps[index].page).run()
    assert not at.exception, at.exception
    return at


def step(at: AppTest, label: str) -> AppTest:
    return on_step(click(at, label))


def vote(at: AppTest, lesson, index: int, option: str) -> None:
    qid = lesson.question_id(index)
    at.radio(key=f"_hw_{qid}_answer").set_value(option)
    click(at, "Send my answer")


def test_three_students_at_different_steps_reach_the_report_and_a_restart_loses_nothing(lesson, downloads):
    teacher, code, key = set_homework(lesson)
    ann, bob, cy = student(code, "Ann"), student(code), student(code, "Cy")   # Bob keeps no nickname
    assert "step **1 of 3**" in texts(ann) and "Question 1?" in texts(ann)
    assert "Your notes" not in texts(ann)                      # the teacher's notes stay off a student's screen
    vote(ann, lesson, 0, "yes 1")
    assert "You said yes 1: right." in texts(ann) and "Because 1." in texts(ann)   # the answer, after the vote
    step(ann, "Next")
    vote(ann, lesson, 1, "no 2")
    assert "the answer is yes 2" in texts(ann)
    step(ann, "Next")
    vote(ann, lesson, 2, "yes 3")
    click(ann, "Finish the lesson")
    assert "You finished the homework" in texts(ann) and lesson_bar.LESSON not in ann.session_state
    vote(bob, lesson, 0, "no 1")
    step(bob, "Next")
    vote(cy, lesson, 0, "yes 1")

    # a server restart in the middle: the store is opened again on the same file, sessions start afresh
    me = bob.session_state[homework_panel.MINE]["me"]
    membership.store.clear()
    bob = student(code, me=me)
    assert "step **2 of 3**" in texts(bob)          # where Bob was
    vote(bob, lesson, 1, "yes 2")
    step(bob, "Back")
    assert "You said no 1" in texts(bob) and not [r for r in bob.radio if r.key.startswith("_hw_")]

    # Bob's link on a second device: his vote is there, and a second vote is refused
    other = student(code, me=me)
    assert "You said yes 2" in texts(other)
    with pytest.raises(Exception, match="first answer counts"):
        membership.store().homework_answer(code, lesson.question_id(1), me, "no 2")

    teacher.run()
    assert "3 started, 1 finished" in texts(teacher)
    rows = list(csv.reader(io.StringIO(downloads(".csv"))))   # the teacher's "Votes as CSV"
    cast = {("Question 1?", "yes 1"): 2, ("Question 1?", "no 1"): 1, ("Question 2?", "no 2"): 1,
            ("Question 2?", "yes 2"): 1, ("Question 3?", "yes 3"): 1}
    assert {(q, a): int(n) for q, r, a, n, _ in rows[1:] if int(n)} == cast
    assert all(r == "1" for _, r, *_ in rows[1:])      # one round per question
    assert sorted(n for _, n in membership.store().roster(code, key)) == ["(no nickname)", "Ann", "Cy"]
    assert "3 students started, 1 finished" in downloads("-summary.html")


def test_a_garbled_code_a_live_classs_code_and_a_link_after_the_end_each_say_so(lesson):
    assert "That is not a room code" in texts(lessons_page(homework="XYZ"))   # garbled
    assert "This homework has ended" in texts(lessons_page(homework="ZZZZZZ"))   # forged: no such homework
    teacher, code, key = set_homework(lesson)
    cy = student(code, "Cy")
    live, _ = membership.store().create_room()
    assert "This code is for a live class" in texts(lessons_page(homework=live))
    click(teacher, "End the homework")
    assert homework_panel.SET not in teacher.session_state or not teacher.session_state[homework_panel.SET]
    vote(cy, lesson, 0, "yes 1")                        # the vote after the end: the homework has ended
    assert "This homework has ended" in texts(cy)
    assert "This homework has ended" in texts(lessons_page(homework=code))
    assert find(lesson.source) == lesson


def test_the_private_teacher_link_opens_the_panel_in_a_fresh_session_and_after_a_restart(lesson):
    """The panel's own link (``/lessons?homework=…&teacher=…``) is the homework's, not a live class's: it opens the
    counts, the CSV and End, never "does not open a class" and the student form; so does a restarted server."""
    _, code, key = set_homework(lesson)
    ann = student(code, "Ann")
    vote(ann, lesson, 0, "yes 1")
    for restart in (False, True):
        if restart:   # a server restart: the store is opened again on the same file, every session starts afresh
            membership.store.clear()
        back = lessons_page(homework=code, teacher=key)
        shown = texts(back)
        assert "does not open" not in shown and "1 started, 0 finished" in shown, shown
        assert back.session_state[homework_panel.SET] == {code: key}
        assert not [b for b in back.button if b.key == "_hw_start"]   # not the student's form
        assert [b for b in back.button if b.key == f"_hw_end_{code}"]
        assert "teacher" not in back.query_params   # the key leaves the address bar
    click(back, "End the homework")
    assert "This homework has ended" in texts(lessons_page(homework=code))


def plain(at: AppTest) -> str:
    """What the page wrote, the backslashes ``literal`` puts before markdown characters taken out."""
    return texts(at).replace("\\", "")


def test_a_homework_asks_for_a_sentence_each_student_writes_theirs_and_the_report_holds_them(lesson, downloads):
    teacher = lessons_page()
    slug = lesson.source.replace(":", "-")
    teacher.text_input(key=f"_lessons_{slug}_hw_sentence").input("Write one where “it” could mean two things.")
    [b for b in teacher.button if b.key == f"_lessons_{slug}_homework"][0].click().run()
    (code, key), = teacher.session_state[homework_panel.SET].items()
    assert "Write one where “it” could mean two things." in plain(teacher) and "0 sentences so far" in plain(teacher)

    ann, cy = student(code, "Ann"), student(code, "Cy")
    assert "Write one where “it” could mean two things." in plain(ann)   # under the lesson bar, on the step
    ann.text_input(key=f"_hw_sentence_{code}").input("The dog chased the cat because <b>it</b> was hungry.")
    click(ann, "Send my sentence")
    assert "Yours is in: The dog chased the cat because <b>it</b> was hungry." in plain(ann)
    step(ann, "Next")   # on the next step the sentence is still there, and may change
    assert ann.text_input(key=f"_hw_sentence_{code}").value.startswith("The dog chased")
    cy.text_input(key=f"_hw_sentence_{code}").input("Rude words.")
    click(cy, "Send my sentence")

    teacher.run()
    assert "2 sentences so far" in plain(teacher)
    said = plain(teacher)
    assert "The dog chased the cat because <b>it</b> was hungry. · *Ann*" in said and "Rude words. · *Cy*" in said
    [b for b in teacher.button if b.key == f"_hw_hide_{code}_1"][0].click().run()   # Cy's
    assert "~~Rude words. · *Cy*~~" in plain(teacher)
    rows = list(csv.reader(io.StringIO(downloads(".csv"))))
    assert ["Write one where “it” could mean two things.", "1", "The dog chased the cat because <b>it</b> was hungry.",
            "1", ""] in rows and not [r for r in rows if "Rude words." in r]
    page = downloads("-summary.html")
    assert "&lt;b&gt;it&lt;/b&gt; was hungry" in page and "Rude words" not in page and "Ann" not in page
    cy.run()
    assert "Your teacher has set your sentence aside" in plain(cy)

    # the teacher's projector view (of a live class they teach): the sentences, never who wrote them
    live, live_key = membership.store().create_room()
    seat_of(teacher).room, seat_of(teacher).key = live, live_key
    teacher.session_state[membership.PROJECTOR] = True
    teacher.run()
    said = plain(teacher)
    assert "1. The dog chased the cat because <b>it</b> was hungry." in said
    assert "Ann" not in said and "Rude words" not in said and not [b for b in teacher.button if b.label == "Hide"]

    teacher.session_state[membership.PROJECTOR] = False
    teacher.run()
    click(teacher, "End the homework")   # the sentences go with it
    with pytest.raises(Exception, match="homework has ended"):
        membership.store().homework(code)
    with sqlite3.connect(os.environ["EXPLORER_CLASSROOM_DB"]) as db:
        assert db.execute("SELECT COUNT(*) FROM sentences WHERE code=?", (code,)).fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM sentence_rounds WHERE code=?", (code,)).fetchone()[0] == 0


TRANSLATED = {
    "de": ('title = "Softmax zu Hause"\nabout = "Drei Fragen."\n', "Schritt", "Frage", ("ja", "nein"), "Weil"),
    "es": ('title = "Softmax en casa"\nabout = "Tres preguntas."\n', "Paso", "Pregunta", ("sí", "no"), "Porque"),
}


def test_a_german_and_a_spanish_students_votes_for_one_option_count_as_one(lesson, downloads):
    """A homework vote is kept by the option's place, not its label: a German student voting "ja 1" and a Spanish
    one voting "sí 1" (the lesson's translations of "yes 1") count as two votes for one option in the teacher's
    report, as the store holds them."""
    folder = Path(os.environ["EXPLORER_LESSONS_DIR"])   # the lesson fixture's folder
    for lang, (head, step_word, question_word, (yes, no), because) in TRANSLATED.items():
        (folder / lang).mkdir()
        (folder / lang / "home.toml").write_text(head + "".join(
            f'\n[[step]]\ntitle = "{step_word} {n}"\nnotes = "n"\n[step.question]\nprompt = "{question_word} {n}?"\n'
            f'options = ["{yes} {n}", "{no} {n}"]\nanswer = "{yes} {n}"\nexplain = "{because} {n}."\n'
            for n in range(1, len(PAGES) + 1)))
    teacher, code, key = set_homework(lesson)
    voted = {}
    for lang, (_, _, question_word, (yes, _), _) in TRANSLATED.items():
        at = lessons_page(homework=code, lang=lang)
        [b for b in at.button if b.key == "_hw_start"][0].click().run()
        at = on_step(at)
        assert f"{question_word} 1?" in texts(at)           # the question in the student's language
        qid = lesson.question_id(0)
        at.radio(key=f"_hw_{qid}_answer").set_value(f"{yes} 1")
        [b for b in at.button if b.key == f"_hw_{qid}_send"][0].click().run()
        assert not at.exception, at.exception
        voted[lang] = membership.store().my_answer(code, qid, at.session_state[homework_panel.MINE]["me"], round=1)
    assert voted == {"de": "#0", "es": "#0"}                   # both kept as the first option's place
    assert membership.store().counts(code, lesson.question_id(0), round=1) == {"#0": 2}
    teacher.run()
    rows = list(csv.reader(io.StringIO(downloads(".csv"))))   # the teacher's report, in English
    assert {(q, a): int(n) for q, r, a, n, _ in rows[1:] if int(n)} == {("Question 1?", "yes 1"): 2}
