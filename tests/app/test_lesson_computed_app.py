"""AppTest of computed lesson questions and checks in the lesson bar: the logit-lens step asks the question its
model answers, to the teacher and to every follower; a step whose question cannot be computed on its model shows one
sentence and the lesson goes on; a check the model contradicts is a warning on the teacher's screen only."""

import pytest
from pagetest import click, join, seat_of, session
from streamlit.testing.v1 import AppTest

from explorer.lessons import catalogue
from explorer.lessons import computed as computed_mod
from explorer.lessons.computed import Check
from explorer.ui import cached
from explorer.ui.live import membership

LESSONS = catalogue({})[0]
pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [str(w.value) for w in at.warning]
                     ).replace("\\", "")


def test_the_logit_lens_step_asks_what_the_model_answers_to_teacher_and_class():
    lesson = next(x for x in LESSONS if x.title == "How a decoder writes")
    step = next(i for i, s in enumerate(lesson.steps) if s.computed == "logit_lens_first_top")
    teacher = session()
    teacher.button(key=f"_home_{lesson.source.replace(':', '-')}_class").click().run()   # Home's cards: columns
    for _ in range(step):
        click(teacher, "Next")
    assert f"step **{step + 1} of {len(lesson.steps)}**" in texts(teacher)
    qid = lesson.question_id(step)
    assert "from which layer on is “␣Paris” the top guess?" in texts(teacher)
    student = join(seat_of(teacher).room, "s1")
    student.run()
    assert "from which layer on is “␣Paris” the top guess?" in texts(student)   # the teacher's question
    assert student.radio(key=f"{qid}_answer").options == [
        "after one of layers 0–9", "after one of layers 10–19", "after one of layers 20–28",
        "only after the last layer, 29"]
    student.radio(key=f"{qid}_answer").set_value("only after the last layer, 29").run()
    click(student, "Commit my answer")
    assert membership.store().counts(seat_of(teacher).room, qid) == {"#3": 1}   # the 4th option


OWN = """title = "Lens on an encoder"
[[step]]
title = "Lens"
page = "pages/write.py"
minutes = 1
params = { lm = "all-MiniLM-L6-v2", prompt = "The capital of France is" }
question = { computed = "logit_lens_first_top" }
[[step]]
title = "Softmax"
page = "pages/lab_softmax.py"
minutes = 1
"""


def test_a_question_that_cannot_be_computed_is_one_sentence_and_the_lesson_goes_on():
    at = session()
    at.switch_page("pages/lessons.py").run()
    at.session_state["_own_pending"] = (OWN.encode(), "mine.toml")
    at.run()
    click(at, "Run it alone", nth=len(LESSONS))
    shown = texts(at)
    assert "step **1 of 2**" in shown
    assert "This step's question is measured on all-MiniLM-L6-v2, and here it could not be" in shown
    assert "encoder" in shown and not at.radio
    click(at, "Next")
    assert "step **2 of 2**" in texts(at)


def test_a_check_the_model_contradicts_warns_the_teacher_only(monkeypatch):
    wrong = Check(lambda loaded, params: (False, "the rows add up to 0.5"), "every row adds up to exactly 1",
                  ("pages/heatmaps.py", "pages/flip.py"))
    monkeypatch.setitem(computed_mod.CHECKS, "rows_sum_to_one", wrong)
    cached.result_cache().clear()   # no stored answer of the true check
    teacher = session()
    click(teacher, "Start with a class")
    said = [str(w.value).replace("\\", "") for w in teacher.warning]
    assert any("Step 1 (“One head, one sentence”) says every row adds up to exactly 1, but on all-MiniLM-L6-v2 "
               "the rows add up to 0.5." in w for w in said), said
    student = join(seat_of(teacher).room, "s1")
    student.run()
    assert "says every row adds up" not in texts(student)
    teacher.toggle(key=membership.PROJECTOR).set_value(True).run()
    assert "says every row adds up" not in texts(teacher)   # never in projector view
    cached.result_cache().clear()
