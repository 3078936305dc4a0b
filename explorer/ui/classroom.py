"""Classroom live mode in the app: the teacher's view is published, the students in the room follow it.

The teacher's view is the page and its deep link (the URL parameters its widgets write, plus the heatmap
options); ``run_page`` publishes it after every page run in which it changed. Followers poll the room's version
once a second in a fragment and rerun the app only when it moved; the rerun then opens the teacher's page with the
teacher's parameters, as if the student had opened the teacher's URL. Who is in which room: ``class_room``.
"""
from __future__ import annotations

import contextlib
import json
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from explorer.classroom import ClassroomError, NoSuchRoom, pretty_code
from explorer.ui.class_room import (
    APPLIED,
    FOLLOW,
    LOCKED,
    NOTES,
    PAGE,
    POLL_S,
    PRIVATE,
    PROJECTOR,
    PUBLISHED,
    QUESTIONS,
    SEEN,
    URL_ME,
    URL_ROOM,
    app_url,
    code,
    current_page,
    following,
    leave,
    leave_if_removed,
    note,
    page_address,
    projector,
    restore_from_url,
    store,
    student,
    teacher_key,
    text_locked,
)
from explorer.ui.text import literal

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


_GO = """<script>
(() => {{
  const here = {here}, there = {there};
  let base = window.location.pathname.replace(/\\/+$/, "");
  if (here && base.endsWith("/" + here)) base = base.slice(0, -here.length - 1);
  window.location.replace(base + "/" + there + {query});
}})();
</script>"""


def _switch(version: int, view: dict) -> None:
    """Open the teacher's page with the teacher's parameters, by loading its address in the browser (this run
    stops). A full page load, not ``st.switch_page``: Streamlit 1.67's frontend sometimes left a page switched by a
    poll's rerun blank ("Bad delta path index"). The room and student id travel in the address, so the new session
    rejoins as the same student and goes on following."""
    page = _teacher_page(view)
    there = page_address(page) if page else None
    if there is None or st.session_state.get("_class_switched") == (version, page):
        return
    st.session_state["_class_switched"] = (version, page)
    params = {str(k): str(v) for k, v in (view.get("params") or {}).items() if k not in PRIVATE}
    params = {**params, URL_ROOM: code(), URL_ME: student()}
    query = "?" + urlencode(params)
    st.caption(":material/cast_for_education: Following the teacher to the next page…")
    st.page_link(page, label="Open the teacher's page", icon=":material/arrow_forward:", query_params=params)
    st.html(_GO.format(here=_js(page_address(current_page() or "") or ""), there=_js(there), query=_js(query)),
            unsafe_allow_javascript=True)
    st.stop()


def _js(value: str) -> str:
    """A JavaScript string literal that cannot end the script element, whatever ``value`` holds."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


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
    """The teacher's page shows ``counts`` for ``question``: the poll reruns the page when they change. Entries are
    only ever replaced, never cleared at the start of a run: a run cut short before its quiz drew would otherwise
    leave nothing to watch, and the chart would stop refreshing."""
    st.session_state.setdefault(QUESTIONS, {})[question] = counts


def _answers_moved(room: str) -> bool:
    shown = st.session_state.get(QUESTIONS, {})
    return any(store().counts(room, q) != counts for q, counts in shown.items())


@st.fragment(run_every=POLL_S)
def _poll() -> None:
    """Once a second: one version lookup (teacher: the shown questions' counts); the whole app reruns only when
    something changed. Drawn first on the page: a late fragment message then never lands past the end of a page
    that was just replaced (Streamlit's frontend rejects that: "Bad delta path index"). It always draws one empty
    placeholder: a fragment that draws nothing can leave a multipage app blank after a page change."""
    st.empty()
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
    restore_from_url()
    room = code()
    info = store().room(room) if room else None
    if room and info is None:
        leave()
        note("The class has ended (or was idle for 12 hours); you are exploring on your own.")
    info = leave_if_removed(info)   # the teacher removed this student: leave with a note
    if info is not None and student() and following() and st.session_state.get(APPLIED) != info.version:
        with contextlib.suppress(NoSuchRoom):
            _switch(*store().view(room))   # before anything is drawn: the page is left at once
    if info is not None:
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
