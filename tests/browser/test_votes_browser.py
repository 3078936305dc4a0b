"""Peer Instruction in Chromium: a teacher and two students (one on a 390 × 844 phone) answer a class question in
two rounds on a real server.

Checks: before "Show answers" no page holds a class chart (the teacher's says only "n of 2 answered", its projector
view not even that); "Show answers" shows round 1's counts everywhere; "Discuss and vote again" opens round 2, the
students vote again, and the teacher's "Show answers" reveals both rounds side by side with the right answer, on
the phone too, with nothing wider than its screen. Screenshots: test-artifacts/votes-*.png.
"""
from __future__ import annotations

import asyncio
import re

import pytest
from chromium import ARTIFACTS, CHARTS_FIT
from live_class import WAIT_MS, class_of, idle, nav, new_room, on_the_server, page_problems, scroll_to

pytestmark = pytest.mark.browser

PHONE = (390, 844)
ROUND_1, ROUND_2 = ["about 1", "about 256"], ["about 16", "about 256"]
# the bar labels of the class chart ("2 (100%)"), every round in order; null when there is no class chart
COUNTS = ("() => { const c = [...document.querySelectorAll('.js-plotly-plot')].find(e => [...e.querySelectorAll("
          "'.gtitle')].some(t => t.textContent.startsWith('Class answers'))); return c ? [...c.querySelectorAll("
          "'.bartext')].map(t => parseInt(t.textContent)) : null }")
WIDER = "() => { const m = document.querySelector('[data-testid=stMain]'); return m.scrollWidth - m.clientWidth }"


def class_chart(page):
    return page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text="Class answers")).first


async def click(page, text: str) -> None:
    await page.locator("button", has_text=text).first.click()
    await idle(page)


async def sees(page, text: str, timeout: float = WAIT_MS) -> None:
    await page.get_by_text(text).first.wait_for(timeout=timeout)


async def vote(page, option: str) -> None:
    radio = page.locator('[data-testid="stRadio"]').last
    await radio.locator("label", has_text=re.compile(f"^{re.escape(option)}$")).click()
    await idle(page)
    await click(page, "Commit my answer")
    await sees(page, "Your answer is in")


async def counts(page, wanted, tries: int = 300):
    shown = None
    for _ in range(tries):   # the server reruns a student's page when the room's version moves
        shown = await page.evaluate(COUNTS)
        if shown == wanted:
            break
        await page.wait_for_timeout(100)
    return shown


async def shot(page, name: str, full: bool = True) -> None:
    await page.wait_for_function(CHARTS_FIT, timeout=WAIT_MS)   # charts drawn at their width
    await page.screenshot(path=str(ARTIFACTS / f"votes-{name}.png"), full_page=full)


async def lesson(browser, url: str, db: str) -> dict:
    room, key, ids = new_room(db, 2)
    teacher, students = await class_of(browser, url, room, key, ids, viewports={1: PHONE})
    phone = students[1]
    report = {}
    await nav(teacher, "Softmax saturation")
    for page in students:
        await sees(page, "Class question.")
    await sees(teacher, "0 of 2 answered")
    await asyncio.gather(*(vote(page, option) for page, option in zip(students, ROUND_1)))   # the class votes at once
    await sees(teacher, "2 of 2 answered", timeout=30_000)   # the server reruns the teacher's page on the number
    report["hidden"] = [await p.evaluate(COUNTS) for p in [teacher, *students]]
    await scroll_to(teacher.locator("button", has_text="Show answers"))
    await shot(teacher, "teacher-before-show", full=False)
    await teacher.get_by_text("Projector view").click()
    await idle(teacher)
    report["projector_text"] = await teacher.locator('[data-testid="stMain"]').inner_text()
    report["hidden"].append(await teacher.evaluate(COUNTS))
    await scroll_to(teacher.locator("button", has_text="Show answers"))
    await shot(teacher, "projector-before-show", full=False)
    await teacher.get_by_text("Projector view").click()
    await idle(teacher)

    await click(teacher, "Show answers")
    round_1 = [ROUND_1.count(o) for o in ("about 1", "about 16", "about 256")]
    report["shown"] = [await counts(p, round_1) for p in [teacher, *students]]
    await scroll_to(teacher.locator("button", has_text="Discuss and vote again"))
    await shot(teacher, "teacher-after-show", full=False)

    await click(teacher, "Discuss and vote again")
    await sees(teacher, "0 of 2 answered")
    for page in students:
        await sees(page, "Your first answer")
    await scroll_to(phone.locator('[data-testid="stRadio"]').last)
    await shot(phone, "phone-round-2", full=False)
    await asyncio.gather(*(vote(page, option) for page, option in zip(students, ROUND_2)))   # the class votes at once
    await sees(teacher, "2 of 2 answered", timeout=30_000)
    report["round_2_hidden"] = await teacher.evaluate(COUNTS)   # round 1's chart only: three bars

    await click(teacher, "Show answers")
    await sees(teacher, "Revealed to the class: the answer is about 16")
    both = round_1 + [ROUND_2.count(o) for o in ("about 1", "about 16", "about 256")]
    report["revealed"] = [await counts(p, both) for p in [teacher, *students]]
    await sees(students[0], "Right: about 16.")
    await sees(phone, "Not quite")
    report["phone_wider"] = await phone.evaluate(WIDER)
    await scroll_to(class_chart(phone))
    await shot(phone, "phone-reveal", full=False)
    await teacher.get_by_text("Projector view").click()
    await idle(teacher)
    await scroll_to(class_chart(teacher))
    await shot(teacher, "projector-reveal", full=False)
    return {**report, **await page_problems([teacher, *students])}


def test_two_rounds_hidden_until_shown_then_revealed_side_by_side(server):
    report = on_the_server(lesson, server)
    assert report["hidden"] == [None] * 4, report["hidden"]
    assert "answered" not in report["projector_text"] and "Show answers" in report["projector_text"]
    assert report["shown"] == [[1, 0, 1]] * 3, report["shown"]
    assert report["round_2_hidden"] == [1, 0, 1]
    assert report["revealed"] == [[1, 0, 1, 0, 1, 1]] * 3, report["revealed"]
    assert report["phone_wider"] <= 0
    assert report["exceptions"] == [] and report["errors"] == [] and report["external"] == []
