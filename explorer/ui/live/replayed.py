"""A following student's run is a replay of what the page drew for the teacher's view, not a run of the page.

Thirty students follow one teacher: each used to run the teacher's page in its own session (its widgets, its
validation, its model look-ups), 6 to 133 ms of one interpreter a student and a step, queued behind each other.
Now the first follower of a view (per server and language) runs the page as before, and everything the page drew
in its run is recorded (``page_recorder.recording_page``: the figures, sentences, the folded controls and the
sidebar's words, widgets included as the elements they drew); every other follower of that view gets the recording
replayed where the page would have drawn, after its own banner and poll (``class_banner.on_page``): no page script,
no model, no widget of the page's own. Hotwire's Turbo Streams (render one update, send it to every subscriber)
is the pattern; Streamlit's cache replay is the machinery.

What a session draws for itself inside a page is a live part (``live``): the class question and its vote widgets
(``quiz``), a download button (its file is the session's own). A recording names each live part where it was drawn,
and each replaying session draws it there, in its own session: nothing private (a vote, a nickname, a typed text,
the teacher's notes or private link) enters a recording. A recording is made only by a follower (never the
teacher: its notes and link are drawn outside the page in any case), and it is kept only when that follower's
page ended on exactly the teacher's view (the address's shared parameters and the checkbox options the teacher
published): a follower that had typed its own text or set its own controls has its page drawn for itself alone.

A live part's ``state`` (the class question: revealed or not) is what the page drew after it depends on: it is
part of the recording's key, read afresh before each replay (a reveal is a new recording, once).
Recordings live in the render store (``drawn_once.STORE``: bytes-bounded, whole views evicted, oldest first); a
view asked for by many followers at once is drawn by one of them while the others wait, also after an eviction
(``ByteLRU.get_or_compute``), so a follower whose language has no recording yet waits for one drawing in it.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from explorer.classroom import TeacherView
from explorer.serving import regions
from explorer.ui import drawn_once, params
from explorer.ui.live import page_recorder, page_replay
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.live.membership import PRIVATE, text_locked
from explorer.words import i18n

MOST_VIEWS = 4096   # views whose live parts' states are remembered (a few bytes each)
# a view's key -> (state, args) of its latest recording's parts: a memo of the memos region, MOST_VIEWS at most
_STATES = regions.memo(f"{__name__}._STATES", 1 << 20, max_entries=MOST_VIEWS)
_LOCK = threading.Lock()
COUNTS = {"page": 0, "replayed": 0}   # followers' runs that ran the page itself, and that replayed it (tests, stats)


def _count(kind: str) -> None:
    """One more follower's run of ``kind`` (``page``, ``replayed``), counted under the lock (many sessions at once)."""
    with _LOCK:
        COUNTS[kind] += 1


def counts() -> dict[str, int]:
    """The followers' runs counted so far (a copy), for ``/_explorer/stats``."""
    with _LOCK:
        return dict(COUNTS)


def live(draw: Callable, *args, state: Callable | None = None):
    """``draw(*args)``, drawn by each session itself, also when the page around it is replayed -> its result.
    ``state(*args)``: a plain value that what the page draws after this part depends on (the same for every
    follower of a room: a class question revealed or not), never a session's own."""
    return page_recorder.live_part(draw, args, state)




def _shared_address(personal: tuple) -> dict[str, str]:
    """This session's address less its ``personal`` parameters: what every follower of the view shares."""
    return {str(k): str(v) for k, v in st.query_params.to_dict().items() if k not in personal}


def _held() -> dict[str, object]:
    """The page parameters this session holds (``widgets.from_url``: a widget's value, else the kept one): what a
    page reads besides its address."""
    state = st.session_state
    names = [k[len(params.KEPT):] for k in state if isinstance(k, str) and k.startswith(params.KEPT)]
    return {name: state[name] if name in state else state[params.kept(name)] for name in names}


def _flags() -> tuple:
    """The switches this session has turned on (a checkbox or toggle outside the teacher's view: a chart's options,
    the bertviz view)."""
    return tuple(sorted(k for k, v in st.session_state.items() if isinstance(k, str) and v is True
                        and not k.startswith("_")))


