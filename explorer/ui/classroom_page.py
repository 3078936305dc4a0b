"""The Classroom page's panels: start a class, join one, and the teacher's and the student's views of the room."""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError, pretty_code, qr_svg
from explorer.ui import class_room
from explorer.ui.text import literal

TYPED, NICK = "_class_typed", "_class_nick"


def _start() -> None:
    try:
        class_room.start_class()
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)


def _join() -> None:
    try:
        class_room.join(st.session_state.get(TYPED, ""), st.session_state.get(NICK, ""))
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)
        return
    if class_room.URL_JOIN in st.query_params:
        del st.query_params[class_room.URL_JOIN]


def _error() -> None:
    error = st.session_state.pop("_class_error", None)
    if error:
        st.error(literal(error), icon=":material/error:")


def outside() -> None:
    """Not in a room: join one (the code from a join link is filled in), or start one as the teacher."""
    if TYPED not in st.session_state and class_room.URL_JOIN in st.query_params:
        st.session_state[TYPED] = st.query_params[class_room.URL_JOIN][:40]
    _error()
    left, right = st.columns(2, gap="large")
    with left, st.container(border=True):
        st.subheader(":material/login: Join a class")
        st.text_input("Room code", key=TYPED, max_chars=40, placeholder="K7M-2QX")
        st.text_input("Nickname (optional; only your teacher sees it)", key=NICK, max_chars=60)
        st.button("Join", key="_class_join", on_click=_join, type="primary", icon=":material/login:")
    with right, st.container(border=True):
        st.subheader(":material/school: Teach a class")
        st.markdown("Start a class, show its code or QR code on the projector, and the students' pages follow "
                    "yours: the page, the model, the text, the layer and the head. Questions in the labs become "
                    "class questions whose answers you reveal together.")
        st.button("Start a class", key="_class_start", on_click=_start, icon=":material/play_arrow:")


def _lock() -> None:
    try:
        class_room.store().set_lock(class_room.code(), class_room.teacher_key(), st.session_state["_class_lock"])
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)


def _end() -> None:
    try:
        class_room.end_class()
    except ClassroomError as err:
        st.session_state["_class_error"] = str(err)
        class_room.leave()


def teacher() -> None:
    """The room's code, join link and QR code shown large; the teacher's own controls below."""
    room, key = class_room.code(), class_room.teacher_key()
    url = class_room.join_url(room)
    _error()
    left, right = st.columns([3, 2], gap="large", vertical_alignment="center")
    with left:
        st.markdown("Students join with this code on the Classroom page, or by opening the link:")
        st.title(pretty_code(room), anchor=False)
        st.markdown(f"### {literal(url)}")
    with right:
        st.image(qr_svg(url), width=320, caption="Scan to join")
    info = class_room.store().room(room)
    if info is None:
        st.rerun()
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="medium"):
        st.toggle("Lock the text", value=info.locked, key="_class_lock", on_change=_lock,
                  help="Followers cannot edit the text while it is locked.")
        with st.popover("End the class", icon=":material/stop_circle:"):
            st.markdown("Ending deletes the room, its view and its answers; students go back to exploring alone.")
            st.button("End it now", key="_class_end", on_click=_end, type="primary")
    if class_room.projector():
        st.caption("Projector view: the teacher link and the nicknames are hidden.")
        return
    names = class_room.store().nicknames(room, key)
    st.subheader(f"{len(names)} {'student' if len(names) == 1 else 'students'} joined")
    if names:
        st.markdown(" · ".join(literal(n) for n in names))
    with st.expander("Your teacher link: for you only, never on the projector", icon=":material/key:"):
        st.markdown("Open it on another computer (or after restarting the browser) to drive this class again. "
                    "Anyone with this link can drive and end the class.")
        st.code(class_room.teacher_url(room, key), language=None)


def student() -> None:
    room = class_room.code()
    _error()
    st.success(f"You are in class {pretty_code(room)}. When your teacher opens a page, yours follows; "
               "use **Explore on my own** at the top to look around by yourself.", icon=":material/groups:")
    if st.button("Leave the class", icon=":material/logout:", key="_class_leave"):
        class_room.leave()
        st.rerun()
