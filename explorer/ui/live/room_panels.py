"""The Classroom page's panels: start a class, join one, and the teacher's and the student's views of the room.

The teacher's view holds the class's keys: open or close the room to new students, the roster of nicknames
(never in projector view) and removing students from it."""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError, pretty_code, qr_svg
from explorer.ui import params
from explorer.ui.live import membership, replayed, report_panel, seat, sentences_panel
from explorer.ui.text import literal
from explorer.words.i18n import _, ngettext

TYPED, NICK, PICK, DONE = "_class_typed", "_class_nick", "_class_remove_pick", "_class_done"


def _start() -> None:
    try:
        membership.start_class()
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)


def _join() -> None:
    try:
        membership.join(st.session_state.get(TYPED, ""), st.session_state.get(NICK, ""))
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)
        return
    params.drop(membership.URL_JOIN)


def _error() -> None:
    error = st.session_state.pop("_class_error", None)
    if error:
        st.error(literal(error), icon=":material/error:")


def outside() -> None:
    """Not in a room: join one (the code from a join link is filled in), or start one as the teacher."""
    if TYPED not in st.session_state and membership.URL_JOIN in st.query_params:
        st.session_state[TYPED] = st.query_params[membership.URL_JOIN][:40]
    _error()
    left, right = st.columns(2, gap="large")
    with left, st.container(border=True):
        st.subheader(":material/login: " + _("Join a class"))
        st.text_input(_("Room code"), key=TYPED, max_chars=40, placeholder="K7M-2QX")
        st.text_input(_("Nickname (optional; only your teacher sees it)"), key=NICK, max_chars=60)
        st.button(_("Join"), key="_class_join", on_click=_join, type="primary", icon=":material/login:")
    with right, st.container(border=True):
        st.subheader(":material/school: " + _("Teach a class"))
        st.markdown(_("Start a class, show its code or QR code on the projector, and the students' pages follow "
                      "yours: the page, the model, the text, the layer and the head. Questions in the labs become "
                      "class questions whose answers you reveal together. Each student reads the app in their own "
                      "language."))
        st.button(_("Start a class"), key="_class_start", on_click=_start, icon=":material/play_arrow:")


def _lock() -> None:
    try:
        membership.store().set_lock(membership.code(), membership.teacher_key(), st.session_state["_class_lock"])
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)


def _joinable() -> None:
    try:
        membership.set_joinable(st.session_state["_class_open"])
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)


def _remove(seats: dict[str, list[str]]) -> None:
    """Remove every seat under the chosen nicknames (``seats``: nickname -> student ids, as drawn)."""
    chosen = st.session_state.get(PICK) or []
    ids = [sid for nick in chosen for sid in seats.get(nick, [])]
    st.session_state[PICK] = []
    if not ids:
        st.session_state["_class_error"] = _("Choose the nicknames to remove first.")
        return
    try:
        membership.remove(ids)
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)
        return
    st.session_state[DONE] = ngettext(
        "Removed {n} student: {names}. They cannot come back without typing the code again.",
        "Removed {n} students: {names}. They cannot come back without typing the code again.", len(ids)).format(
        n=len(ids), names=", ".join(chosen))


def _roster() -> None:
    """Who joined, and a way to remove some (a prank's seats share a nickname: removing it removes them all). The
    server reruns the page when someone joins or leaves (``teacher_watch``)."""
    for message, show in ((st.session_state.pop("_class_error", None), st.error),
                          (st.session_state.pop(DONE, None), st.success)):
        if message:
            show(literal(message), icon=":material/error:" if show is st.error else ":material/check_circle:")
    try:
        roster = membership.roster()
    except ClassroomError:   # the class ended meanwhile (another tab, 12 idle hours): the next run says so
        return
    seat.mine().roster_shown = roster
    seats: dict[str, list[str]] = {}
    for sid, nick in roster:
        seats.setdefault(nick, []).append(sid)
    n = sum(len(ids) for ids in seats.values())
    st.subheader(ngettext("{n} student joined", "{n} students joined", n).format(n=n), anchor=False)
    if seats:
        st.markdown(" · ".join(literal(nick) + (f" ×{len(ids)}" if len(ids) > 1 else "")
                               for nick, ids in seats.items()))
        with st.popover(_("Remove students"), icon=":material/person_remove:"):
            st.multiselect(_("Nicknames to remove"), list(seats), key=PICK, placeholder=_("Choose nicknames"),
                           format_func=lambda nick: ngettext("{nick} ({n} seat)", "{nick} ({n} seats)", len(seats[
                               nick])).format(nick=nick, n=len(seats[nick]))
                           if len(seats[nick]) > 1 else nick)
            st.caption(_("A removed student's page leaves the class within seconds. Close the room to new "
                         "students first if someone keeps joining."))
            st.button(_("Remove"), key="_class_remove", on_click=_remove, args=(seats,), type="primary",
                      icon=":material/person_remove:")


def _end() -> None:
    try:
        membership.end_class()
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)
        membership.leave()


def teacher() -> None:
    """The room's code, join link and QR code shown large; the teacher's own controls below."""
    room, key = membership.code(), membership.teacher_key()
    url = membership.join_url(room)
    _error()
    left, right = st.columns([3, 2], gap="large", vertical_alignment="center")
    with left:
        st.markdown(_("Students join with this code on the Classroom page, or by opening the link:"))
        st.title(pretty_code(room), anchor=False)
        st.markdown(f"### {literal(url)}")
    with right:
        st.image(qr_svg(url), width=320, caption=_("Scan to join"))
    info = membership.store().room(room)
    if info is None:
        st.rerun()
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="medium"):
        st.toggle(_("Lock the text"), value=info.locked, key="_class_lock", on_change=_lock,
                  help=_("Followers cannot edit the text while it is locked."))
        st.toggle(_("Open to new students"), value=info.joinable, key="_class_open", on_change=_joinable,
                  help=_("Close the room once your class is in: nobody else can join, those in it stay."))
        with st.popover(_("End the class"), icon=":material/stop_circle:"):
            st.markdown(_("Ending deletes the room, its view and every answer; students go back to exploring "
                          "alone. Nothing is kept: download the report first (below)."))
            st.button(_("End it now"), key="_class_end", on_click=_end, type="primary")
    if not info.joinable:
        st.caption(":material/lock: " + _("Closed to new students: only those already in the class can come back."))
    sentences_panel.teacher()
    if membership.projector():
        st.caption(_("Projector view: the teacher link and the nicknames are hidden."))
        return
    _roster()
    report_panel.teacher()
    with st.expander(_("Your teacher link: for you only, never on the projector"), icon=":material/key:"):
        st.markdown(_("Open it on another computer (or after restarting the browser) to drive this class again. "
                      "Anyone with this link can drive and end the class."))
        st.code(membership.teacher_url(room, key), language=None)


def student() -> None:
    room = membership.code()
    _error()
    st.success(_("You are in class {code}. When your teacher opens a page, yours follows; use **Explore on my own** "
                 "at the top to look around by yourself.").format(code=pretty_code(room)), icon=":material/groups:")
    # a callback, like the other class buttons: it runs before the page, so a rerun the server starts meanwhile
    # (a teacher's change reaching this student) cannot stop it half-way or drop the click
    st.button(_("Leave the class"), icon=":material/logout:", key="_class_leave", on_click=membership.leave)
    # each student's own (their sentence, its number, their answers) and the room's state, never the view's: drawn
    # by each session itself, also when a follower's Classroom page is a replay of another follower's
    replayed.live(sentences_panel.student)
    replayed.live(report_panel.student)
