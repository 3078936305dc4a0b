"""A class in three languages in Chromium (issue 37): a teacher in Spanish runs lesson 1; three students follow, one
in German, one in English (no ``lang`` in the link) and one in Spanish, each in a browser context of its own. Each
student keeps its language (the teacher's ``lang=es`` never reaches the German or English page), votes on step 1's
class question in its own words, and the store counts the three votes under one option id; the teacher's Next
brings each the second step in its own language. Screenshots: test-artifacts/languages-*.png.
"""
from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl, urlsplit

import pytest
from chromium import ARTIFACTS
from live_class import WAIT_MS, idle, new_room, on_the_server, opened, page_problems

from explorer.classroom import open_store
from explorer.lessons.folders import find

pytestmark = pytest.mark.browser

SOURCE = "app:1-attention-in-20-minutes"
LANGS = ("de", "en", "es")   # the students'; the teacher's is Spanish
FOLLOWING = {"de": "Du folgst der Klasse", "en": "Following class", "es": "Sigues la clase"}
STEP = {"de": "Schritt {n} von 7", "en": "Step {n} of 7", "es": "Paso {n} de 7"}
COMMIT = {"de": "Antwort abgeben", "en": "Commit my answer", "es": "Enviar mi respuesta"}


async def click(page, text: str) -> None:
    await page.locator("button", has_text=text).first.click()
    await idle(page)


async def sees(page, text: str, timeout: float = WAIT_MS) -> None:
    await page.get_by_text(text).first.wait_for(timeout=timeout)


def lang_of(page) -> str | None:
    return dict(parse_qsl(urlsplit(page.url).query)).get("lang")


async def lesson(browser, url: str, db: str) -> dict:
    room, key, ids = new_room(db, len(LANGS))
    lessons = {lang: find(SOURCE, {}, lang) for lang in LANGS}
    qid = lessons["en"].question_id(0)
    teacher = await opened(browser, f"{url}/lessons?room={room}&teacher={key}&lang=es")
    students = {}
    for lang, me in zip(LANGS, ids):
        students[lang] = await opened(browser, f"{url}/classroom?room={room}&me={me}"
                                      + ("" if lang == "en" else f"&lang={lang}"))
        await sees(students[lang], FOLLOWING[lang])
    await click(teacher, "Empezar con una clase")   # lesson 1, in the class the teacher already teaches
    await sees(teacher, "0 de 3 han respondido")
    report = {"step_1": {}, "step_2": {}, "lang": {}}

    async def answer(lang: str, page) -> None:   # the class answers at once, each in their own language
        step = lessons[lang].steps[0]
        await sees(page, STEP[lang].format(n=1))
        await sees(page, step.question.prompt)
        report["step_1"][lang] = True
        radio = page.locator('[data-testid="stRadio"]', has_text=step.question.options[1]).first
        await radio.get_by_text(step.question.answer, exact=True).first.click()
        await idle(page)
        await click(page, COMMIT[lang])
    await asyncio.gather(*(answer(lang, page) for lang, page in students.items()))
    await sees(teacher, "3 de 3 han respondido", timeout=30_000)
    report["counts"] = open_store({"EXPLORER_CLASSROOM_DB": db}).counts(room, qid)
    await students["de"].screenshot(path=str(ARTIFACTS / "languages-de-step-1.png"))
    await click(teacher, "Siguiente")
    for lang, page in students.items():
        await sees(page, STEP[lang].format(n=2))
        # the step's question in its own words (its start: markdown draws "->" and quotes its own way)
        await sees(page, lessons[lang].steps[1].question.prompt.split("'")[0].strip())
        report["step_2"][lang] = True
        report["lang"][lang] = lang_of(page)
    await students["en"].screenshot(path=str(ARTIFACTS / "languages-en-step-2.png"))
    await teacher.screenshot(path=str(ARTIFACTS / "languages-es-teacher.png"))
    return {**report, **await page_problems([teacher, *students.values()])}


def test_three_languages_follow_one_teacher_and_vote_under_one_option_id(server):
    report = on_the_server(lesson, server)
    assert report["counts"] == {"#0": 3}, report["counts"]
    assert report["step_2"] == {lang: True for lang in LANGS}
    assert report["lang"] == {"de": "de", "en": None, "es": "es"}   # the teacher's lang=es reached no one else
    assert report["exceptions"] == [] and report["errors"] == [] and report["external"] == []
