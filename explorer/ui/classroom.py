"""Classroom live mode in the app: a teacher drives, the students in the room follow.

Who is who lives in ``st.session_state``: the room code, and either the teacher key or a random student id.
The student's code and id are also kept in the URL (``?room=K7M2QX&me=…``), so a reload, a reconnect or a server
restart brings the student back into the same room as the same student. The teacher key never stays in the URL:
opening the teacher link moves it into the session and deletes it from the address bar (a projector shows it).

The teacher's view is the page and its deep link (the URL parameters its widgets write, plus the heatmap
options); ``run_page`` publishes it after every page run in which it changed. Followers poll the room's version
once a second in a fragment and rerun the app only when it moved; the rerun then opens the teacher's page with the
teacher's parameters, as if the student had opened the teacher's URL.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import time

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from explorer.classroom import ClassroomError, ClassroomStore, NoSuchRoom, normalise_code, open_store, pretty_code
from explorer.ui.text import literal

ROOM, KEY, ME, FOLLOW, APPLIED, SEEN, PUBLISHED, LOCKED, PROJECTOR, WRONG, NOTES, QUESTIONS = (
    "_class_room", "_class_key", "_class_me", "_class_follow", "_class_applied", "_class_seen", "_class_published",
    "_class_locked", "_class_projector", "_class_wrong", "_class_notes", "_class_questions")
URL_ROOM, URL_ME, URL_KEY, URL_JOIN = "room", "me", "key", "join"
PRIVATE = (URL_ROOM, URL_ME, URL_KEY, URL_JOIN)
PAGE = "pages/classroom.py"
POLL_S = 1.0
FREE_TRIES, FIRST_WAIT_S, LONGEST_WAIT_S = 5, 10, 300
NO_NICKNAME = "(no nickname)"
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


@st.cache_resource
def store() -> ClassroomStore:
    """One store per server process (SQLite file or Redis, see ``explorer.classroom.open_store``)."""
    return open_store()


# ---------------------------------------------------------------------------------------------- who am I

def code() -> str | None:
    return st.session_state.get(ROOM)


def teacher_key() -> str | None:
    return st.session_state.get(KEY) if code() else None


def student() -> str | None:
    return st.session_state.get(ME) if code() and not teacher_key() else None


def following() -> bool:
    return bool(student()) and st.session_state.get(FOLLOW, True)


def projector() -> bool:
    """The teacher's projector view is on (larger figures, navigation on top, nothing private shown)."""
    return bool(teacher_key()) and st.session_state.get(PROJECTOR, False)


def text_locked() -> bool:
    """The teacher locked the text and this student follows: text boxes are read-only."""
    return following() and bool(st.session_state.get(LOCKED))


def note(message: str) -> None:
    st.session_state.setdefault(NOTES, []).append(message)


