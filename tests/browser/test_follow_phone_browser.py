"""A following student on a 390 × 844 phone: the teacher-driven controls fold away, so the page's first figure
starts on the first screen, and nothing is wider than the screen.

The teacher (a desktop browser) opens the heatmaps, the flip page and a lab; the phone follows each time. Checks:
the follower shows the teacher's page and view; the first chart's top edge is within the viewport height, at the
top of the page; neither the main area nor a formula is wider than the screen; plotly's toolbar stays hidden
(a tap would show it over the chart's title); the folded controls' label names the
teacher's layer and head (and, in the lab, its positions). Screenshots of the first screen are saved in
test-artifacts/follow-phone-*.png.
"""
from __future__ import annotations

import pytest
from chromium import ARTIFACTS, CHARTS_FIT
from live_class import class_of, nav, new_room, on_the_server, page_problems, reaches, teacher_view

pytestmark = pytest.mark.browser

PHONE = (390, 844)
PAGES = [("Attention heatmaps", "heatmaps"), ("Antecedent flip", "flip"), ("Positional encodings", "lab")]
# the first chart's top, in CSS px from the top of the screen; how far the main area or a formula overflows sideways
LAYOUT = """() => {
  const main = document.querySelector('[data-testid=stMain]');
  const chart = main.querySelector('.js-plotly-plot');
  const wide = [main.scrollWidth - main.clientWidth, ...[...main.querySelectorAll('.katex-display')].map(
    e => e.scrollWidth - e.closest('[data-testid=stElementContainer]').clientWidth)];   // a formula past its column
  const bar = chart?.querySelector('.modebar-container');   // plotly's toolbar: a tap would show it over the title
  return [chart ? chart.getBoundingClientRect().top : null, Math.max(...wide),
          main.querySelector('[data-testid=stExpander] summary')?.textContent ?? '',
          bar ? getComputedStyle(bar).display : null];
}"""


async def lesson(browser, url: str, db: str) -> dict:
    room, key, ids = new_room(db, 1)
    teacher, [phone] = await class_of(browser, url, room, key, ids, viewports={0: PHONE})
    report = {}
    for title, name in PAGES:
        wanted = await teacher_view(teacher, db, room, await nav(teacher, title))
        assert await reaches(phone, wanted), (name, wanted)
        await phone.wait_for_selector('[data-testid="stMain"] .js-plotly-plot .main-svg', timeout=60_000)
        await phone.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
        await phone.wait_for_function(CHARTS_FIT, timeout=60_000)   # the charts redrawn at the phone's width
        # a tap on the chart (plotly shows its toolbar on hover, which a tap is on a phone)
        box = await phone.locator('[data-testid="stMain"] .js-plotly-plot').first.bounding_box()
        on_screen = box["y"] < PHONE[1] - 10   # the chart starts on the first screen (asserted below)
        await phone.mouse.move(box["x"] + box["width"] / 2, min(box["y"] + min(box["height"] / 2, 200), PHONE[1] - 5))
        if on_screen:   # the pointer is over the chart, what shows plotly's toolbar (a CSS :hover rule) where it shows
            await phone.wait_for_function("() => document.querySelector('[data-testid=stMain] .js-plotly-plot')"
                                          ".matches(':hover')", timeout=60_000)
        top, overflow, folded, toolbar = await phone.evaluate(LAYOUT)
        report[name] = {"top": top, "overflow": overflow, "folded": folded, "toolbar": toolbar,
                        "params": wanted["params"]}
        await phone.screenshot(path=str(ARTIFACTS / f"follow-phone-{name}.png"))
        print(f"{name}: first chart at {top:.0f} px, sideways overflow {overflow} px, folded: {folded!r}", flush=True)
    return {**report, **await page_problems([teacher, phone])}


def test_a_following_phone_sees_the_first_figure_on_its_first_screen(server):
    report = on_the_server(lesson, server)
    for _, name in PAGES:
        shown = report[name]
        assert shown["top"] is not None and 0 <= shown["top"] < PHONE[1], (name, shown)
        assert shown["overflow"] <= 0, (name, shown)
        assert shown["toolbar"] == "none", (name, shown)   # no toolbar over the chart's title on a phone
    heat, lab = report["heatmaps"], report["lab"]
    assert f"layer {heat['params']['layer']} · head {heat['params']['head']}" in heat["folded"], heat
    assert f"positions {lab['params']['pos_n']} · d_model {lab['params']['pos_d']}" in lab["folded"], lab
    assert report["exceptions"] == [] and report["errors"] == []
