"""Lesson 6 as a class lives it, in Chromium against the real server: the default run is first trained alone, by a
browser-less session on the Watch heads learn page (the server then holds it finished, as after a teacher's morning
try; no browser needs to redraw its growing curves for that), then the teacher starts lesson 6 with a class of two
(one on a 390 px phone). On step 2 ("When will the loss drop?") the question holds the page open: the teacher's
Train plays the finished run back at its recorded pace, the curves grow on every screen while the students vote,
and the words that say the answer (the phase change's sentence, the step slider, the heatmaps) wait for the
teacher's reveal. Screenshots: test-artifacts/learn-class-*.png."""
from __future__ import annotations

import asyncio
import contextlib
import re
import time

import pytest
from chromium import ARTIFACTS
from live_class import WAIT_MS, idle, on_the_server, opened, page_problems
from playwright.async_api import Error as PlaywrightError

from bench.wsclient import Session

pytestmark = pytest.mark.browser

PHONE = (390, 844)
GROWING = "Playing back: step"
PHASE_SAID = "The phase change (dashed)"
TRAINED = "A run trained live on this server at"
LOSS_TITLE = ("() => [...document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot .gtitle')]"
              ".map(t => t.textContent).some(t => t.startsWith('Loss (nats)'))")


async def text(page) -> str:
    return await page.inner_text('[data-testid="stMain"]')


async def vote(page, option: str) -> bool:
    """Vote ``option`` -> whether the curves were growing on this screen as the student voted."""
    growing = GROWING in await text(page)
    await page.locator('[data-testid="stRadio"] label', has_text=option).first.click(timeout=WAIT_MS)
    await page.get_by_role("button", name="Commit my answer").first.click(timeout=WAIT_MS)
    await page.get_by_text("Your answer is in").first.wait_for(timeout=WAIT_MS)
    return growing


async def trained_alone(url: str) -> bool:
    """The default run trained live on the server by one session alone (its Train pressed), read until its page
    says the server holds it finished -> whether it did within the wait."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    async with Session(url, page="learn", keep=True, timeout=WAIT_MS / 1000) as session:
        await session.load()
        run = await session.rerun(widgets=[WidgetState(id=session.widget_ids["tr_press"], trigger_value=True)])
        deadline = time.monotonic() + 4 * WAIT_MS / 1000   # a wait, not a measure: ~20 s on an idle machine
        while not any(TRAINED in t for t in run.texts) and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            run = await session.rerun()
        return any(TRAINED in t for t in run.texts)


async def lesson(browser, url: str, db: str) -> dict:
    from explorer.classroom import normalise_code, open_store

    report = {"trained_alone": await trained_alone(url)}
    teacher = await opened(browser, url)   # Home: lesson 6 with a class
    card = teacher.locator(".st-key-lesson_card_app-6-watch-a-circuit-grow")
    await card.get_by_role("button", name="Start with a class").first.click(timeout=WAIT_MS)
    await teacher.get_by_text("step 1 of 6").first.wait_for(timeout=WAIT_MS)
    banner = await teacher.get_by_text("Teaching class").first.inner_text()
    room = normalise_code(re.search(r"class ([A-Z0-9]{3}-[A-Z0-9]{3})", banner)[1])
    store = open_store({"EXPLORER_CLASSROOM_DB": db})
    for me in ("ada-learn", "bo-learn"):
        store.join(room, me, me[:3])
    students = [await opened(browser, f"{url}/classroom?room={room}&me=ada-learn"),
                await opened(browser, f"{url}/classroom?room={room}&me=bo-learn", viewport=PHONE)]
    await teacher.get_by_role("button", name="Next").first.click(timeout=WAIT_MS)
    await teacher.get_by_text("step 2 of 6").first.wait_for(timeout=WAIT_MS)
    await idle(teacher)
    prompt = "At which step will the loss on the second copy drop?"
    for s in students:
        await s.get_by_text(prompt).first.wait_for(timeout=WAIT_MS)
    report["train_before_vote"] = await teacher.get_by_role("button", name="Train").count() > 0
    # the teacher presses Train: the server's finished run plays back on every screen while the class votes
    await teacher.get_by_role("button", name="Train").first.click(timeout=WAIT_MS)
    await asyncio.gather(*(p.get_by_text(GROWING).first.wait_for(timeout=WAIT_MS) for p in [teacher, *students]))
    report["growing_at_vote"] = await asyncio.gather(vote(students[0], "between step 750 and 1,125"),
                                                     vote(students[1], "between step 375 and 750"))
    await teacher.screenshot(path=str(ARTIFACTS / "learn-class-teacher-growing.png"), full_page=False)
    with contextlib.suppress(PlaywrightError):   # a screenshot of the phone with the curves growing, if still: the
        # playback may end between the look and the scroll (its progress line then leaves the page)
        await students[1].get_by_text(GROWING).first.scroll_into_view_if_needed(timeout=2_000)
        await students[1].screenshot(path=str(ARTIFACTS / "learn-class-phone-growing.png"), full_page=False)
    report["played_back_said"] = ["Played back from a run trained on this server at" in await text(p)
                                  for p in [teacher, *students]]
    # the run ends: its curves are the answer, on every screen; what says it in words stays folded
    for p in [teacher, *students]:
        await p.get_by_text(GROWING).first.wait_for(state="detached", timeout=WAIT_MS)
        await idle(p)
        await p.wait_for_function(LOSS_TITLE, timeout=WAIT_MS)
    report["folded_after_run"] = [PHASE_SAID not in await text(p) and "stay folded until" in await text(p)
                                  for p in [teacher, *students]]
    await students[0].screenshot(path=str(ARTIFACTS / "learn-class-student-before-reveal.png"), full_page=True)
    await teacher.get_by_role("button", name="Show answers").first.click(timeout=WAIT_MS)
    await idle(teacher)
    await teacher.get_by_role("button", name="Reveal the answer").first.click(timeout=WAIT_MS)
    await idle(teacher)
    for p in [teacher, *students]:
        await p.get_by_text(PHASE_SAID).first.wait_for(timeout=WAIT_MS)   # the page unfolds with the reveal
    report["verdicts"] = [await s.get_by_text("Right:").count() > 0 for s in students]
    report["heatmaps_after"] = [await p.get_by_text("Every head on the probe sequence").count() > 0
                                for p in [teacher, *students]]
    await students[1].screenshot(path=str(ARTIFACTS / "learn-class-phone-revealed.png"), full_page=False)
    from explorer.lessons.folders import find
    report["counts"] = store.counts(room, find("app:6-watch-a-circuit-grow").question_id(1))
    return {**report, **await page_problems([teacher, *students])}


def test_step_2_votes_while_the_curves_grow_on_every_screen_then_the_reveal(server):
    report = on_the_server(lesson, server)
    assert report["trained_alone"]   # the server holds the default run, finished, before the lesson starts
    assert report["train_before_vote"]   # the teacher's Train is there while the question is open
    assert report["played_back_said"] == [True, True, True]
    assert report["growing_at_vote"] == [True, True]
    assert report["folded_after_run"] == [True, True, True]
    assert report["verdicts"] == [True, False]   # 950 lies between 750 and 1,125
    assert report["heatmaps_after"] == [True, True, True]
    assert sum(report["counts"].values()) == 2   # both votes of step 2 counted
    assert report["exceptions"] == [] and report["errors"] == [] and report["external"] == []
