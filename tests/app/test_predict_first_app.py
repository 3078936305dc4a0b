"""Predict before you see (issue 38, item 5): every predict-then-reveal question is asked before anything on the
screen answers it.

The questions are found by running the pages (``QUESTIONS``): every page of the table of pages as it opens, every
tab of the positions lab, and every lesson step whose question is its page's own (the heatmap page's breakdown and
"Watch it write"'s "Predict first" are opened by such steps). Each question found is one test: before a prediction
the right answer (its option's words and the numbers its reveal measures) is in none of the texts, metrics and chart
titles drawn above the question, and what the question folds (``FOLDED``: a text or chart title of the folded part)
is drawn nowhere; after a commit it is drawn. A question found that ``FOLDED`` does not name fails, and so does a
name of ``FOLDED`` that no page asks.

The lessons' own questions (written or computed) sit in the lesson bar above the step's page, so the whole page is
their fold: before a prediction the bar above the question does not hold the answer and the page draws no chart;
after a commit, or "Show me without predicting", the page is drawn.
"""
from __future__ import annotations

import json
import re
import time

import pytest
from pagetest import SHOW, click, in_order, open_page, session
from streamlit.testing.v1 import AppTest

from explorer.labs.positions import TABS
from explorer.labs.quiz import Question
from explorer.learning.config import TrainConfig
from explorer.lessons import catalogue
from explorer.lessons.computed import opens_page
from explorer.lessons.model import Step
from explorer.sitemap.table import PAGES
from explorer.ui import predict_first
from explorer.ui.live import lesson_bar
from explorer.ui.views import learn

pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py

LESSONS = catalogue({})[0]
# the views that may ask a page's own question: each page as it opens, each tab of the positions lab, each step of a
# lesson whose question is its page's own (with the step's parameters)
VIEWS = ([(page, {}) for page in PAGES] + [("pages/lab_positions.py", {"pos_tab": tab}) for tab in TABS[1:]]
         + [(s.page, dict(s.params)) for lesson in LESSONS for s in lesson.steps if s.page_question])

# what each question folds: a text or chart title drawn only once it is answered; None where nothing on the page
# answers it (the question is asked under what it is about)
FOLDED = {
    "softmax": "scores spread like √d_k",                        # the explanation, the d_k slider and its charts
    "why": "Why 512 tokens",                                     # the n × n explanation, the cost chart and table
    "heads": "projections W^Q, W^K, W^V, W^O",                   # the table of multiplications
    "worked": None,                                              # the steps show the scaled weights only
    "padding": "Share of the real tokens' attention",            # the measurements and their charts
    "perm": "No positions, original order",                      # the outputs in both orders and why
    "rope_shift": "constant along every diagonal",               # the score's formula and the rotations drawn
    "explain_top_word": "Six explanations",                      # the six explanations and their agreement
    "write_next": "Where the new token looks",                   # everything the model did at this step
    "geo_prev": None,                                            # the four maps are what the question is about
    "bd_question": "weight = softmax of the row at this key",    # the score written out, its parts, its origin
    "atlas_which": "Head A is L",                                # the four heads' names and shares
    "patch_where": "Preview against exact",                      # the exact maps, their top cells, the check
    learn.question_key(TrainConfig(), "drop"): "Loss (nats): overall, first copy, second copy",   # curves, heads
}
TEXTS = ("title", "header", "subheader", "markdown", "caption", "latex", "info", "warning", "success", "error")


def drawn(at: AppTest) -> list[str]:
    """Every text, metric, table and chart title of the page's main area, in the order drawn (markdown escapes
    taken out)."""
    out = []
    for node in in_order(at.main):
        kind = getattr(node, "type", "")
        if kind in TEXTS:
            out.append(str(node.value))
        elif kind == "metric":
            out.append(f"{node.label}: {node.value}")
        elif kind == "dataframe":
            out.append(node.value.to_string())
        elif kind == "plotly_chart":
            layout = json.loads(node.proto.spec)["layout"]
            axes = [layout[k] for k in layout if k.startswith(("xaxis", "yaxis"))]
            out += [_title(part) for part in (layout, *axes)]
    return [t.replace("\\", "") for t in out]


def _title(part: dict) -> str:
    title = (part or {}).get("title")
    return str(title.get("text", "")) if isinstance(title, dict) else str(title or "")


def above(at: AppTest, prompt: str) -> list[str]:
    """What the page drew before the question whose prompt is ``prompt``."""
    shown = drawn(at)
    start = prompt.replace("\\", "")[:60]
    index = next((i for i, t in enumerate(shown) if start in t), None)
    assert index is not None, f"the question {start!r} is not drawn"
    return shown[:index]


