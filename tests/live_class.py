"""A live class in Chromium for the browser tests and the benchmark: a room made through the store API (the
server shares its SQLite file), a teacher who opens the private link, followers who open the student link, each in
their own browser context; and the check that a follower shows the teacher's current page and view.
"""
from __future__ import annotations

import asyncio
import secrets
import time
from urllib.parse import parse_qsl, urlsplit

from chromium import CHROMIUM, CHROMIUM_ARGS, Server, need_chromium, new_page_async, settled

WAIT_MS = 120_000
PRIVATE = ("room", "me", "teacher", "join")
# what a page shows, read in one go: address, page title, whether a script run is under way
SHOWN = ("() => [location.pathname, location.search, document.querySelector('[data-testid=stMain] h1')?.textContent"
         " ?? '', document.querySelector('[data-testid=stApp]')?.dataset.testScriptState ?? '']")


async def idle(page) -> None:
    """Wait until every script run the page asked for or its server started has finished (``chromium.SETTLED``)."""
    await settled(page, WAIT_MS)


# the script runs this page has finished since it opened, counted from the server's messages (``chromium.WATCH``:
# each run's ForwardMsg.script_finished), so a run too short for the app root to show "running" is counted too
RUNS = "() => window.__streamlit.runs"


async def runs(page) -> int:
    """The script runs ``page`` has finished since it opened: wait for a run the server must
    send, e.g. ``page.wait_for_function(f"() => ({RUNS})() > {before}")``."""
    return await page.evaluate(RUNS)


async def scroll_to(locator) -> None:
    """Scroll ``locator``'s first element into view. A rerun can redraw it (a chart, a button) between finding it and
    scrolling: Playwright then says it is no longer attached, and the locator finds the new one."""
    from playwright.async_api import Error

    for tries_left in range(20, 0, -1):
        try:
            return await locator.first.scroll_into_view_if_needed(timeout=WAIT_MS)
        except Error as error:
            if "not attached" not in str(error) or tries_left == 1:
                raise


async def opened(browser, url: str, viewport=(1400, 1000)):
    page = await new_page_async(browser, viewport=viewport)
    await page.goto(url, timeout=WAIT_MS)
    await page.wait_for_selector('[data-testid="stMain"] h1', timeout=WAIT_MS)
    await idle(page)
    return page


def store_env(db: str) -> dict:
    """The environment naming the classroom store ``db``: a SQLite file, or a redis:// URL (replicas)."""
    return {"EXPLORER_CLASSROOM_URL": db} if db.startswith(("redis://", "rediss://")) else {"EXPLORER_CLASSROOM_DB": db}


def new_room(db: str, n: int) -> tuple[str, str, list[str]]:
    """A room in the classroom file ``db`` with ``n`` students joined -> (code, teacher key, student ids)."""
    from explorer.classroom import open_store

    store = open_store(store_env(db))
    room, key = store.create_room()
    ids = [secrets.token_urlsafe(12) for _ in range(n)]
    for i, me in enumerate(ids):
        store.join(room, me, f"student {i}")
    return room, key, ids


def room_view(db: str, room: str) -> tuple[int, dict]:
    from explorer.classroom import open_store

    return open_store(store_env(db)).view(room)


async def class_of(browser, url: str, room: str, key: str, ids: list[str], viewports=None) -> tuple:
    """The teacher's page (private link opened, then the key has left the address) and one page per follower,
    opened a few at a time as a class does -> (teacher, followers)."""
    teacher = await opened(browser, f"{url}/classroom?room={room}&teacher={key}")
    gate = asyncio.Semaphore(3)

    async def follower(i: int, me: str):
        async with gate:
            size = (viewports or {}).get(i, (1400, 1000))
            page = await opened(browser, f"{url}/classroom?room={room}&me={me}", viewport=size)
            await page.get_by_text("Following class").first.wait_for(timeout=WAIT_MS)
            return page
    followers = await asyncio.gather(*(follower(i, me) for i, me in enumerate(ids)))
    return teacher, list(followers)


