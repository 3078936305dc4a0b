"""AppTest of lessons: every shipped step's page renders with the step's parameters (none of them corrected), a
teacher starts a lesson from Home in one click, Next and Back move the class's page, a student who joins late lands
on the current step, the notes stay on the teacher's own screen, a teacher who comes back (a restarted server, the
teacher link) carries on at the store's step, a finished lesson shows each follower their own recap in the class,
and an uploaded lesson file with an error is one literal message."""

import pytest
from pagetest import SHOW, click, join, open_page, seat_of, session
from streamlit.testing.v1 import AppTest

from explorer.classroom import normalise_code
from explorer.lessons import catalogue
from explorer.ui.live import lesson_bar, membership
from explorer.ui.text import literal

LESSONS = catalogue({})[0]
# each distinct (page, parameters) of the shipped lessons once: two steps may share a view and differ in the question
VIEWS = sorted({(s.page, tuple(sorted(s.params.items()))): (lesson.title, n)
                for lesson in LESSONS for n, s in enumerate(lesson.steps, 1)}.items())


pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [str(e.value) for e in at.error]
                     + [str(w.value) for w in at.warning] + [str(s.value) for s in at.success]
                     + [str(i.value) for i in at.info] + [x.label for x in at.expander])


@pytest.mark.parametrize("view, where", VIEWS, ids=[f"{w[0][:12]}-{w[1]}" for _, w in VIEWS])
def test_every_shipped_step_renders_with_its_parameters_uncorrected(view, where):
    page, params = view
    at = open_page(page, **dict(params))
    assert at.title and at.title[0].value, where
    corrected = [str(i.value) for i in at.info if "link" in str(i.value) or "range" in str(i.value)]
    assert corrected == [], (where, corrected)   # a parameter the page had to fix would be a broken step
    for name, value in params:
        assert at.query_params[name] == [value] or at.query_params[name] == value, (where, name)


def test_a_lesson_runs_with_a_class_from_home_next_moves_the_class_and_late_students_land_on_the_step():
    lesson = LESSONS[0]
    teacher = session()   # Home
    click(teacher, "Start with a class")   # one click: a class, and step 1 open
    room = seat_of(teacher).room
    assert teacher.title[0].value == "Attention heatmaps"
    shown = texts(teacher)
    assert "step **1 of 7**" in shown and literal(lesson.steps[0].notes) in shown
    assert "Teaching class" in shown
    students = [join(room, f"s{i}") for i in range(2)]
    for student in students:
        student.run()
        assert student.title[0].value == "Attention heatmaps"
        assert "**Step 1 of 7**" in texts(student)
        assert literal(lesson.steps[0].notes) not in texts(student)   # the notes are the teacher's only
        assert student.query_params["layer"] == "2" and student.query_params["head"] == "3"
    qid = lesson.question_id(0)
    students[0].radio(key=f"{qid}_answer").set_value("exactly 1").run()
    click(students[0], "Commit my answer")
    assert membership.store().counts(room, qid) == {"#0": 1}   # "exactly 1", kept by its place

    click(teacher, "Next")
    assert teacher.title[0].value == "Antecedent flip" and "step **2 of 7**" in texts(teacher)
    for student in students:
        student.run()
        assert student.title[0].value == "Antecedent flip" and "**Step 2 of 7**" in texts(student)
        assert student.query_params["text_b"] == lesson.steps[1].params["text_b"]
    late = join(room, "late")
    late.run()
    assert late.title[0].value == "Antecedent flip" and "**Step 2 of 7**" in texts(late)

    teacher.toggle(key=membership.PROJECTOR).set_value(True).run()
    assert literal(lesson.steps[1].notes) not in texts(teacher)   # never in projector view
    click(teacher, "Back")
    assert teacher.title[0].value == "Attention heatmaps" and "step **1 of 7**" in texts(teacher)
    students[1].run()
    assert students[1].title[0].value == "Attention heatmaps"


