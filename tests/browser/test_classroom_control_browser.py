"""The class stays the teacher's, in Chromium on a real server: the roster fills in by itself as students join,
the teacher removes a nickname held by a prank's seats and a real student, whose phone leaves the class on its
next poll without a reload; the closed room turns a new student away. Screenshots go to the test artifacts."""
from __future__ import annotations

import pytest
from chromium import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    Server,
    charts_fit,
    exception_texts,
    need_chromium,
    wait_idle,
    watch,
)

from explorer.classroom import SqliteStore, pretty_code

pytestmark = pytest.mark.browser
WAIT_MS = 120_000
PHONE = {"width": 390, "height": 844}


def page_at(browser, url: str, viewport: dict):
    page = watch(browser.new_context(viewport=viewport)).new_page()
    page.goto(url, timeout=WAIT_MS)
    wait_idle(page)
    return page


def click(page, text: str) -> None:
    page.locator("button", has_text=text).first.click()
    wait_idle(page)


def sees(page, text: str) -> None:
    page.get_by_text(text).first.wait_for(timeout=WAIT_MS)


def test_roster_remove_and_close_in_the_browser(tmp_path):
    need_chromium()
    db = tmp_path / "classroom.sqlite3"
    server = Server(env={"EXPLORER_CLASSROOM_DB": str(db), "EXPLORER_CLASSROOM_URL": ""}, log_prefix="classctl")
    from playwright.sync_api import sync_playwright
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                lesson(browser, server.url, db)
            except Exception:
                for i, context in enumerate(browser.contexts):
                    context.pages[0].screenshot(path=str(ARTIFACTS / f"classctl-failed-{i}.png"), full_page=True)
                raise
            browser.close()
    finally:
        server.stop()


def lesson(browser, url: str, db) -> None:
    teacher = page_at(browser, f"{url}/classroom", {"width": 1366, "height": 900})
    click(teacher, "Start a class")
    room = teacher.locator('[data-testid="stMain"] h1').nth(1).inner_text().strip().replace("-", "")
    store = SqliteStore(db)
    for i in range(3):   # a prank script's seats, straight into the store the server uses
        store.join(room, f"prank-{i}", "xx")
    phone = page_at(browser, f"{url}/classroom?join={room}", PHONE)
    phone.get_by_label("Nickname").fill("xx")   # a real student who picked the prank's nickname
    click(phone, "Join")
    sees(phone, f"Following class {pretty_code(room)}")
    sees(teacher, "4 students joined")   # no click: the roster redraws itself
    teacher.get_by_text("Remove students").first.click()
    teacher.locator('[data-testid="stMultiSelect"] input').first.click()
    teacher.get_by_role("option", name="xx (4 seats)").click()
    teacher.keyboard.press("Escape")
    teacher.screenshot(path=str(ARTIFACTS / "classroom-remove-1366.png"), full_page=True)
    teacher.locator('[data-testid="stPopoverBody"] button').filter(has_text="Remove").click()
    wait_idle(teacher)
    sees(teacher, "0 students joined")
    sees(phone, "your teacher removed you")   # the phone's own poll: no reload, no click
    assert "room=" not in phone.url
    phone.screenshot(path=str(ARTIFACTS / "classroom-removed-390.png"), full_page=True)
    teacher.get_by_text("Open to new students").first.click()
    wait_idle(teacher)
    sees(teacher, "Closed to new students")
    late = page_at(browser, f"{url}/classroom?join={room}", PHONE)
    click(late, "Join")
    sees(late, "Your teacher has closed this class to new students")
    late.screenshot(path=str(ARTIFACTS / "classroom-closed-390.png"), full_page=True)
    teacher.screenshot(path=str(ARTIFACTS / "classroom-teacher-closed-1366.png"), full_page=True)
    teacher.set_viewport_size({"width": 390, "height": 2200})   # Streamlit scrolls inside its main block
    charts_fit(teacher)   # redrawn at the phone's width
    teacher.screenshot(path=str(ARTIFACTS / "classroom-teacher-closed-390.png"), full_page=True)
    assert store.room(room).students == 0 and not store.room(room).joinable
    assert all(exception_texts(pg) == [] for pg in (teacher, phone, late))