def answer_texts(question: Question) -> list[str]:
    """The right answer as the page words it: its option, and each number its reveal writes in bold that the question
    does not give itself (the worked example's weight with the division is asked about, not answered)."""
    numbers = [b.replace("\\", "") for b in re.findall(r"\*\*([^*]+)\*\*", question.reveal) if re.search(r"\d", b)]
    return [question.correct.replace("\\", ""), *(n for n in numbers if n not in question.prompt)]


def given_away(question: Question, texts: list[str]) -> list[str]:
    """The parts of the right answer found in ``texts``; an option named where every option is named gives nothing
    away (the four maps "Map A" … "Map D")."""
    joined = "\n".join(texts).casefold()
    found = [a for a in answer_texts(question) if a.casefold() in joined]
    if all(o.replace("\\", "").casefold() in joined for o in question.options):
        found = [a for a in found if a not in question.options]
    return found


# ---------------------------------------------------------------------------------------------- the inventory

@pytest.fixture(scope="module")
def questions() -> dict[str, tuple[str, dict, Question]]:
    """key -> (page, parameters, the question) of every predict-then-reveal question the views ask."""
    found: dict[str, tuple[str, dict, Question]] = {}
    real = predict_first.asked
    seen: list[tuple[str, Question]] = []

    def recording(question, key):
        seen.append((key, question))
        return real(question, key)
    predict_first.asked = recording
    try:
        for page, params in VIEWS:
            seen.clear()
            open_page(page, timeout=600, **params)
            for key, question in seen:
                found.setdefault(key, (page, params, question))
    finally:
        predict_first.asked = real
    return found


def test_every_question_a_page_asks_is_checked_here(questions):
    assert sorted(questions) == sorted(FOLDED)


@pytest.mark.parametrize("key", sorted(FOLDED))
def test_a_question_is_asked_before_anything_on_screen_answers_it(questions, key):
    page, params, _ = questions[key]
    at = open_page(page, timeout=600, **params)
    question = _asked(at, key)
    before = above(at, question.prompt)
    assert given_away(question, before) == [], (key, given_away(question, before))
    folded = FOLDED[key]
    if folded is not None:
        assert not any(folded in t for t in drawn(at)), f"{key}: {folded!r} is drawn before the prediction"
        assert any("stay folded until" in t for t in drawn(at)), key
    at.radio(key=f"{key}_answer").set_value(question.options[0]).run()
    click(at, "Commit my answer")
    assert any("Right" in str(s.value) for s in at.success) or at.error, key
    if folded is not None:
        assert any(folded in t for t in drawn(at)), f"{key}: {folded!r} is not drawn after the prediction"


def _asked(at: AppTest, key: str) -> Question:
    """The question ``key`` as this run asked it (the page's controls are its own: the run's values)."""
    real, seen = predict_first.asked, {}

    def recording(question, k):
        seen[k] = question
        return real(question, k)
    predict_first.asked = recording
    try:
        at.run()
    finally:
        predict_first.asked = real
    assert not at.exception, at.exception
    assert key in seen, f"{key} is not asked on this view"
    return seen[key]


def test_show_me_without_predicting_unfolds_and_stays_when_the_question_moves():
    at = open_page("pages/lab_why_attention.py")
    assert not at.dataframe
    click(at, SHOW)
    assert at.dataframe and any("You did not predict" in str(i.value) for i in at.info)
    next(s for s in at.select_slider if s.label == "Sequence length n").set_value(1024).run()
    assert at.dataframe   # another version of the question: still shown without a prediction
    click(at, "Predict again")
    assert not at.dataframe and [b.label for b in at.button if b.label == "Commit my answer"]


# ---------------------------------------------------------------------------------------------- lessons' questions

STEPS = [(lesson, i) for lesson in LESSONS for i, step in enumerate(lesson.steps) if step.question or step.computed]


def lesson_at(lesson, index: int) -> AppTest:
    """A session running ``lesson`` alone, opened at step ``index`` (as "Run it alone" and Next would)."""
    at = session()
    now = time.time()
    at.session_state[lesson_bar.LESSON] = lesson
    at.session_state[lesson_bar.STEP] = index
    at.session_state[lesson_bar.STARTED] = now
    at.session_state[lesson_bar.STEP_STARTED] = now
    at.session_state[lesson_bar.GO] = True
    at.run(timeout=600)
    assert not at.exception, at.exception
    return at


def _lesson_question(lesson, index: int) -> Question | None:
    step: Step = lesson.steps[index]
    if step.question:
        return step.question.question()
    from explorer.ui import cached
    asked = cached.lesson_question(lesson, index)
    return asked if isinstance(asked, Question) else None