def test_a_teacher_who_comes_back_carries_on_at_the_stores_step():
    """As after a server restart: a fresh session opens the teacher link and finds the lesson at its step."""
    lesson = next(x for x in LESSONS if x.source == "app:1-attention-in-20-minutes")
    teacher = session()
    click(teacher, "Start with a class")
    room, key = seat_of(teacher).room, seat_of(teacher).key
    click(teacher, "Next")
    click(teacher, "Next")
    assert teacher.title[0].value.startswith("Worked example")   # folded under the step's question: its title
    again = session(room=room, teacher=key)   # the teacher link, in a new session
    assert again.session_state[lesson_bar.STEP] == 2
    assert "step **3 of 7**" in texts(again) and literal(lesson.steps[2].title) in texts(again)
    click(again, "Back to step 3")
    assert again.title[0].value.startswith("Worked example")
    click(again, "Next")
    assert again.title[0].value.startswith("Softmax saturation")
    assert membership.store().view(normalise_code(room))[1]["lesson"]["step"] == 3
    for _ in range(3):
        click(again, "Next")
    click(again, "Finish the lesson")   # the lesson ends for good: the class's view carries only its end
    again.run()
    assert "step **" not in texts(again) and lesson_bar.LESSON not in again.session_state
    where = membership.store().view(normalise_code(room))[1]["lesson"]
    assert where["ended"] and "step" not in where
    click(again, "Close the recap")   # now the view no longer names the lesson
    assert "lesson" not in membership.store().view(normalise_code(room))[1]


def test_when_the_teacher_finishes_every_follower_sees_their_own_recap_in_the_class():
    lesson = LESSONS[0]
    teacher = session()
    click(teacher, "Start with a class")
    room = seat_of(teacher).room
    students = [join(room, f"s{i}") for i in range(2)]
    qid = lesson.question_id(0)
    for student, answer in zip(students, ("exactly 1", "the number of words")):
        student.run()
        student.radio(key=f"{qid}_answer").set_value(answer).run()
        click(student, "Commit my answer")
    click(teacher, "Next")   # step 2 asks its question; nobody answers it
    for _ in range(len(lesson.steps) - 2):
        click(teacher, "Next")
    click(teacher, "Finish the lesson")
    assert "is finished: each student now sees their own answers" in texts(teacher)
    mine = {}
    for student in students:
        student.run()
        assert student.title[0].value == teacher.title[0].value   # still following the class, on its page
        mine[student] = texts(student)
        assert f"**{literal(lesson.title)}** is over. Your answers:" in mine[student]
        assert literal(lesson.steps[1].question.prompt) in mine[student]
        assert f"you did not answer. The right answer: **{literal(lesson.steps[1].question.answer)}**." in \
            mine[student]
    assert "round 1: exactly 1. The right answer: **exactly 1**; you had it." in mine[students[0]]
    assert "round 1: the number of words. The right answer: **exactly 1**." in mine[students[1]]
    assert "round 1: exactly 1" not in mine[students[1]]   # each sees their own answers only
    click(teacher, "Close the recap")
    students[0].run()
    assert "Your answers:" not in texts(students[0])


def test_run_alone_and_finish():
    teacher = session()
    third = next(x for x in LESSONS if x.title == "Is attention an explanation?")   # Home's cards sit in columns
    teacher.button(key=f"_home_{third.source.replace(':', '-')}_alone").click().run()
    assert seat_of(teacher).room is None
    assert "Is attention an explanation" in texts(teacher) and "step **1 of 4**" in texts(teacher)
    for _ in range(3):
        click(teacher, "Next")
    click(teacher, "Finish the lesson")
    assert lesson_bar.LESSON not in teacher.session_state and "step **" not in texts(teacher)


HOSTILE = """title = "Mine"
[[step]]
title = "x"
page = "pages/lab_softmax.py"
minutes = 1
notes = "<img src=x onerror=alert(1)>"
"""