def _base(view: TeacherView, personal: tuple) -> bytes:
    """The key of what this follower's page draws: the page, the address it starts from (the teacher's view and the
    session's own parameters), the page parameters it holds, the switches on, the teacher's options, the language
    and the text lock. A session's own text is in its key (as a digest): only a session holding the same one gets
    its page replayed."""
    opts = sorted(view.opts.items())
    held = sorted((k, str(v)) for k, v in _held().items())
    return drawn_once.view_key("followed page", view.page, tuple(sorted(_shared_address(personal).items())),
                               tuple(held), _flags(), tuple(opts), i18n.current(), text_locked())


def _states(parts) -> tuple:
    return tuple(state(*args) for state, args in parts)


def _key(base: bytes, states: tuple) -> bytes:
    return drawn_once.view_key("followed page", base, states)


def _parts(recording) -> tuple:
    return tuple((p.state, p.args) for p in recording.messages if isinstance(p, page_recorder.LivePart) and p.state)


def _values(recording) -> tuple:
    return tuple(p.value for p in recording.messages if isinstance(p, page_recorder.LivePart) and p.state)


def _remember(base: bytes, recording) -> None:
    _STATES.put(base, _parts(recording))


@dataclass(frozen=True)
class Followed:
    """A follower's recorded page: what it drew, and where it left the address and the page parameters kept (what
    a replaying session takes over, so its next page is keyed as the recorder's is)."""
    drawn: page_recorder.PageRecording
    address: dict
    kept: dict

    @property
    def nbytes(self) -> int:
        return self.drawn.nbytes

    @property
    def messages(self) -> tuple:
        return self.drawn.messages


def _take_over(followed: Followed) -> None:
    """The recorder's page left the address and the kept parameters so: this session too (a widget's own state,
    which the page did not draw here, falls back to the kept value)."""
    for name, value in followed.kept.items():
        st.session_state.pop(name, None)
        st.session_state[params.kept(name)] = value
    params.put_all(followed.address)


def follow(view: TeacherView, page, banner: Callable[[], bool], personal: tuple = PRIVATE) -> bool:
    """A follower's page for the teacher's ``view``: ``banner()`` first (the session's own banner and poll; -> whether
    it still follows), then ``page`` (app.py's st.Page) run in the first follower of this view and language,
    recorded, and the recording replayed, as that page (its widgets' ids), in every other -> whether this run
    replayed. ``personal``: the address parameters each session keeps for itself."""
    run = page.run
    if drawn_once.STORE.max_bytes <= 0 or internals.script_context() is None:
        _count("page")
        run()
        return False
    with internals.running_as(page):
        still = banner()
    if not still:   # the class has ended, or this student was removed: the page as anyone's
        run()
        return False
    base = _base(view, personal)
    parts = _STATES.peek(base, ())
    drew, stopped = [], []

    def record():
        drew.append(True)
        _count("page")
        with page_recorder.recording_page() as recorded:
            try:
                run()
            except internals.StopException as stop:
                if not internals.runs_here():
                    raise   # a newer run replaces this one: its page is not finished
                stopped.append(stop)   # the page's own st.stop(): what it drew is its page
            # after st.stop() every read of the session state raises the stop again: paused for the bookkeeping
            with internals.stops_paused() if stopped else contextlib.nullcontext():
                recording = recorded()
                kept = {k[len(params.KEPT):]: v for k, v in st.session_state.items()
                        if isinstance(k, str) and k.startswith(params.KEPT)}
                return Followed(recording, _shared_address(personal), kept)

    recording = drawn_once.STORE.get_or_compute(_key(base, _states(parts)), record)
    if drew:
        _remember(base, recording)
        if _parts(recording) != parts:   # first drawn (or with other parts): found under its own states next time
            drawn_once.STORE.get_or_compute(_key(base, _values(recording)), lambda: recording)
        if stopped:
            raise stopped[0]
        return False
    if _states(_parts(recording)) != _values(recording):   # the class moved on (a reveal) since it was recorded
        _count("page")
        run()
        return False
    _count("replayed")
    with internals.running_as(page):
        _take_over(recording)
        page_replay.replay_page(recording.drawn)
    return True
