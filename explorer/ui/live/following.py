"""Classroom live mode in the app: the teacher's view is published, the students in the room follow it.

The teacher's view is the page and its deep link (the URL parameters its widgets write, plus the heatmap
options); ``run_page`` publishes it after every page run in which it changed. The server reruns a student's
session when the room's version moves, and the teacher's when a vote comes in (the number, never the counts) or
the roster on screen changes
(``push``): no class page holds a timer that could cross the teacher's clicks.
Every run of a following student, whatever page its browser asked for, is the teacher's page with the teacher's
parameters (``navigation``, called by app.py in place of ``st.navigation``), as if the student had opened the
teacher's URL, but in the same session: no page load, no script. Who is in which room: ``membership``.
"""
from __future__ import annotations

import contextlib
import contextvars
from datetime import timedelta

import streamlit as st

from explorer.classroom import ClassroomError, NoSuchRoom, pretty_code
from explorer.ui import language
from explorer.ui import params as query
from explorer.ui.live import push, replayed
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.live.membership import (
    APPLIED,
    FOLLOW,
    LESSON_PLACE,
    LESSON_SEEN,
    LOCKED,
    NOTES,
    PAGE,
    PRIVATE,
    PROJECTOR,
    PUBLISHED,
    QUESTIONS,
    ROSTER_SHOWN,
    SEEN,
    SENTENCES_SHOWN,
    URL_ME,
    URL_ROOM,
    app_url,
    code,
    current_page,
    following,
    leave,
    leave_if_removed,
    note,
    projector,
    restore_from_url,
    store,
    student,
    teacher_key,
    text_locked,
)
from explorer.ui.text import literal
from explorer.words import i18n
from explorer.words.i18n import _, ngettext

RAN = "_class_ran"   # the page this session ran last (its st.Page's script hash)
ADDRESS = "_class_address"   # the URL parameters at the end of that run
WANTED = "_class_wanted"   # a follower: the teacher's parameters it applied last
VIEW = "_class_view"   # a follower: the room's view this run shows (what ``run_page`` replays)
FIXES, MOST_FIXES = "_class_fixes", 3   # a follower: (version, times its view was applied again for straying)
# never shared with the class: who is where (membership.PRIVATE) and the language each one chose (a follower keeps
# its own; the teacher's ``lang`` must not reach them)
PERSONAL = (*PRIVATE, language.KEY)

# ---------------------------------------------------------------------------------------------- following

def _address(view: dict) -> dict[str, str]:
    """The URL parameters a follower's page shows for the teacher's ``view``: the teacher's, and its own room,
    student id and language (so a reload keeps the language this student chose, whatever the teacher's)."""
    address = {**_shared(view.get("params") or {}), URL_ROOM: code(), URL_ME: student()}
    mine = st.session_state.get(language.KEY)
    if mine and (mine != i18n.SOURCE or language.KEY in st.query_params):   # English without asking: no lang=
        address[language.KEY] = mine
    return address


def _apply(view: dict) -> None:
    """Make this run show the teacher's deep link, as a freshly opened URL would: the widgets it names read it."""
    for name in _shared(view.get("params") or {}):
        st.session_state.pop(name, None)   # from_url then reads the URL, as on a first run
        st.session_state.pop(f"_kept_{name}", None)
    for name, value in (view.get("opts") or {}).items():
        if str(name).startswith("opt_"):
            st.session_state[str(name)] = bool(value)


def _follow() -> str | None:
    """A following student: take the room's view (version and view in one read), apply it when its version is
    new -> the teacher's page (``pages/heatmaps.py``), or None. The version applied is the one the poll compares
    against afterwards, so a change made while this run was under way always brings one more run."""
    if not following():
        return None
    try:
        version, view = store().view(code())
    except NoSuchRoom:
        return None   # on_page says that the class has ended
    if st.session_state.get(APPLIED) != version:
        if view.get("page"):
            _apply(view)
        st.session_state[APPLIED] = version
        st.session_state[WANTED] = _shared(view.get("params") or {})
    st.session_state[LESSON_SEEN] = view.get("lesson")   # step n of N and its question (lesson_bar draws them)
    st.session_state[VIEW] = view
    if view.get("page"):
        # every run, not only a new version's, and always sent: a run can start from another page's address (the
        # browser's last message, or Streamlit's record of an older run when the server starts the rerun), and
        # the browser must end on the teacher's whatever this session believes it holds
        query.send(_address(view))
    st.session_state[SEEN] = version
    return view.get("page") or None


