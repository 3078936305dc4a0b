"""Who is in which class: the room code and either the teacher key or a random student id, in the session's
seat (``seat.mine()``). The student's code and id are also kept in the URL (``?room=K7M2QX&me=…``), so a reload, a
reconnect or a server restart brings the student back into the same room as the same student. The teacher key
never stays in the URL: opening the teacher link moves it into the session and deletes it from the address bar.
Joining is guarded: wrong codes wait longer and longer, counted per session and, in the store, per client address
(so a script that opens new sessions is slowed too); a student the teacher removed leaves on the next run."""
from __future__ import annotations

import os
import re
import secrets
import time

import streamlit as st

from explorer.classroom import (
    ClassroomError,
    ClassroomStore,
    InvalidCode,
    NoSuchRoom,
    Room,
    normalise_code,
    open_store,
    pretty_code,
)
from explorer.classroom.address import client_address as _address_of
from explorer.sitemap import table
from explorer.ui import language, params
from explorer.ui.live import push
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.live.seat import mine
from explorer.words.i18n import _, ngettext

PROJECTOR = "_class_projector"   # the teacher's "Projector view" toggle: a widget's key (the rest: ``seat``)
# the teacher link's secret travels as "teacher", not "key": "key" is the heatmap page's key token (its breakdown)
URL_ROOM, URL_ME, URL_KEY, URL_JOIN = "room", "me", "teacher", "join"
OLD_URL_KEY = "key"   # teacher links made before the rename: a secret of 8+ URL-safe characters, never a position
PRIVATE = (URL_ROOM, URL_ME, URL_KEY, URL_JOIN)
URL_HOMEWORK = "homework"   # a homework's link (explorer.ui.live.homework_panel): its "teacher" is the homework's key
PAGE = table.CLASSROOM.file
FREE_TRIES, FIRST_WAIT_S, LONGEST_WAIT_S = 5, 10, 300
NO_NICKNAME = "(no nickname)"
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


@st.cache_resource
def store() -> ClassroomStore:
    """One store per server process (SQLite file or Redis, see ``explorer.classroom.open_store``)."""
    return open_store()


# ---------------------------------------------------------------------------------------------- who am I

def code() -> str | None:
    return mine().room


def teacher_key() -> str | None:
    return mine().key if code() else None


def student() -> str | None:
    return mine().me if code() and not teacher_key() else None


def is_following() -> bool:
    return bool(student()) and mine().follow


def projector() -> bool:
    """The teacher's projector view is on (larger figures, navigation on top, nothing private shown)."""
    return bool(teacher_key()) and st.session_state.get(PROJECTOR, False)


def text_locked() -> bool:
    """The teacher locked the text and this student follows: text boxes are read-only."""
    return is_following() and bool(mine().locked)


def note(message: str) -> None:
    mine().notes.append(message)


def _page_name(info: dict) -> str | None:
    path = info.get("script_path")
    main = internals.main_script_path()
    if not path or main is None:
        return None
    return os.path.relpath(path, main.parent).replace(os.sep, "/")


def current_page() -> str | None:
    """The running page as a path relative to app.py (``pages/heatmaps.py``), as st.switch_page takes it."""
    return _page_name(internals.running_page())


def page_address(page: str) -> str | None:
    """The address of ``page`` (``pages/heatmaps.py``) relative to the app's root (``heatmaps``; ``""`` for the
    default page), or None when this app's navigation has no such page."""
    for info in internals.pages():
        if _page_name(info) == page:
            return info.get("url_pathname") or ""
    return None


def app_url() -> str:
    """The app's address as students reach it: $EXPLORER_PUBLIC_URL, else the teacher's browser address."""
    url = os.environ.get("EXPLORER_PUBLIC_URL") or st.context.url or "http://localhost:8501"
    url = url.rstrip("/")
    if not os.environ.get("EXPLORER_PUBLIC_URL"):
        page = internals.running_page().get("url_pathname") or ""
        url = url.removesuffix("/" + page) if page else url
    return url


def join_url(room: str) -> str:
    """The link (and QR code) students join with, in the teacher's language (each student can change it)."""
    return language.with_lang(f"{app_url()}/classroom?{URL_JOIN}={room}")


def teacher_url(room: str, key: str) -> str:
    return language.with_lang(f"{app_url()}/classroom?{URL_ROOM}={room}&{URL_KEY}={key}")


# ---------------------------------------------------------------------------------------------- entering, leaving

def leave() -> None:
    """Forget the room in this session and in the URL (the store keeps it)."""
    session = internals.session_id()
    if session is not None:
        push.forget(session)
    mine().leave()
    st.session_state.pop(PROJECTOR, None)
    for name in PRIVATE:
        params.drop(name)


def start_class() -> str:
    """A new room with this session as its teacher -> its code. TooManyRooms and others go to the caller."""
    room, key = store().create_room()
    mine().enter(room, key=key)
    return room


def end_class() -> None:
    store().close(code(), teacher_key())
    leave()