def test_own_lesson_add_views_reorder_and_open_files():
    at = session()
    at.switch_page("pages/lessons.py").run()
    at.toggle(key="_own_toggle").set_value(True).run()
    at.switch_page("pages/lab_softmax.py").run()
    click(at, "Add this view as a step")
    at.switch_page("pages/lab_positions.py").run()
    click(at, "Add this view as a step")
    at.switch_page("pages/lessons.py").run()
    steps = at.session_state["_own_lesson"]["steps"]
    assert [s["page"] for s in steps] == ["pages/lab_softmax.py", "pages/lab_positions.py"]
    assert steps[1]["params"] == {"pos_n": "100", "pos_d": "128", "pos_at": "50"}   # the view on screen
    click(at, "Down")   # the first step goes second
    labels = [e.label for e in at.expander if e.label[:2] in ("1.", "2.")]
    assert labels[0].startswith("1. Positional encodings") and labels[1].startswith("2. Softmax saturation")
    labels = [d.proto.label for d in at.get("download_button")]
    assert "Download the lesson file" in labels
    assert labels.count("Handout (HTML, prints as a page)") == len(LESSONS) + 1   # each lesson's, and the own one's
    # a hostile file: one message, shown as text, and the own lesson is unchanged
    at.session_state["_own_pending"] = (HOSTILE.encode(), "evil<b>.toml")
    at.run()
    assert [str(e.value) for e in at.error] == [literal(
        "lesson file 'evil<b>.toml', step 1, field 'notes': holds markup (something like <tag>); write plain text.")]
    assert len(at.session_state["_own_lesson"]["steps"]) == 2
    # a good file opens, and starts like any lesson
    at.session_state["_own_pending"] = (HOSTILE.replace("<img src=x onerror=alert(1)>", "say *this*").encode(),
                                        "mine.toml")
    at.run()
    assert [s["title"] for s in at.session_state["_own_lesson"]["steps"]] == ["x"]
    assert at.text_input(key="_own_title").value == "Mine"
    click(at, "Run it alone", nth=len(LESSONS))   # the own lesson's button comes after the catalogue's
    assert at.title[0].value.startswith("Softmax") and "step **1 of 1**" in texts(at)
    assert literal("say *this*") in texts(at)   # the notes, as typed


def test_home_and_the_lessons_page_list_the_seven_lessons_of_the_catalogue():
    home = session()
    cards = [lesson for lesson in LESSONS if f"**{literal(lesson.title)}**" in texts(home)]
    assert len(cards) == len(LESSONS) == 7
    assert "How a model copies" in texts(home) and "Where does one score come from" in texts(home)
    home.switch_page("pages/lessons.py").run()
    titles = [x.label for x in home.expander if " steps, " in x.label]
    assert len(titles) == 7 and any(t.startswith("Where is the answer carried?") for t in titles)


CLOCK = "".join(f"""
[[step]]
title = "Step {n}"
page = "{page}"
minutes = {minutes}
notes = "n"
""" for n, (page, minutes) in enumerate((("pages/lab_softmax.py", 2), ("pages/lab_masks.py", 3),
                                          ("pages/lab_worked_example.py", 5)), 1))


def test_the_lesson_clock_by_hand(tmp_path, monkeypatch):
    """Steps of 2, 3 and 5 minutes: on step 2 the bar says "by the end of this step: 5 min" (2 + 3, not 2 or 10);
    4 min 30 s in it is on time, 5 min 30 s in it is running late; on step 3 the same 5 min 30 s is on time again
    (by the end of step 3: 10 min)."""
    import time

    (tmp_path / "clock.toml").write_text('title = "Clock"\n' + CLOCK)
    monkeypatch.setenv("EXPLORER_LESSONS_DIR", str(tmp_path))
    at = session()
    at.button(key="_home_dir-clock_alone").click().run()
    click(at, "Next")

    def clock(used_s: float) -> str:
        at.session_state[lesson_bar.STARTED] = time.time() - used_s
        at.run()
        return next(c.value for c in at.caption if "min planned" in c.value)

    on_time = clock(4.5 * 60)
    assert "used of 10 min planned · by the end of this step: 5 min" in on_time and "running late" not in on_time
    assert on_time.split(" used")[0].endswith(("4:30", "4:31"))
    assert clock(5.5 * 60).endswith("by the end of this step: 5 min · running late")
    click(at, "Next")
    assert clock(5.5 * 60).endswith("by the end of this step: 10 min")


OWN_QUESTION = """title = "Own question"
[[step]]
title = "Spread"
page = "pages/lab_softmax.py"
minutes = 2
notes = "The answer is the third option: say so after the vote."
question = "page"
"""


def test_run_alone_the_notes_wait_until_the_pages_own_question_is_answered(tmp_path, monkeypatch):
    """A step whose question is the page's own (``question = "page"``): run alone, its notes (which may hold the
    answer) stay hidden until that question is committed or skipped, as they do for a step's own question."""
    (tmp_path / "own.toml").write_text(OWN_QUESTION)
    monkeypatch.setenv("EXPLORER_LESSONS_DIR", str(tmp_path))
    at = session()
    at.button(key="_home_dir-own_alone").click().run()
    assert "step **1 of 1**" in texts(at) and "Predict, then reveal" in texts(at)
    assert "Your notes" not in texts(at) and "third option" not in texts(at)
    click(at, SHOW)
    assert "Your notes" in texts(at) and "The answer is the third option" in texts(at)