def _page_named(pages: dict, path: str):
    """The st.Page of ``pages`` (app.py's sections) whose file is ``path`` relative to app.py, or None."""
    root = internals.resolved(internals.main_script_path()).parent
    for page in (p for section in pages.values() for p in section):
        file = internals.page_file(page)
        if file is not None and internals.resolved(file) == internals.resolved(root / path):
            return page
    return None


def navigation(pages: dict, position: str):
    """``st.navigation(pages)``, except that a following student's run is the teacher's page.

    The page is chosen before ``st.navigation`` resolves the URL's page, so Streamlit itself runs the teacher's
    page in this session and tells the browser so (address bar and highlighted page follow): no browser page load
    and no second run. Whatever the student's browser asked for, and however fast the teacher moved, this run
    shows the room's current view; a later change is caught by the server's watch (``push``) or by
    ``run_page``'s re-check."""
    in_run = internals.script_context() is not None
    query.mend()   # first: an address message that a rerun cut off is sent again
    restore_from_url()
    page = _follow()
    target = _page_named(pages, page) if page and in_run else None
    if target is not None:
        asked = internals.intended_page()
        if asked and asked != internals.page_hash(target) and st.session_state.get(RAN, asked) != asked:
            note(_("You are following the teacher, so you stay on the teacher's page. To open other pages, press "
                   "“Explore on my own”."))
        internals.run_instead(target)
    # expanded: with "Words on this page" below it, Streamlit would otherwise fold all but ten pages away
    chosen = st.navigation(pages, position=position, expanded=True)
    st.session_state[RAN] = internals.page_hash(chosen)
    return chosen


def watch(question: str, poll) -> None:
    """The teacher's page shows ``question``'s poll (an ``explorer.classroom.Progress``: round, state and how many
    voted, never the counts): the server reruns the page when it moves, or when a student joins or leaves ("n of m
    answered"; ``_finished`` hands it to ``push``). Entries are only ever replaced, never cleared at the start
    of a run: a run cut short before its quiz drew would otherwise leave nothing to watch."""
    st.session_state.setdefault(QUESTIONS, {})[question] = poll


def _teacher_sees(what: tuple) -> tuple | None:
    """``what`` = (room, key, questions, roster?, sentences?) -> each question's poll and the number of students
    now and, when the roster is on screen, who has joined, and when the class's sentences are, each sentence
    (``explorer.classroom.sentences``); None once the class has ended."""
    room, key, questions, roster, sentences = what
    try:
        polls = tuple(store().progress(room, q) for q in questions)
        info = store().room(room) if questions or sentences else None
        return ((polls, info and info.students), (store().roster(room, key) if roster else None),
                (store().sentences(room, key) if sentences else None))
    except ClassroomError:
        return None


def _watch_teacher(session: str) -> None:
    """A teacher's run has drawn its page: the server reruns it when an answer comes in, someone joins or leaves
    the roster on screen, a sentence comes in or changes, or the class ends (``push``; no timer in the browser)."""
    shown = st.session_state.get(QUESTIONS, {})
    drawn = st.session_state.pop(ROSTER_SHOWN, None)   # this run's, or one a stopped run on the page left
    written = st.session_state.pop(SENTENCES_SHOWN, None)
    roster = drawn if current_page() == PAGE else None
    sentences = written if current_page() == PAGE else None
    if not shown and roster is None and sentences is None:
        push.forget(session)
        return
    questions = tuple(shown)
    what = (code(), teacher_key(), questions, roster is not None, sentences is not None)
    info = store().room(code()) if questions or sentences is not None else None
    push.watch(session, what, ((tuple(shown[q] for q in questions), info and info.students), roster, sentences),
               _teacher_sees)


