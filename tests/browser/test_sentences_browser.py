"""The class's own sentences in Chromium: a teacher and three students (one on a 390 × 844 phone) on a real server.

The teacher asks; each student types a sentence (one of them markup) and sends it; the server reruns the teacher's
page as they come in ("3 of 3"); the teacher hides the markup one, shows one head for the word "it", and reveals the
class question's answer; every page then holds the same figure, the hidden sentence nowhere, and each student the
number of their own. Nothing is wider than the phone, and no cell label of the word's rows lies over another on it.
Screenshots: test-artifacts/sentences-*.png.
"""
from __future__ import annotations

import pytest
from chromium import ARTIFACTS, CHARTS_FIT
from live_class import WAIT_MS, class_of, idle, new_room, on_the_server, page_problems, scroll_to

pytestmark = pytest.mark.browser

PHONE = (390, 844)
SENTENCES = ["The dog chased the cat because it was hungry.", "<b>it</b> <script>alert(1)</script>",
             "My phone fell on the floor and it broke."]
FIGURE = "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => t.textContent)"
WIDER = "() => { const m = document.querySelector('[data-testid=stMain]'); return m.scrollWidth - m.clientWidth }"
# pairs of the word-row figure's cell labels that overlap on screen (the same line, their boxes crossing by > 0.5 px)
OVERLAPS = """() => {
  const boxes = [...document.querySelectorAll('.js-plotly-plot .heatmaplayer text')]
    .filter(t => t.textContent).map(t => [t.textContent, t.getBoundingClientRect()]);
  const out = [];
  boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
    if (Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 2
        && Math.min(p.right, q.right) - Math.max(p.left, q.left) > 0.5) out.push(a + ' / ' + b);
  }));
  return [boxes.length, out];
}"""


async def click(page, text: str, nth: int = 0) -> None:
    await page.locator("button", has_text=text).nth(nth).click()
    await idle(page)


async def sees(page, text: str, timeout: float = WAIT_MS) -> None:
    await page.get_by_text(text).first.wait_for(timeout=timeout)


async def lesson(browser, url: str, db: str) -> dict:
    room, key, ids = new_room(db, 3)
    teacher, students = await class_of(browser, url, room, key, ids, viewports={2: PHONE})
    report = {}
    await click(teacher, "Ask for sentences")
    for page, text in zip(students, SENTENCES):
        await sees(page, "Write a sentence where")
        box = page.get_by_label("Your sentence")
        await box.fill(text)
        await box.press("Enter")
        await idle(page)
        await click(page, "Send my sentence")
        await sees(page, "Yours is in")
    await sees(teacher, "3 of 3 students wrote one", timeout=30_000)   # pushed by the server, no reload
    await click(teacher, "Hide", nth=1)
    await sees(teacher, "(hidden)")
    await click(teacher, "Show the class")
    await sees(teacher, "Which head of layer")
    for page in students[::2]:
        await sees(page, "Which head of layer")
    await click(teacher, "Show answers")
    await click(teacher, "Reveal the answer")
    for page in [teacher, *students]:
        await page.wait_for_function(f"() => ({FIGURE})().some(t => t.includes('across 2 sentences'))",
                                     timeout=WAIT_MS)
    report["figures"] = [await p.evaluate(FIGURE) for p in [teacher, *students]]
    report["mine"] = []
    for page in students:
        text = await page.locator('[data-testid="stMain"]').inner_text()
        report["mine"].append([n for n in (1, 2) if f"Yours is sentence {n}." in text])
        report.setdefault("leaked", []).append("alert(1)" in text and page is not students[1])
    await sees(students[1], "set your sentence aside")
    report["phone_wider"] = await students[2].evaluate(WIDER)
    report["phone_labels"] = await students[2].evaluate(OVERLAPS)
    for name, page in (("teacher", teacher), ("phone", students[2])):
        await scroll_to(page.locator(".js-plotly-plot").first)
        await page.wait_for_function(CHARTS_FIT, timeout=WAIT_MS)
        await page.screenshot(path=str(ARTIFACTS / f"sentences-{name}.png"), full_page=True)
    return {**report, **await page_problems([teacher, *students])}


def test_a_class_writes_one_is_hidden_and_every_page_shows_the_same_head(server):
    report = on_the_server(lesson, server)
    assert len({tuple(f) for f in report["figures"]}) == 1, report["figures"]
    assert report["mine"] == [[1], [], [2]], report["mine"]
    assert report["leaked"] == [False, False, False]
    assert report["phone_wider"] <= 0
    labels, overlapping = report["phone_labels"]
    assert labels >= 10 and overlapping == [], report["phone_labels"]   # the word's rows: no label over another
    assert report["exceptions"] == [] and report["errors"] == [] and report["external"] == []
