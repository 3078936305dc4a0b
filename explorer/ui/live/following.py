"""Classroom live mode in the app: the teacher's view is published, the students in the room follow it.

The teacher's view is the page and its deep link (the URL parameters its widgets write, plus the heatmap
options); ``run_page`` publishes it after every page run in which it changed. The server reruns a student's
session when the room's version moves, and the teacher's when a vote comes in (the number, never the counts) or
the roster on screen changes
(``push``): no class page holds a timer that could cross the teacher's clicks.
Every run of a following student, whatever page its browser asked for, is the teacher's page with the teacher's
parameters (``navigation``, called by app.py in place of ``st.navigation``), as if the student had opened the
teacher's URL, but in the same session: no page load, no script. Who is in which room: ``membership``; what
each session holds of it: ``seat``; the room's banner above each page: ``class_banner``; what the server watches
on a teacher's page: ``teacher_watch``.
"""
from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import streamlit as st

from explorer.classroom import ClassroomError, NoSuchRoom, TeacherView
from explorer.sitemap.table import PAGES
from explorer.ui import language
from explorer.ui import params as query
from explorer.ui.live import class_banner, push, replayed, teacher_watch
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.live.membership import (
    PAGE,
    PRIVATE,
    URL_ME,
    URL_ROOM,
    code,
    current_page,
    is_following,
    note,
    projector,
    restore_from_url,
    store,
    student,
    teacher_key,
)
from explorer.ui.live.seat import mine
from explorer.ui.text import literal
from explorer.words import i18n
from explorer.words.i18n import _

MOST_FIXES = 3   # a follower: times a version's view is applied again for straying
# never shared with the class: who is where (membership.PRIVATE) and the language each one chose (a follower keeps
# its own; the teacher's ``lang`` must not reach them)
PERSONAL = (*PRIVATE, language.KEY)

# ---------------------------------------------------------------------------------------------- following

def _follower_address(view: TeacherView) -> dict[str, str]:
    """The URL parameters a follower's page shows for the teacher's ``view``: the teacher's, and its own room,
    student id and language (so a reload keeps the language this student chose, whatever the teacher's)."""
    address = {**_shared(view.params), URL_ROOM: code(), URL_ME: student()}
    chosen = st.session_state.get(language.KEY)
    if chosen and (chosen != i18n.SOURCE or language.KEY in st.query_params):   # English without asking: no lang=
        address[language.KEY] = chosen
    return address


def _apply(view: TeacherView) -> None:
    """Make this run show the teacher's deep link, as a freshly opened URL would: the widgets it names read it, and
    the page's other parameters (its row's ``params``) fall back to their defaults, not to an earlier view's value."""
    named = _shared(view.params)
    row = PAGES.get(view.page)
    for name in [*named, *(n for n in ((row.params or {}) if row else {}) if n not in named)]:
        st.session_state.pop(name, None)   # from_url then reads the URL, as on a first run
        st.session_state.pop(query.kept(name), None)
    for name, value in view.opts.items():
        if name.startswith("opt_"):
            st.session_state[name] = value


def _follow() -> str | None:
    """A following student: take the room's view (version and view in one read), apply it when its version is
    new -> the teacher's page (``pages/heatmaps.py``), or None. The version applied is the one the poll compares
    against afterwards, so a change made while this run was under way always brings one more run."""
    if not is_following():
        return None
    try:
        version, stored = store().view(code())
    except NoSuchRoom:
        return None   # on_page says that the class has ended
    seat, view = mine(), TeacherView.from_json(stored)
    if seat.applied != version:
        if view.page:
            _apply(view)
        seat.applied = version
        seat.wanted = _shared(view.params)
    seat.lesson_seen = view.lesson   # step n of N and its question (lesson_bar draws them)
    seat.view = view
    if view.page:
        # every run, not only a new version's, and always sent: a run can start from another page's address (the
        # browser's last message, or Streamlit's record of an older run when the server starts the rerun), and
        # the browser must end on the teacher's whatever this session believes it holds
        query.send(_follower_address(view))
    seat.seen = version
    return view.page


@functools.lru_cache(maxsize=256)
def _resolved(path: str | Path) -> Path:
    """``Path(path).resolve()``, remembered: the app's files do not move while it runs, and every follower's run
    asks about the same few (a realpath walks the disk each time: it was a fifth of a follower's run)."""
    return Path(path).resolve()