@st.fragment(run_every=timedelta(hours=12))
def _back_after_a_restart() -> None:
    """A class's page: one empty placeholder, and a timer that (12 hours being longer than a class) never fires.
    It is there for Streamlit's frontend, which runs the page again when its connection comes back only if the
    page holds a timed fragment: after a server restart mid-class the page then rejoins the class and the server's
    watch (``push``) without a reload."""
    st.empty()


def _shared(params: dict) -> dict:
    return {str(k): str(v) for k, v in params.items() if k not in PERSONAL}


def _strayed(version: int) -> bool:
    """The page last drawn for this follower shows another value for one of the teacher's parameters than the
    teacher's view it applied (parameters the page adds by itself do not count). A browser can send widget values
    it held before a run changed them, and that run then draws those; so while following, the teacher's view is
    applied again, at most a few times a version (never a loop)."""
    wanted, shown = st.session_state.get(WANTED), st.session_state.get(ADDRESS)
    if wanted is None or shown is None or all(_shared(shown).get(k) == v for k, v in wanted.items()):
        return False
    fixes = st.session_state.get(FIXES, (version, 0))
    fixes = fixes if fixes[0] == version else (version, 0)
    st.session_state[FIXES] = (version, fixes[1] + 1)
    return fixes[1] < MOST_FIXES


def on_page() -> None:
    """Every page calls this first (through ``widgets.use_app_navigation``): the room's poll, notes and banner.
    Rejoining from the URL and following the teacher happened before the page was chosen (``navigation``). All of
    it is this session's own: never in a recorded page (``replayed``)."""
    if _BANNER_DRAWN.get():   # a follower's run drew it before its page (``run_page``)
        return
    with internals.unrecorded():
        _on_page()


_BANNER_DRAWN: contextvars.ContextVar[bool] = contextvars.ContextVar("explorer_banner_drawn", default=False)


def _banner_first() -> bool:
    """A follower's run of the teacher's page: the banner and poll before the page (its text lock read afresh, for
    the replay's key), not again when the page calls ``on_page`` -> whether the session still follows."""
    on_page()
    _BANNER_DRAWN.set(True)
    return following()


def _on_page() -> None:
    room = code()
    info = store().room(room) if room else None
    if room and info is None:
        leave()
        note(_("The class has ended (or was idle for 12 hours); you are exploring on your own."))
    info = leave_if_removed(info)   # the teacher removed this student: leave with a note
    if info is not None:
        _back_after_a_restart()
    for message in st.session_state.pop(NOTES, []):
        st.info(literal(message), icon=":material/school:")
    if info is None:
        return
    if not following():   # a follower's SEEN is the version it applied (navigation)
        st.session_state[SEEN] = info.version
    session = internals.session_id()
    if session is not None and not teacher_key() and _served(session):   # rerun by the server as the teacher moves
        push.watch(session, room, st.session_state.get(SEEN), _version_or_none)
    st.session_state[LOCKED] = info.locked
    if student():
        query.put_all({URL_ROOM: room, URL_ME: student()})
    _banner(room, info.students)


def _served(session: str) -> bool:
    """A session of a real server (AppTest's runtime is a mock: nothing there for the server to rerun)."""
    return internals.app_session(session) is not None


def _version_or_none(room: str) -> int | None:
    try:
        return store().version(room)
    except NoSuchRoom:
        return None


def _explore() -> None:
    st.session_state[FOLLOW] = False


def _catch_up() -> None:
    st.session_state[FOLLOW] = True
    st.session_state.pop(APPLIED, None)


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
        elif following():
            st.markdown(":material/cast_for_education: " + (
                _("**Following class {code}** · the text is locked") if text_locked()
                else _("**Following class {code}**")).format(code=shown))
            st.button(_("Explore on my own"), icon=":material/explore:", on_click=_explore, key="_class_explore")
        else:
            st.markdown(":material/explore: " + _("**Class {code}**: you are exploring on your own").format(
                code=shown))
            st.button(_("Catch up with the teacher"), icon=":material/sync:", on_click=_catch_up,
                      key="_class_catch_up", type="primary")