async def nav(page, title: str, wait: bool = True) -> str:
    """Click ``title`` in the page's navigation (sidebar or top), as the teacher does -> that page's path."""
    link = page.locator('[data-testid="stSidebarNav"] a, [data-testid="stTopNavLink"]', has_text=title).first
    path = urlsplit(await link.get_attribute("href", timeout=WAIT_MS)).path.rstrip("/")
    await link.click(timeout=WAIT_MS, no_wait_after=True)   # Streamlit moves the address itself (pushState)
    if wait:   # on that page, its run finished (a busy server may start the run later than idle's first look)
        await page.wait_for_function(f"() => location.pathname.replace(/\\/+$/, '') === {path!r}",
                                     timeout=WAIT_MS)
        await idle(page)
    return path


def _params(search: str) -> dict:
    return {k: v for k, v in parse_qsl(search.removeprefix("?"), keep_blank_values=True) if k not in PRIVATE}


async def shows(page) -> dict:
    """What ``page`` shows now: {"path": "/heatmaps", "params": {…without room/me}, "title": "…", "state": "…"}."""
    path, search, title, state = await page.evaluate(SHOWN)
    return {"path": urlsplit(path).path.rstrip("/"), "params": _params(search), "title": title, "state": state}


def published(db: str, room: str) -> dict:
    """The view the teacher's last finished run shared with the class, as a page shows it: {"path", "params"}."""
    view = room_view(db, room)[1]
    stem = view.get("page", "").removeprefix("pages/").removesuffix(".py")
    return {"path": "" if stem in ("", "home") else f"/{stem}",
            "params": {str(k): str(v) for k, v in view.get("params", {}).items() if k not in PRIVATE}}


async def teacher_view(teacher, db: str, room: str, path: str | None = None) -> dict:
    """The teacher's page as a follower must show it, read once the teacher's page is idle, on ``path`` (the page
    the teacher clicked last) when given, and shows the view its run shared (the store's): a view read between a
    click and the start of its run (on a busy machine a first look can find the page idle) fails the last two."""
    end = time.monotonic() + WAIT_MS / 1000
    while True:
        await idle(teacher)
        shown = await shows(teacher)
        view = {"path": shown["path"], "params": shown["params"], "title": shown["title"]}
        if (view["title"] and shown["state"] == "notRunning" and path in (None, view["path"])
                and published(db, room) == {"path": view["path"], "params": view["params"]}):
            return view
        if time.monotonic() > end:
            raise TimeoutError(f"the teacher's page {view} never showed the shared view {published(db, room)}")
        await asyncio.sleep(0.05)


def same_view(shown: dict, wanted: dict) -> bool:
    return (shown["path"] == wanted["path"] and shown["params"] == wanted["params"]
            and shown["title"] == wanted["title"] and shown["state"] == "notRunning")


async def reaches(page, wanted: dict, timeout_s: float = 120, poll_s: float = 0.05) -> float | None:
    """Seconds (monotonic clock) at which ``page`` first showed ``wanted``, or None after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if same_view(await shows(page), wanted):
            return time.monotonic()
        await asyncio.sleep(poll_s)
    return None


async def in_chromium(lesson, url: str, db: str) -> dict:
    """``await lesson(browser, url, db)`` in a fresh headless Chromium, closed afterwards -> its report."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return await lesson(browser, url, db)
        finally:
            await browser.close()


def on_a_fresh_server(lesson, tmp_path, log_prefix: str) -> dict:
    """``lesson`` in Chromium against a real server of its own with an empty classroom file -> its report; the
    server is stopped afterwards."""
    need_chromium()
    db = str(tmp_path / "classroom.sqlite3")
    server = Server(env={"EXPLORER_CLASSROOM_DB": db, "EXPLORER_CLASSROOM_URL": ""}, log_prefix=log_prefix)
    try:
        return asyncio.run(in_chromium(lesson, server.url, db))
    finally:
        server.stop()


def on_the_server(lesson, server) -> dict:
    """``lesson`` in Chromium against the test process's shared server (the ``server`` fixture, with its classroom
    file ``server.db``) -> its report. The lesson works in a room of its own: the rooms before it are other tests'."""
    need_chromium()
    return asyncio.run(in_chromium(lesson, server.url, server.db))


async def page_problems(pages) -> dict:
    """What went wrong on ``pages``: script errors, exceptions drawn by Streamlit, requests off the machine."""
    return {"errors": [e for p in pages for e in p.errors],
            "exceptions": [await e.inner_text() for p in pages
                           for e in await p.query_selector_all('[data-testid="stException"]')],
            "external": [u for p in pages for u in p.external]}
