"""The room's banner above every page of a session in a class: teaching, following or exploring on one's own, the
notes for this session, and the poll the server watches (``push``). All of it is this session's own: never in a
recorded page (``replayed``). The teacher's projector view (larger figure text) is switched here too."""
from __future__ import annotations

import contextvars
from datetime import timedelta

import streamlit as st

from explorer.classroom import NoSuchRoom, pretty_code
from explorer.ui import params as query
from explorer.ui.live import page_recorder, push
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.live.membership import (
    PAGE,
    PROJECTOR,
    URL_ME,
    URL_ROOM,
    app_url,
    code,
    current_page,
    is_following,
    leave,
    leave_if_removed,
    note,
    projector,
    store,
    student,
    teacher_key,
    text_locked,
)
from explorer.ui.live.seat import mine
from explorer.ui.text import literal
from explorer.words.i18n import _, ngettext

FONT_SCALE = 1.6
_DRAWN: contextvars.ContextVar[bool] = contextvars.ContextVar("explorer_banner_drawn", default=False)


def on_page() -> None:
    """Every page calls this first (through ``widgets.use_app_navigation``): the room's poll, notes and banner.
    Rejoining from the URL and following the teacher happened before the page was chosen
    (``following.navigation``). All of it is this session's own: never in a recorded page (``replayed``)."""
    if _DRAWN.get():   # a follower's run drew it before its page (``before_page``)
        return
    with page_recorder.unrecorded():
        _on_page()


def before_page() -> bool:
    """A follower's run of the teacher's page: the banner and poll before the page (its text lock read afresh, for
    the replay's key), not again when the page calls ``on_page`` (until ``page_done``) -> whether the session
    still follows."""
    on_page()
    _DRAWN.set(True)
    return is_following()


def page_done() -> None:
    """The page's run is over: the next run draws its banner when its page calls ``on_page``."""
    _DRAWN.set(False)


def figure_scale() -> float:
    """How much larger figure text is drawn (the projector view)."""
    return FONT_SCALE if projector() else 1.0


@st.fragment(run_every=timedelta(hours=12))
def _back_after_a_restart() -> None:
    """A class's page: one empty placeholder, and a timer that (12 hours being longer than a class) never fires.
    It is there for Streamlit's frontend, which runs the page again when its connection comes back only if the
    page holds a timed fragment: after a server restart mid-class the page then rejoins the class and the server's
    watch (``push``) without a reload."""
    st.empty()


def _on_page() -> None:
    room = code()
    info = store().room(room) if room else None
    if room and info is None:
        leave()
        note(_("The class has ended (or was idle for 12 hours); you are exploring on your own."))
    info = leave_if_removed(info)   # the teacher removed this student: leave with a note
    if info is not None:
        _back_after_a_restart()
    seat = mine()
    notes, seat.notes = seat.notes, []
    for message in notes:
        st.info(literal(message), icon=":material/school:")
    if info is None:
        return
    if not is_following():   # a follower's seen version is the one it applied (following.navigation)
        seat.seen = info.version
    session = internals.session_id()
    if session is not None and not teacher_key() and push.served(session):   # rerun by the server as the teacher moves
        push.watch(session, room, seat.seen, _version_or_none)
    seat.locked = info.locked
    if student():
        query.put_all({URL_ROOM: room, URL_ME: student()})
    _banner(room, info.students)


def _version_or_none(room: str) -> int | None:
    try:
        return store().version(room)
    except NoSuchRoom:
        return None


def _explore() -> None:
    mine().follow = False


def _catch_up() -> None:
    seat = mine()
    seat.follow, seat.applied = True, None


def _banner(room: str, students: int) -> None:
    shown = pretty_code(room)
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="medium"):
        if teacher_key():
            if projector():
                st.markdown("### :material/school: " + _("Join at {address}/classroom · code **{code}**").format(
                    address=literal(app_url()), code=shown))
            else:
                st.markdown(":material/school: " + ngettext("**Teaching class {code}** · {n} student",
                                                            "**Teaching class {code}** · {n} students",
                                                            students).format(code=shown, n=students))
            st.toggle(_("Projector view"), key=PROJECTOR, help=_("Larger type in figures; navigation on top; nothing "
                      "private (teacher link, nicknames) on screen."))
            if current_page() != PAGE:
                st.page_link(PAGE, label=_("Class"), icon=":material/groups:")
        elif is_following():
            st.markdown(":material/cast_for_education: " + (
                _("**Following class {code}** · the text is locked") if text_locked()
                else _("**Following class {code}**")).format(code=shown))
            st.button(_("Explore on my own"), icon=":material/explore:", on_click=_explore, key="_class_explore")
        else:
            st.markdown(":material/explore: " + _("**Class {code}**: you are exploring on your own").format(
                code=shown))
            st.button(_("Catch up with the teacher"), icon=":material/sync:", on_click=_catch_up,
                      key="_class_catch_up", type="primary")
