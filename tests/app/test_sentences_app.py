"""The class's own sentences in AppTest (one AppTest per browser session, one store): a teacher and five students
write, the teacher hides one, asks the class question, reveals it and shows one head across the sentences; each
student finds their own; the report's CSV holds the sentences not hidden; ending the class deletes them."""
import csv
import io
import sqlite3

import pytest
from test_classroom_app import click, join, start, texts

from explorer.classroom import default_db_path
from explorer.ui.live import membership
from explorer.ui.text import literal

pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py

SENTENCES = ["The dog chased the cat because it was hungry.",
             "<script>alert(1)</script> it **is** a prank",
             "The trophy did not fit in the case because it was too big.",
             "My phone fell on the floor and it broke.",
             "The bird left the nest when it was ready."]
NICKS = ["Adalind", "<b>bo</b>", "Cyprian", "Deodat", "Evander"]   # found by name, not inside other words


def test_five_students_write_one_is_hidden_the_class_sees_one_head_and_ending_deletes_them(downloads, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    teacher, room, key = start()
    students = [join(room, nick) for nick in NICKS]
    click(teacher, "Ask for sentences")
    assert "0 of 5** students wrote one" in texts(teacher)
    for student, sentence in zip(students, SENTENCES):
        student.run()
        student.text_input(key="_sent_mine_1").input(sentence)
        click(student, "Send my sentence")
        assert "Yours is in:" in texts(student)
    students[0].text_input(key="_sent_mine_1").input("The dog chased the cat because it was fast.")   # changed
    click(students[0], "Send my sentence")
    teacher.run()
    seen = texts(teacher)
    assert "5 of 5** students wrote one" in seen and literal("<b>bo</b>") in seen   # the nickname, for the teacher
    assert literal(SENTENCES[1]) in seen and "<script>" not in seen   # shown as plain text
    teacher.toggle(key=membership.PROJECTOR).set_value(True).run()   # the projector: no names, no sentences yet
    projected = texts(teacher)
    assert "5 of 5** students wrote one" in projected
    assert not any(literal(nick) in projected for nick in NICKS) and literal(SENTENCES[2]) not in projected
    assert not [b for b in teacher.button if b.label == "Hide"]
    teacher.toggle(key=membership.PROJECTOR).set_value(False).run()
    click(teacher, "Hide", nth=1)   # the prank, second to come
    assert membership.store().class_sentences(room) == [
        "The dog chased the cat because it was fast.", *SENTENCES[2:]]
    teacher.text_input(key="_sent_word").input("it").run()
    click(teacher, "Show the class")
    assert membership.store().sentence_round(room).state == "shown"
    # the class question comes first: its answer computed from the four sentences shown
    assert any("Which head of layer 3 will follow “it”" in m.value for m in teacher.markdown)
    assert not teacher.get("plotly_chart")
    click(teacher, "Show answers")
    click(teacher, "Reveal the answer")
    assert teacher.get("plotly_chart"), "the figure opens once the answer is revealed"
    shown = texts(teacher)
    assert "In 4 of 4 sentences" in shown or "of 4 sentences, “it” looks most at" in shown
    for i, student in enumerate(students):
        student.run()
        assert not student.exception, student.exception
        own = texts(student)
        assert literal(SENTENCES[3]) in own and "<b>bo</b>" not in own and literal("<b>bo</b>") not in own
        if i == 1:
            assert "Your teacher has set your sentence aside" in own and "Yours is sentence" not in own
        else:
            number = {0: 1, 2: 2, 3: 3, 4: 4}[i]
            assert f"Yours is sentence {number}." in own
        assert student.get("plotly_chart")   # the same figure, replayed
    rows = [r for r in csv.DictReader(io.StringIO(downloads(".csv"))) if r["question"].startswith("Write a sentence")]
    assert [r["option"] for r in rows] == membership.store().class_sentences(room)
    assert all("prank" not in r["option"] for r in rows)   # hidden: not in the report
    click(teacher, "End it now")
    with sqlite3.connect(default_db_path()) as db:
        assert db.execute("SELECT COUNT(*) FROM sentences").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM sentence_rounds").fetchone()[0] == 0
