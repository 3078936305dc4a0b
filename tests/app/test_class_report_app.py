"""A class of five answers one question in two rounds, in AppTest (one AppTest per browser session, one store):
the teacher's CSV download equals the votes cast, the printable summary holds the hand-checked shares and shift,
each student's recap holds their own answers, ending the class leaves nothing behind, and a server restart mid
round 2 keeps both rounds."""
import csv
import io
import sqlite3

import pytest
from test_classroom_app import (
    class_charts,
    click,
    goes_to,
    join,
    session,
    start,
    texts,
)

from explorer.classroom import default_db_path
from explorer.ui.live import membership
from explorer.ui.text import literal

pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py

ROUND_1 = ["about 1", "about 16", "about 256", "about 16", "about 1"]   # 2 of 5 right (40%)
ROUND_2 = ["about 16", "about 16", "about 256", "about 16", None]       # 3 of 4 right (75%); one does not vote


def vote(students, options, widgets: str) -> None:
    for student, option in zip(students, options):
        student.run()
        if option is not None:
            student.radio(key=f"{widgets}_answer").set_value(option).run()
            click(student, "Commit my answer")


def test_five_students_two_rounds_the_csv_equals_the_votes_cast(downloads):
    teacher, room, _ = start()
    students = [join(room, name) for name in ("ada", "", "<b>cy</b>", "dee", "eve")]   # nicknames optional
    teacher.switch_page("pages/lab_softmax.py").run()
    students = [goes_to(student, "pages/lab_softmax.py") for student in students]
    vote(students, ROUND_1, "softmax")
    click(teacher, "Show answers")
    click(teacher, "Discuss and vote again")
    vote(students, ROUND_2, "softmax_r2")
    click(teacher, "Show answers")
    teacher.switch_page("pages/classroom.py").run()
    assert not teacher.exception
    rows = list(csv.DictReader(io.StringIO(downloads(".csv"))))
    cast = {(r, option): votes.count(option) for r, votes in ((1, ROUND_1), (2, ROUND_2))
            for option in ("about 1", "about 16", "about 256")}
    assert {(int(row["round"]), row["option"]): int(row["count"]) for row in rows} == cast
    assert len(rows) == 6 and all(row["question"].startswith("With d_k = 256") for row in rows)
    assert {row["option"] for row in rows if row["correct"] == "yes"} == {"about 16"}
    page = downloads(".html")
    # by hand: round 1, 2 of 5 chose "about 16" (40%); round 2, 3 of 4 (75%); shift 75 - 40 = +35 points
    assert "2 of 5 right (40%)" in page and "3 of 4 right (75%)" in page and "+35 points" in page
    assert "Nothing is kept after the class ends" in texts(teacher)
    [table] = teacher.dataframe
    assert list(table.value.iloc[0][["round 1", "round 2", "shift"]]) == ["2 of 5 right (40%)",
                                                                           "3 of 4 right (75%)", "+35 points"]
    ada = students[0]
    click(ada, "Explore on my own")   # following would keep ada on the teacher's page
    ada.switch_page("pages/classroom.py").run()
    assert "round 1: about 1 · round 2: about 16. The answer is about 16: you were right." in texts(ada)
    eve = students[4]
    click(eve, "Explore on my own")
    eve.switch_page("pages/classroom.py").run()
    assert "round 1: about 1. The answer is about 16: not quite." in texts(eve)
    assert literal("<b>cy</b>") not in texts(ada)   # a recap holds no one else's name


def test_counts_stay_off_the_teachers_summary_until_shown_and_ending_the_class_keeps_nothing(downloads):
    teacher, room, _ = start()
    students = [join(room, f"s{i}") for i in range(2)]
    teacher.switch_page("pages/lab_softmax.py").run()
    students = [goes_to(student, "pages/lab_softmax.py") for student in students]
    vote(students, ["about 16", "about 1"], "softmax")
    teacher.switch_page("pages/classroom.py").run()
    [table] = teacher.dataframe
    assert list(table.value.iloc[0][["right answer", "round 1", "shift"]]) == ["at the reveal",
                                                                                 "hidden until shown", "–"]
    csv_rows = list(csv.DictReader(io.StringIO(downloads(".csv"))))
    assert sum(int(r["count"]) for r in csv_rows) == 2   # the download holds the open round all the same
    click(teacher, "End it now")
    assert membership.store().room(room) is None
    with sqlite3.connect(default_db_path()) as db:   # nothing of the class is left in the store
        assert all(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0
                   for t in ("rooms", "students", "votes", "questions"))


def test_a_server_restart_mid_round_two_keeps_both_rounds():
    """A new server process (a fresh store object on the same file) and the teacher's link opened again: round 2
    goes on where it was, and its "Show answers" reveals both rounds as they were cast."""
    teacher, room, key = start()
    students = [join(room, f"s{i}") for i in range(2)]
    teacher.switch_page("pages/lab_softmax.py").run()
    students = [goes_to(student, "pages/lab_softmax.py") for student in students]
    vote(students, ["about 1", "about 256"], "softmax")
    click(teacher, "Show answers")
    click(teacher, "Discuss and vote again")
    vote(students, ["about 16"], "softmax_r2")
    membership.store.clear()   # the server restarts: a new store object on the same file
    back = session(room=room, teacher=key)
    back.switch_page("pages/lab_softmax.py").run()
    assert not back.exception and "1 of 2 answered" in texts(back) and "round 2" in texts(back)
    vote(students[1:], ["about 16"], "softmax_r2")   # a student's session goes on voting after the restart
    back.run()
    assert "2 of 2 answered" in texts(back)
    click(back, "Show answers")
    [both] = class_charts(back)
    assert [bar["y"] for bar in both["data"]] == [[1, 0, 1], [0, 2, 0]]