def client_address() -> str | None:
    """This session's client address (None: unknown or loopback). X-Forwarded-For is read only when the deployer
    says how many proxies in front are trusted ($EXPLORER_TRUSTED_PROXIES, e.g. 1 behind deploy/cluster.py's
    HAProxy); otherwise anyone could send one and pose as any address."""
    try:
        trusted = int(os.environ.get("EXPLORER_TRUSTED_PROXIES") or 0)
    except ValueError:
        trusted = 0
    return _address_of(st.context.ip_address, st.context.headers.get_all("X-Forwarded-For"), trusted)


def _slowed(address: str | None) -> None:
    tries, until = mine().wrong
    wait = max(until - time.time(), store().code_wait(address) if address else 0.0)
    if wait > 0:
        seconds = max(1, round(wait))
        raise ClassroomError(ngettext("Too many wrong codes: please wait {seconds} second, then check the code with "
                                      "your teacher.", "Too many wrong codes: please wait {seconds} seconds, then "
                                      "check the code with your teacher.", seconds).format(seconds=seconds))


def _wrong_try(address: str | None) -> None:
    """Count a wrong code in this session and, for a well-formed code (a guess, not a typo), for the address."""
    tries = mine().wrong[0] + 1
    wait = min(FIRST_WAIT_S * 2 ** (tries - FREE_TRIES), LONGEST_WAIT_S) if tries >= FREE_TRIES else 0
    mine().wrong = (tries, time.time() + wait)
    if address:
        store().wrong_code(address)


def guarded(typed: str, lookup):
    """``lookup(code)`` for the code ``typed``, slowed like a join: a garbled code, or one that opens no room
    (NoSuchRoom from ``lookup``), counts as a wrong code in this session and for the client's address."""
    address = client_address()
    _slowed(address)
    try:
        room = normalise_code(typed)
    except InvalidCode:
        _wrong_try(None)
        raise
    try:
        found = lookup(room)
    except NoSuchRoom:
        _wrong_try(address)
        raise
    mine().wrong = (0, 0.0)
    return found


def join(typed: str, nickname: str = "") -> str:
    """Join the room ``typed`` as a student -> the nickname stored. Raises ClassroomError (with a sentence to show)
    for a wrong code, a closed or full room or a bad nickname; after FREE_TRIES wrong codes in this session, or
    WRONG_FREE_TRIES from this address in any sessions, each try waits longer. A new join is a new student id."""
    me = mine().me or secrets.token_urlsafe(12)
    room, nick = guarded(typed, lambda room: (room, store().join(room, me, nickname.strip() or NO_NICKNAME,
                                                                 address=client_address())))
    mine().enter(room, me=me)
    return nick


def leave_if_removed(info: Room | None) -> Room | None:
    """A student whose seat the teacher took away (or whose URL names no seat) leaves the room here, with a note
    -> None; anyone else -> ``info`` unchanged. The removal bumps the room's version, so this runs on the next
    poll."""
    me = student()
    if info is None or not me:
        return info
    try:
        if store().joined(info.code, me):
            return info
    except NoSuchRoom:
        return info   # the room just ended: the next run says so
    leave()
    note(_("You are no longer in class {code}: your teacher removed you, and you are exploring on your own. To come "
           "back, join again with the code on the Classroom page.").format(code=pretty_code(info.code)))
    return None


def roster() -> list[tuple[str, str]]:
    """Teacher: (student id, nickname) of everyone in the room, sorted by nickname."""
    return store().roster(code(), teacher_key())


def remove(students: list[str]) -> None:
    """Teacher: take these students' seats away; the server reruns their sessions, which leave."""
    store().remove(code(), teacher_key(), students)


def set_joinable(joinable: bool) -> None:
    """Teacher: open or close the room to new students."""
    store().set_joinable(code(), teacher_key(), joinable)


def restore_from_url() -> None:
    """A teacher link moves its key into the session; a student link (room + me) rejoins the room. A homework's
    teacher link (``?homework=…&teacher=…``) is left to the Lessons page (``homework.adopt_teacher_link``)."""
    query = st.query_params
    old = URL_ROOM in query and URL_ME not in query and _TOKEN.match(query.get(OLD_URL_KEY, ""))
    if (URL_KEY in query and URL_HOMEWORK not in query) or old:
        given = URL_KEY if URL_KEY in query else OLD_URL_KEY
        key, raw = query[given], query.get(URL_ROOM, "")
        for name in (given, URL_ROOM):
            params.drop(name)
        try:
            room = normalise_code(raw)
            ok = store().is_teacher(room, key)
        except ClassroomError:
            ok = False
        if ok:
            mine().enter(room, key=key)
        else:
            note(_("This teacher link does not open a class: the class may have ended. Start a new one."))
    elif not code() and URL_ROOM in query and URL_ME in query:
        raw, me = query[URL_ROOM], query[URL_ME]
        try:
            room = normalise_code(raw)
        except ClassroomError:
            room = None
        if room and _TOKEN.match(me) and store().room(room) is not None:
            mine().enter(room, me=me)
        else:
            note(_("The class in this link has ended."))
            leave()
