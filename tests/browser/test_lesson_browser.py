"""A three-step lesson in Chromium, run to the end: a teacher starts it from Home with one click (a class and step 1),
three students follow (two on 390 px phones), each step's page, parameters and "Step n of 3" reach every follower
when the teacher presses Next, the students answer the step's class question and the teacher reveals it, and the
teacher's notes never reach a student's page. Screenshots (teacher with the lesson bar, projector view, a phone)
are saved in test-artifacts/lesson-*.png."""
from __future__ import annotations

import asyncio
import re

import pytest
from chromium import ARTIFACTS
from lesson_files import heatmap_step, lesson_text
from live_class import WAIT_MS, idle, opened, page_problems, reaches, teacher_view

from explorer.lessons import Step

pytestmark = pytest.mark.browser

PHONE = (390, 844)
LESSON = lesson_text(
    "Three steps in the browser",
    heatmap_step("A head's rows", "PRIVATE NOTE one", layer=1, head=2, question=(
        "What does each row add up to?", ["exactly 1", "the number of words"], "exactly 1",
        "A softmax shares one unit of attention over the keys.")),
    Step("Softmax and the square root", "pages/lab_softmax.py", 2.0, "PRIVATE NOTE two", page_question=True),
    Step("Positions", "pages/lab_positions.py", 2.0, "PRIVATE NOTE three",
         {"pos_n": "64", "pos_d": "64", "pos_at": "10"}),
    about="A short lesson for the browser test.")
REVEAL = re.compile("Reveal to the class|Show answers")


async def answer(page, option: str) -> None:
    await page.locator('[data-testid="stRadio"] label', has_text=option).first.click(timeout=WAIT_MS)
    await idle(page)
    await page.get_by_role("button", name="Commit my answer").first.click(timeout=WAIT_MS)
    await page.get_by_text("Your answer is in").first.wait_for(timeout=WAIT_MS)


async def lesson(browser, url: str, db: str) -> dict:
    from explorer.classroom import normalise_code, open_store
    from explorer.lessons import parse

    teacher = await opened(browser, url)   # Home
    card = teacher.locator(".st-key-lesson_card_dir-browser")   # the lesson's card on Home
    await card.get_by_role("button", name="Start with a class").first.click(timeout=WAIT_MS)   # one click
    await teacher.get_by_text("step 1 of 3").first.wait_for(timeout=WAIT_MS)
    await idle(teacher)
    banner = await teacher.get_by_text("Teaching class").first.inner_text()
    room = normalise_code(re.search(r"class ([A-Z0-9]{3}-[A-Z0-9]{3})", banner)[1])
    store = open_store({"EXPLORER_CLASSROOM_DB": db})
    ids = [f"student-{i}-browser" for i in range(3)]
    for i, me in enumerate(ids):
        store.join(room, me, f"s{i}")
    sizes = {0: PHONE, 1: PHONE}

    async def follower(i: int, me: str):
        return await opened(browser, f"{url}/classroom?room={room}&me={me}", viewport=sizes.get(i, (1280, 900)))
    students = [await follower(i, me) for i, me in enumerate(ids)]   # one after another: a busy machine
    report = {"steps": []}
    for n in (1, 2, 3):
        if n > 1:
            await teacher.get_by_role("button", name="Next").first.click(timeout=WAIT_MS)
            await teacher.get_by_text(f"step {n} of 3").first.wait_for(timeout=WAIT_MS)
        wanted = await teacher_view(teacher, db, room)
        reached = [await reaches(s, wanted) is not None for s in students]
        step_shown = [await s.get_by_text(f"Step {n} of 3").count() > 0 for s in students]
        notes = [await s.get_by_text("PRIVATE NOTE").count() for s in students]
        report["steps"].append({"view": wanted, "reached": reached, "step_shown": step_shown, "notes": notes})
        if n == 1:
            await teacher.screenshot(path=str(ARTIFACTS / "lesson-teacher.png"), full_page=False)
            await asyncio.gather(*(answer(s, option) for s, option in   # the class answers at once
                                   zip(students, ["exactly 1", "the number of words", "exactly 1"])))
            report["counts"] = store.counts(room, parse(LESSON, "browser.toml").question_id(0))
            await teacher.get_by_role("button", name=REVEAL).first.click(timeout=WAIT_MS)
            await idle(teacher)
            await teacher.get_by_role("button", name="Reveal the answer").first.click(timeout=WAIT_MS)
            await idle(teacher)
            await asyncio.gather(*(s.get_by_text(re.compile("Right:|Not quite")).first.wait_for(timeout=WAIT_MS)
                                   for s in students))
            report["verdicts"] = [await s.get_by_text("Right:").count() > 0 for s in students]
            await students[0].screenshot(path=str(ARTIFACTS / "lesson-phone.png"), full_page=False)
    await teacher.get_by_text("Projector view", exact=True).first.click(timeout=WAIT_MS)
    await idle(teacher)
    report["projector_notes"] = await teacher.get_by_text("PRIVATE NOTE").count()
    report["projector_bar"] = await teacher.get_by_text("step 3 of 3").count()
    await teacher.screenshot(path=str(ARTIFACTS / "lesson-projector.png"), full_page=False)
    await students[1].screenshot(path=str(ARTIFACTS / "lesson-phone-3.png"), full_page=False)
    await teacher.get_by_role("button", name="Finish the lesson").first.click(timeout=WAIT_MS)
    try:   # the bar leaves the teacher's page
        await teacher.get_by_text("step 3 of 3").first.wait_for(state="detached", timeout=WAIT_MS)
        report["finished"] = True
    except Exception:
        report["finished"] = False
    return {**report, **await page_problems([teacher, *students])}


def test_a_three_step_lesson_with_three_students_two_on_phones(tmp_path, monkeypatch):
    from live_class import on_a_fresh_server

    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "browser.toml").write_text(LESSON)
    monkeypatch.setenv("EXPLORER_LESSONS_DIR", str(folder))   # the server inherits it
    report = on_a_fresh_server(lesson, tmp_path, "lesson")
    for n, step in enumerate(report["steps"], 1):
        assert all(step["reached"]), (n, step)
        assert all(step["step_shown"]), (n, step)
        assert step["notes"] == [0, 0, 0], (n, step)
    assert [s["view"]["path"] for s in report["steps"]] == ["/heatmaps", "/lab_softmax", "/lab_positions"]
    first, last = report["steps"][0]["view"]["params"], report["steps"][2]["view"]["params"]
    assert first["layer"] == "1" and first["head"] == "2" and last["pos_n"] == "64"
    assert report["counts"] == {"#0": 2, "#1": 1}   # stored by option id: "exactly 1" twice, the other once
    assert report["verdicts"] == [True, False, True]
    assert report["projector_notes"] == 0 and report["projector_bar"] > 0
    assert report["finished"]
    assert report["exceptions"] == [] and report["errors"] == []
