"""A session's place in a class, as one object in its session state (``mine()``), read and written through it.

Who the session is in which room (``membership``), what a follower took from the room's view and showed
(``following``), what a teacher's run drew that the server watches (``teacher_watch``), and the lesson's place on
either side (``lesson_bar``, ``follower_bar``): one typed ``ClassSeat`` under one key, not a key each.

Kept as keys of their own, by design:
- ``membership.PROJECTOR`` (``_class_projector``) and the Classroom page's and banner's widget keys (``_class_typed``,
  ``_class_lock``, ``_class_explore``, ...): Streamlit owns a widget's value under its key (tests set them so too).
- ``opt_*`` (the heatmap's options, checkboxes the teacher's view publishes) and ``_kept_*`` (``widgets.from_url``'s
  kept page parameters, which ``replayed`` reads and takes over): page parameters, not the class's.
- ``language.KEY``: the language module's own, for every session in or out of a class.
- ``lesson_bar``'s own keys (the running lesson, its step and clocks): a lesson runs without a class too.

Nothing here enters a recorded page (a recording holds only what a page drew), and of it only ``lesson_place``
enters the room's view, by design (the teacher's step, shared); the rest of the view is the teacher's address
less ``following.PERSONAL`` (``membership.PRIVATE`` and the language) and the ``opt_*`` keys.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import streamlit as st

from explorer.classroom import TeacherView
from explorer.ui.live import streamlit_internals as internals

SEAT = "_class_seat"   # the key of this session's ClassSeat


@dataclass
class ClassSeat:
    """One session's place in a class. ``enter`` and ``leave`` forget who it is, whether it follows, the text lock
    and the versions it applied, saw and published; the rest is read only while in a class or outlives one (the
    join guard's count, notes still to show, the last run's page and address)."""

    # who, where (membership)
    room: str | None = None
    """The room's code (``K7M2QX``), or None outside a class."""
    key: str | None = None
    """The teacher key: this session teaches ``room`` (never kept in the URL)."""
    me: str | None = None
    """This student's random id in ``room`` (also in the URL as ``me=``, so a reload rejoins as the same student)."""
    follow: bool = True
    """A student follows the teacher (False after "Explore on my own", True again after "Catch up")."""
    locked: bool = False
    """The teacher locked the text (read from the room on each run): a follower's text boxes are read-only."""
    wrong: tuple[int, float] = (0, 0.0)
    """The join guard: wrong codes typed in this session, and the time before which the next try waits."""
    notes: list[str] = field(default_factory=list)
    """Sentences for the next banner ("The class has ended ..."), shown once."""

    # a follower (following)
    applied: int | None = None
    """The room's version whose view this follower applied last (None: apply the next one afresh)."""
    seen: int | None = None
    """The room's version this session's last run showed (the server reruns it when the room's moves on)."""
    wanted: dict[str, str] | None = None
    """The teacher's shared parameters this follower applied last (what ``following`` checks a page against)."""
    view: TeacherView | None = None
    """The room's view this run shows: page, parameters, options, lesson (what ``run_page`` replays)."""
    fixes: tuple[int, int] | None = None
    """(version, times the view was applied again because the page strayed from it): at most a few a version."""
    lesson_seen: dict | None = None
    """A follower: the lesson's place read from the room's view (step n of N and its question; ``follower_bar``)."""

    # any session's last run (following)
    ran: str | None = None
    """The page this session ran last (its st.Page's script hash)."""
    address: dict[str, str] | None = None
    """The URL parameters at the end of that run."""

    # a teacher (following, teacher_watch, lesson_bar)
    published: TeacherView | None = None
    """The view this teacher shared last (None while a new one is being written: shared again next run)."""
    lesson_place: dict | None = None
    """A running lesson's place (``explorer.lessons.run.place``), shared with the view."""
    questions: dict = field(default_factory=dict)
    """Each class question on the teacher's page -> its poll (round, state, how many voted; never the counts)."""
    roster_shown: list | None = None
    """The roster the Classroom page drew in this run (the server watches it), taken at the run's end."""
    sentences_shown: list | None = None
    """The class's sentences the Classroom page drew in this run (watched too), taken at the run's end."""

    def enter(self, room: str, *, key: str | None = None, me: str | None = None) -> None:
        """Take a seat in ``room`` as its teacher (``key``) or a student (``me``), following."""
        self._forget_place()
        self.room, self.key, self.me = room, key, me

    def leave(self) -> None:
        """Out of the class: who and what was taken from the room is forgotten."""
        self._forget_place()
        self.room = None

    def _forget_place(self) -> None:
        self.key = self.me = self.applied = self.seen = self.published = None
        self.follow, self.locked = True, False


_THIS_RUN = threading.local()   # a script thread's run context and the seat read in it


def mine() -> ClassSeat:
    """This session's seat (a blank one, outside any class, on first use). Read from the session state once a run
    and then kept with the run's context: a follower's run asks for it dozens of times, and each session-state read
    costs Streamlit far more than this check (7 % of a 60-student class's server CPU went there)."""
    run = internals.script_context()
    kept = getattr(_THIS_RUN, "seat", None)
    if run is not None and kept is not None and kept[0] is run:
        return kept[1]
    seat = st.session_state.get(SEAT)
    if seat is None:
        seat = st.session_state[SEAT] = ClassSeat()
    if run is not None:
        _THIS_RUN.seat = (run, seat)
    return seat