def current_page() -> str | None:
    """The running page as a path relative to app.py (``pages/heatmaps.py``), as st.switch_page takes it."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    info = ctx.pages_manager.get_pages().get(ctx.pages_manager.current_page_script_hash) or {}
    path = info.get("script_path")
    if not path:
        return None
    return os.path.relpath(path, os.path.dirname(ctx.main_script_path)).replace(os.sep, "/")


def app_url() -> str:
    """The app's address as students reach it: $EXPLORER_PUBLIC_URL, else the teacher's browser address."""
    url = os.environ.get("EXPLORER_PUBLIC_URL") or st.context.url or "http://localhost:8501"
    url = url.rstrip("/")
    ctx = get_script_run_ctx()
    if ctx is not None and not os.environ.get("EXPLORER_PUBLIC_URL"):
        info = ctx.pages_manager.get_pages().get(ctx.pages_manager.current_page_script_hash) or {}
        page = info.get("url_pathname") or ""
        url = url.removesuffix("/" + page) if page else url
    return url


def join_url(room: str) -> str:
    return f"{app_url()}/classroom?{URL_JOIN}={room}"


def teacher_url(room: str, key: str) -> str:
    return f"{app_url()}/classroom?{URL_ROOM}={room}&{URL_KEY}={key}"


# ---------------------------------------------------------------------------------------------- entering, leaving

def _enter(room: str, *, key: str | None = None, me: str | None = None) -> None:
    for name in (KEY, ME, APPLIED, SEEN, PUBLISHED, LOCKED):
        st.session_state.pop(name, None)
    st.session_state[ROOM], st.session_state[FOLLOW] = room, True
    if key:
        st.session_state[KEY] = key
    if me:
        st.session_state[ME] = me


def leave() -> None:
    """Forget the room in this session and in the URL (the store keeps it)."""
    for name in (ROOM, KEY, ME, FOLLOW, APPLIED, SEEN, PUBLISHED, LOCKED, PROJECTOR):
        st.session_state.pop(name, None)
    for name in PRIVATE:
        if name in st.query_params:
            del st.query_params[name]


def start_class() -> str:
    """A new room with this session as its teacher -> its code. TooManyRooms and others go to the caller."""
    room, key = store().create_room()
    _enter(room, key=key)
    return room


def end_class() -> None:
    store().close(code(), teacher_key())
    leave()


def _slowed() -> None:
    tries, until = st.session_state.get(WRONG, (0, 0.0))
    wait = until - time.time()
    if wait > 0:
        raise ClassroomError(f"Too many wrong codes: please wait {wait:.0f} seconds, then check the code with your "
                             "teacher.")


def _wrong_try() -> None:
    tries = st.session_state.get(WRONG, (0, 0.0))[0] + 1
    wait = min(FIRST_WAIT_S * 2 ** (tries - FREE_TRIES), LONGEST_WAIT_S) if tries >= FREE_TRIES else 0
    st.session_state[WRONG] = (tries, time.time() + wait)


def join(typed: str, nickname: str = "") -> str:
    """Join the room ``typed`` as a student -> the nickname stored. Raises ClassroomError (with a sentence to show)
    for a wrong code, a full room or a bad nickname; after FREE_TRIES wrong codes each try waits longer."""
    _slowed()
    try:
        room = normalise_code(typed)
        me = st.session_state.get(ME) or secrets.token_urlsafe(12)
        nick = store().join(room, me, nickname.strip() or NO_NICKNAME)
    except NoSuchRoom:
        _wrong_try()
        raise
    st.session_state[WRONG] = (0, 0.0)
    _enter(room, me=me)
    return nick


def _restore_from_url() -> None:
    """A teacher link moves its key into the session; a student link (room + me) rejoins the room."""
    params = st.query_params
    if URL_KEY in params:
        key, raw = params[URL_KEY], params.get(URL_ROOM, "")
        for name in (URL_KEY, URL_ROOM):
            if name in params:
                del params[name]
        try:
            room = normalise_code(raw)
            ok = store().is_teacher(room, key)
        except ClassroomError:
            ok = False
        if ok:
            _enter(room, key=key)
        else:
            note("This teacher link does not open a class: the class may have ended. Start a new one.")
    elif not code() and URL_ROOM in params and URL_ME in params:
        raw, me = params[URL_ROOM], params[URL_ME]
        try:
            room = normalise_code(raw)
        except ClassroomError:
            room = None
        if room and _TOKEN.match(me) and store().room(room) is not None:
            _enter(room, me=me)
        else:
            note("The class in this link has ended.")
            leave()


# ---------------------------------------------------------------------------------------------- following

def _apply(view: dict) -> None:
    """Make this page show the teacher's deep link, as a freshly opened URL would."""
    params = {str(k): str(v) for k, v in (view.get("params") or {}).items() if k not in PRIVATE}
    for name in params:
        st.session_state.pop(name, None)   # from_url then reads the URL, as on a first run
        st.session_state.pop(f"_kept_{name}", None)
    for name, value in (view.get("opts") or {}).items():
        if str(name).startswith("opt_"):
            st.session_state[str(name)] = bool(value)
    st.query_params.from_dict({**params, URL_ROOM: code(), URL_ME: student()})


def _teacher_page(view: dict) -> str | None:
    """The page to switch to for ``view``, or None when this page is already it (or it cannot be opened)."""
    page, here = view.get("page"), current_page()
    return page if page and here and page != here else None


def _switch(version: int, view: dict) -> None:
    """Open the teacher's page with the teacher's parameters (st.switch_page ends this run)."""
    page = _teacher_page(view)
    if page is None or st.session_state.get("_class_switched") == (version, page):
        return
    st.session_state["_class_switched"] = (version, page)
    params = {str(k): str(v) for k, v in (view.get("params") or {}).items() if k not in PRIVATE}
    try:
        st.switch_page(page, query_params={**params, URL_ROOM: code(), URL_ME: student()})
    except StreamlitAPIException:
        pass   # the teacher's page is not part of this app (or this is a single-page test): stay here


def _follow(version: int) -> None:
    if not following() or st.session_state.get(APPLIED) == version:
        return
    try:
        version, view = store().view(code())
    except NoSuchRoom:
        return
    _switch(version, view)
    if view.get("page"):
        _apply(view)
    st.session_state[APPLIED] = version


def watch(question: str, counts: dict) -> None:
    """The teacher's page shows ``counts`` for ``question``: the poll reruns the page when they change."""
    st.session_state.setdefault(QUESTIONS, {})[question] = counts


