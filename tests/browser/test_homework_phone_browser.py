"""One student doing homework on a 390 × 844 phone, against a real server of its own.

The teacher sets the first shipped lesson as homework (in the server's store, as the Lessons page's button does);
the student opens the homework link on the phone, starts it, and lands on step 1, whose question folds the step's
page: no chart before the answer. The student picks an answer and sends it; the page opens (its heatmap drawn at the
phone's width, nothing wider than the screen), and the teacher's report counts that one vote. Screenshots before and
after the answer: test-artifacts/homework-phone-*.png.
"""
from __future__ import annotations

import pytest
from chromium import ARTIFACTS, CHARTS_FIT, new_page_async
from live_class import WAIT_MS, idle, on_the_server, page_problems

from explorer.classroom import open_store
from explorer.classroom.report import collect
from explorer.lessons import catalogue

pytestmark = pytest.mark.browser

PHONE = (390, 844)
LESSON = catalogue({})[0][0]   # "Attention in 20 minutes": step 1 asks its own question over the heatmap page
STEP = LESSON.steps[0]
WIDE = "() => { const m = document.querySelector('[data-testid=stMain]'); return m.scrollWidth - m.clientWidth; }"


def set_homework(db: str) -> tuple[str, str, str]:
    """The lesson set as homework in the server's store -> (code, teacher key, step 1's question id)."""
    store = open_store({"EXPLORER_CLASSROOM_DB": db})
    questions = [(LESSON.question_id(i), s.question.prompt, s.question.options, s.question.answer)
                 for i, s in enumerate(LESSON.steps) if s.question]
    code, key = store.set_homework(LESSON.source, LESSON.title, questions, steps=len(LESSON.steps))
    return code, key, LESSON.question_id(0)


async def homework(browser, url: str, db: str) -> dict:
    code, key, qid = set_homework(db)
    phone = await new_page_async(browser, viewport=PHONE, is_mobile=True, has_touch=True)
    await phone.goto(f"{url}/lessons?homework={code}")
    await phone.get_by_label("Nickname (optional: only your teacher sees it)").fill("Ada")
    await phone.get_by_role("button", name="Start the homework").click(timeout=WAIT_MS)
    await phone.get_by_text(STEP.question.prompt).wait_for(timeout=WAIT_MS)
    await idle(phone)
    report = {"charts_before": await phone.locator('[data-testid="stMain"] .js-plotly-plot').count(),
              "folded": await phone.get_by_text("stay folded until").count()}
    await phone.screenshot(path=str(ARTIFACTS / "homework-phone-question.png"))
    await phone.get_by_text(STEP.question.answer, exact=True).tap(timeout=WAIT_MS)
    await phone.get_by_role("button", name="Send my answer").tap(timeout=WAIT_MS)
    await phone.get_by_text(f"You said {STEP.question.answer}: right.").wait_for(timeout=WAIT_MS)
    await phone.wait_for_selector('[data-testid="stMain"] .js-plotly-plot .main-svg', timeout=WAIT_MS)
    await phone.wait_for_function(CHARTS_FIT, timeout=WAIT_MS)   # the heatmap drawn at the phone's width
    report["overflow"] = await phone.evaluate(WIDE)
    await phone.screenshot(path=str(ARTIFACTS / "homework-phone-answered.png"))
    store = open_store({"EXPLORER_CLASSROOM_DB": db})
    report["counts"] = {r.asked.qid: r.rounds[0] for r in collect(store, code, key)}
    report["progress"] = store.homework_progress(code, key)
    report["qid"] = qid
    return {**report, **await page_problems([phone])}


def test_a_student_does_homework_on_a_phone_and_the_report_counts_the_vote(server):
    report = on_the_server(homework, server)
    assert report["charts_before"] == 0 and report["folded"] >= 1, report   # asked before the page answers it
    assert report["overflow"] <= 0, report
    assert report["counts"][report["qid"]] == {STEP.question.answer: 1}, report["counts"]
    assert report["progress"].started == 1, report["progress"]
    assert report["exceptions"] == [] and report["errors"] == [] and report["external"] == [], report