def _page_named(pages: dict, path: str):
    """The st.Page of ``pages`` (app.py's sections) whose file is ``path`` relative to app.py, or None."""
    root = _resolved(internals.main_script_path()).parent
    for page in (p for section in pages.values() for p in section):
        file = internals.page_file(page)
        if file is not None and _resolved(file) == _resolved(root / path):
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
        if asked and asked != internals.page_hash(target) and mine().ran not in (None, asked):
            note(_("You are following the teacher, so you stay on the teacher's page. To open other pages, press "
                   "“Explore on my own”."))
        internals.run_instead(target)
    # expanded: with "Words on this page" below it, Streamlit would otherwise fold all but ten pages away
    chosen = st.navigation(pages, position=position, expanded=True)
    mine().ran = internals.page_hash(chosen)
    return chosen


def _shared(params: dict) -> dict:
    return {str(k): str(v) for k, v in params.items() if k not in PERSONAL}


def _strayed(version: int) -> bool:
    """The page last drawn for this follower shows another value for one of the teacher's parameters than the
    teacher's view it applied (parameters the page adds by itself do not count). A browser can send widget values
    it held before a run changed them, and that run then draws those; so while following, the teacher's view is
    applied again, at most a few times a version (never a loop)."""
    seat = mine()
    wanted, shown = seat.wanted, seat.address
    if wanted is None or shown is None or all(_shared(shown).get(k) == v for k, v in wanted.items()):
        return False
    fixes = seat.fixes or (version, 0)
    fixes = fixes if fixes[0] == version else (version, 0)
    seat.fixes = (version, fixes[1] + 1)
    return fixes[1] < MOST_FIXES


def publish() -> None:
    """Teacher: share this page and its deep link with the class, when they differ from what was shared last."""
    room, key, page = code(), teacher_key(), current_page()
    if not key or not page or page == PAGE:
        return
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in PERSONAL}
    opts = {k: v for k, v in st.session_state.items() if isinstance(k, str) and k.startswith("opt_")
            and isinstance(v, bool)}
    seat = mine()   # the lesson's step lives in the store with the page
    view = TeacherView(page, params, opts, seat.lesson_place or None)
    if seat.published == view:
        return
    # Forgotten until the store has the new view: a newer run can stop this one at any read or write of the
    # session's state, and had it stopped between the store's write and the record below, ``published`` would
    # still name the view before, so a return to that view would not be shared (the class stayed on the page between).
    seat.published = None
    try:
        store().set_view(room, key, view.to_json())
    except ClassroomError as err:
        st.warning(literal(err), icon=":material/school:")
        return
    seat.published = view
    push.poke()   # this server's followers of the room are rerun at once


def _moved_meanwhile() -> None:
    """A follower whose room's view changed while this run drew the page runs again at once; so does one whose
    page came out with other parameters than the teacher's (``_strayed``)."""
    if is_following():
        with contextlib.suppress(NoSuchRoom):
            version = store().version(code())
            if version != mine().seen:
                st.rerun()
            if _strayed(version):
                mine().applied = None   # the teacher's view, applied afresh
                st.rerun()


def _followed_view(page) -> TeacherView | None:
    """The room's view when this run is a follower's run of the teacher's page (``page`` app.py's st.Page, not a
    folded step), else None."""
    view = mine().view if is_following() else None
    if not isinstance(view, TeacherView) or internals.page_file(page) is None or view.page != current_page():
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
            replayed.follow(view, page, class_banner.before_page, PERSONAL)
        else:
            page.run()
    except internals.StopException:
        if internals.runs_here():   # the page's own st.stop(), not a newer run replacing this one
            with internals.stops_paused():
                _finished(stopped=True)
        raise
    finally:
        class_banner.page_done()
    _finished()


def _finished(stopped: bool = False) -> None:
    """The end of a page's run: remember its address; a teacher shares the view. A follower whose room moved on
    meanwhile (or whose page strayed from the teacher's) runs again at once; after st.stop() that is left to the
    server's watch (``push``), which reruns it within a fraction of a second."""
    mine().address = st.query_params.to_dict()   # what the browser's address now holds
    teacher_watch.after_run(internals.session_id())
    publish()
    if not stopped:
        _moved_meanwhile()


def nav_position() -> str:
    """Where app.py's navigation goes: on top in the teacher's projector view, else in the sidebar."""
    return "top" if projector() else "sidebar"