def _answers_moved(room: str) -> bool:
    shown = st.session_state.get(QUESTIONS, {})
    return any(store().counts(room, q) != counts for q, counts in shown.items())


@st.fragment(run_every=POLL_S)
def _poll() -> None:
    """Once a second: one version lookup (teacher: the shown questions' counts); the whole app reruns only when
    something changed. Drawn first on the page: a late fragment message then never lands past the end of a page
    that was just replaced (Streamlit's frontend rejects that: "Bad delta path index")."""
    room = code()
    if not room or st.session_state.get("_class_full_run"):
        return   # in the page's own run: on_page does the work
    try:
        if teacher_key():
            if _answers_moved(room):
                st.rerun(scope="app")
            return
        version = store().version(room)
    except NoSuchRoom:
        st.rerun(scope="app")
    if version != st.session_state.get(SEEN):
        st.rerun(scope="app")   # the page's run follows (switching pages there, not from this fragment)


def on_page() -> None:
    """Every page calls this first (through ``widgets.use_app_navigation``): rejoin from the URL, follow the
    teacher, and show the room's banner with its buttons."""
    _restore_from_url()
    room = code()
    info = store().room(room) if room else None
    if room and info is None:
        leave()
        note("The class has ended (or was idle for 12 hours); you are exploring on your own.")
    if info is not None and student() and following() and st.session_state.get(APPLIED) != info.version:
        with contextlib.suppress(NoSuchRoom):
            _switch(*store().view(room))   # before anything is drawn: a poll fragment registered by a run that
            # st.switch_page then ends can fire on the new page and leave it blank
    if info is not None:
        st.session_state[QUESTIONS] = {}
        st.session_state["_class_full_run"] = True
        try:
            _poll()   # first on the page, see _poll
        finally:
            st.session_state.pop("_class_full_run", None)
    for message in st.session_state.pop(NOTES, []):
        st.info(literal(message), icon=":material/school:")
    if info is None:
        return
    st.session_state[SEEN], st.session_state[LOCKED] = info.version, info.locked
    if student():
        st.query_params[URL_ROOM], st.query_params[URL_ME] = room, student()
        _follow(info.version)
    _banner(room, info.students)


def _explore() -> None:
    st.session_state[FOLLOW] = False


def _catch_up() -> None:
    st.session_state[FOLLOW] = True
    st.session_state.pop(APPLIED, None)
    st.session_state.pop("_class_switched", None)


def _banner(room: str, students: int) -> None:
    shown = pretty_code(room)
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="medium"):
        if teacher_key():
            if projector():
                st.markdown(f"### :material/school: Join at {literal(app_url())}/classroom · code **{shown}**")
            else:
                st.markdown(f":material/school: **Teaching class {shown}** · {students} "
                            f"{'student' if students == 1 else 'students'}")
            st.toggle("Projector view", key=PROJECTOR, help="Larger type in figures; navigation on top; nothing "
                      "private (teacher link, nicknames) on screen.")
            if current_page() != PAGE:
                st.page_link(PAGE, label="Class", icon=":material/groups:")
        elif following():
            st.markdown(f":material/cast_for_education: **Following class {shown}**"
                        + (" · the text is locked" if text_locked() else ""))
            st.button("Explore on my own", icon=":material/explore:", on_click=_explore, key="_class_explore")
        else:
            st.markdown(f":material/explore: **Class {shown}**: you are exploring on your own")
            st.button("Catch up with the teacher", icon=":material/sync:", on_click=_catch_up, key="_class_catch_up",
                      type="primary")


def publish() -> None:
    """Teacher: share this page and its deep link with the class, when they differ from what was shared last."""
    room, key, page = code(), teacher_key(), current_page()
    if not key or not page or page == PAGE:
        return
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in PRIVATE}
    opts = {k: v for k, v in st.session_state.items() if isinstance(k, str) and k.startswith("opt_")
            and isinstance(v, bool)}
    view = {"page": page, "params": params, "opts": opts}
    if st.session_state.get(PUBLISHED) == view:
        return
    try:
        store().set_view(room, key, view)
    except ClassroomError as err:
        st.warning(literal(err), icon=":material/school:")
        return
    st.session_state[PUBLISHED] = view


def run_page(page) -> None:
    """app.py's ``page.run()``, then publish the teacher's view (also after st.stop; not after a rerun)."""
    try:
        page.run()
    except StopException:
        publish()
        raise
    publish()


def nav_position() -> str:
    return "top" if projector() else "sidebar"


FONT_SCALE = 1.6


def figure_scale() -> float:
    """How much larger figure text is drawn (the projector view)."""
    return FONT_SCALE if projector() else 1.0