def publish() -> None:
    """Teacher: share this page and its deep link with the class, when they differ from what was shared last."""
    room, key, page = code(), teacher_key(), current_page()
    if not key or not page or page == PAGE:
        return
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in PERSONAL}
    opts = {k: v for k, v in st.session_state.items() if isinstance(k, str) and k.startswith("opt_")
            and isinstance(v, bool)}
    view = {"page": page, "params": params, "opts": opts}
    if st.session_state.get(LESSON_PLACE):
        view["lesson"] = st.session_state[LESSON_PLACE]   # the lesson's step lives in the store with the page
    if st.session_state.get(PUBLISHED) == view:
        return
    # Forgotten until the store has the new view: a newer run can stop this one at any read or write of the
    # session's state, and had it stopped between the store's write and the record below, PUBLISHED would still
    # name the view before, so a return to that view would not be shared (the class stayed on the page between).
    st.session_state.pop(PUBLISHED, None)
    try:
        store().set_view(room, key, view)
    except ClassroomError as err:
        st.warning(literal(err), icon=":material/school:")
        return
    st.session_state[PUBLISHED] = view
    push.poke()   # this server's followers of the room are rerun at once


def _moved_meanwhile() -> None:
    """A follower whose room's view changed while this run drew the page runs again at once; so does one whose
    page came out with other parameters than the teacher's (``_strayed``)."""
    if following():
        with contextlib.suppress(NoSuchRoom):
            version = store().version(code())
            if version != st.session_state.get(SEEN):
                st.rerun()
            if _strayed(version):
                st.session_state.pop(APPLIED, None)   # the teacher's view, applied afresh
                st.rerun()


def _followed_view(page) -> dict | None:
    """The room's view when this run is a follower's run of the teacher's page (``page`` app.py's st.Page, not a
    folded step), else None."""
    view = st.session_state.get(VIEW) if following() else None
    if not isinstance(view, dict) or internals.page_file(page) is None or view.get("page") != current_page():
        return None
    return view


def run_page(page) -> None:
    """app.py's ``page.run()``, then publish the teacher's view (also after st.stop; not after a rerun), or, for a
    follower, check that the teacher has not moved on meanwhile. A follower's run of the teacher's page is a
    replay of what the page drew for that view (``replayed``): the page itself runs in one follower a view.

    After the page's own ``st.stop()`` (a question not yet answered, as the Masks lab does) the view is still
    shared: Streamlit would raise the stop again at the bookkeeping's first read of the session state, so it runs
    with stops paused. A run that a newer one stopped (the same exception) publishes nothing: its view is stale,
    and published from this thread it could land after the newer run's."""
    view = _followed_view(page)
    try:
        if view is not None:
            replayed.follow(view, page, _banner_first, PERSONAL)
        else:
            page.run()
    except internals.StopException:
        if internals.runs_here():   # the page's own st.stop(), not a newer run replacing this one
            with internals.stops_paused():
                _finished(stopped=True)
        raise
    finally:
        _BANNER_DRAWN.set(False)
    _finished()


def _finished(stopped: bool = False) -> None:
    """The end of a page's run: remember its address; a teacher shares the view. A follower whose room moved on
    meanwhile (or whose page strayed from the teacher's) runs again at once; after st.stop() that is left to the
    server's watch (``push``), which reruns it within a fraction of a second."""
    st.session_state[ADDRESS] = st.query_params.to_dict()   # what the browser's address now holds
    session = internals.session_id()
    if code() and teacher_key() and session is not None and _served(session):
        _watch_teacher(session)
    publish()
    if not stopped:
        _moved_meanwhile()


def nav_position() -> str:
    return "top" if projector() else "sidebar"


FONT_SCALE = 1.6


def figure_scale() -> float:
    """How much larger figure text is drawn (the projector view)."""
    return FONT_SCALE if projector() else 1.0