@pytest.mark.parametrize("lesson, index", STEPS, ids=[f"{l.source.split(':')[-1]}-{i + 1}" for l, i in STEPS])
def test_a_lessons_question_folds_its_page_until_answered(lesson, index):
    at = lesson_at(lesson, index)
    question = _lesson_question(lesson, index)
    if question is None:   # a computed question this model cannot answer: one sentence, and the page
        assert at.get("plotly_chart")
        return
    before = above(at, question.prompt)
    assert given_away(question, before) == [], given_away(question, before)
    assert not at.get("plotly_chart"), "the step's page is drawn before the prediction"
    assert at.title[-1].value == lesson.steps[index].page_title   # the page's title stands in for it
    if opens_page(lesson.steps[index]):   # issue 54: the page stays open while asked, its run is the answer
        assert any("the run is the answer" in t for t in drawn(at))
        return
    assert any("stay folded until" in t for t in drawn(at))
    qid = lesson.question_id(index)
    at.radio(key=f"{qid}_answer").set_value(question.options[0]).run(timeout=600)
    click(at, "Commit my answer")
    assert not any("The step's page" in t for t in drawn(at)), "the step's page is still folded"
    assert at.get("plotly_chart") or at.dataframe or any("Predict, then reveal" in t for t in drawn(at)), \
        "the step's page is not drawn after the prediction (or asks its own question first)"


def test_in_a_class_the_step_stays_folded_for_everyone_until_the_teacher_reveals():
    """The first lesson's first step with a class: the teacher's page and a follower's are folded alike while the
    class votes and while the counts are shown; "Reveal the answer" opens both."""
    from pagetest import join, seat_of

    lesson = LESSONS[0]
    teacher = session()
    click(teacher, "Start with a class")
    student = join(seat_of(teacher).room, "ada")
    student.run()
    for at in (teacher, student):
        assert not at.get("plotly_chart") and any("stay folded until" in t for t in drawn(at))
    qid = lesson.question_id(0)
    student.radio(key=f"{qid}_answer").set_value(lesson.steps[0].question.answer).run()
    click(student, "Commit my answer")
    click(teacher, "Show answers")
    student.run()
    assert not [c for c in student.get("plotly_chart") if "Class answers" not in c.proto.spec]   # counts only
    click(teacher, "Reveal the answer")
    student.run()
    for at in (teacher, student):
        assert [c for c in at.get("plotly_chart") if "Class answers" not in c.proto.spec], "the page is not drawn"
        assert not any("The step's page" in t for t in drawn(at))


def test_two_steps_asking_one_pages_question_are_two_class_questions():
    """Lesson 5 asks the heatmap page's breakdown question on step 1 (MiniLM) and again on step 4 (SmolLM2): in a
    class, step 1's reveal must not open step 4's question, and each step's votes are its own poll."""
    from pagetest import join, seat_of

    lesson = next(l for l in LESSONS if l.source == "app:5-where-does-one-score-come-from")
    teacher = session()
    click(teacher, "Start with a class")
    now = time.time()
    teacher.session_state[lesson_bar.LESSON] = lesson
    teacher.session_state[lesson_bar.STEP] = 0
    teacher.session_state[lesson_bar.STARTED] = teacher.session_state[lesson_bar.STEP_STARTED] = now
    teacher.session_state[lesson_bar.GO] = True
    teacher.run(timeout=600)
    student = join(seat_of(teacher).room, "ada")
    student.run(timeout=600)

    def vote_key(at: AppTest) -> str:
        return next(r.key for r in at.radio if r.key.startswith("bd_question") and r.key.endswith("_answer"))
    first = vote_key(student)
    assert any("stay folded until your teacher" in t for t in drawn(student))
    student.radio(key=first).set_value(student.radio(key=first).options[0]).run()
    click(student, "Commit my answer")
    click(teacher, "Show answers")
    click(teacher, "Reveal the answer")
    student.run(timeout=600)
    assert not any("stay folded until" in t for t in drawn(student)), "step 1's question is not revealed"
    teacher.session_state[lesson_bar.STEP] = 3
    teacher.session_state[lesson_bar.GO] = True
    teacher.run(timeout=600)
    student.run(timeout=600)
    assert lesson.steps[3].page_question and lesson.steps[3].page == lesson.steps[0].page
    assert any("stay folded until your teacher" in t for t in drawn(student)), "step 4 opens with step 1's reveal"
    assert vote_key(student) != first, "step 4 reuses step 1's poll"
