"""What one call or a whole page's run drew, kept to be drawn again in another session: ``record`` for
:mod:`explorer.ui.drawn_once` (a figure drawn once per view), ``recording_page`` for
:mod:`explorer.ui.live.replayed` (a teacher's page drawn once per view and language for the class), both drawn again
by :mod:`explorer.ui.live.page_replay`. Streamlit's private parts it rests on are named only in
:mod:`explorer.ui.live.streamlit_internals`: the recording of a cached function's drawing (``record``), and the
functions every element, block, media file and widget passes through, wrapped once to also hand them to the page
recording under way in the thread (``recording_page``). A page's widgets are kept with their values; parts drawn per
session are left out (``unrecorded``) or named in the recording in their place (``live_part``) and drawn by each
replaying session.
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from explorer.ui.live import streamlit_internals as internals

__all__ = ["LivePart", "PageRecording", "RecordedWidget", "Recording", "live_part", "record", "recording_page",
           "unrecorded"]


@dataclass(frozen=True)
class Recording:
    """The elements one call drew, ready to be drawn again in another session: ``nbytes`` is their size as
    protobuf messages (what each replay sends)."""
    messages: tuple
    nbytes: int


def record(draw: Callable[[], None]) -> Recording:
    """Run ``draw()`` (it draws in this session as usual) and keep what it drew, as ``st.cache_resource`` keeps
    what a cached function draws. Widgets inside ``draw`` are refused by Streamlit as in a cached function."""
    messages = internals.record_call(draw)
    return Recording(messages, internals.element_bytes(messages))


# ---------------------------------------------------------------------------------------------- a page, recorded

@dataclass(frozen=True)
class LivePart:
    """A part of a recorded page that each replaying session draws itself: ``draw(*args)``, in the container the
    recording drew it in (``dg_id``); ``state(*args)`` (when given) was ``value`` when recorded."""
    dg_id: str
    draw: Callable
    args: tuple
    state: Callable | None = None
    value: object = None


@dataclass(frozen=True)
class PageRecording:
    """What a page's run drew (elements, blocks, widgets, live parts, in order); ``nbytes``: the elements' protobuf
    size. ``hashes``: each recorded element's message hash and cacheable flag, filled in at its first replay."""
    messages: tuple
    nbytes: int
    hashes: dict = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class RecordedWidget:
    """A widget the recorded page registered (its metadata: id, value's (de)serialiser, callbacks) and the value
    it had: registered again in a replaying session with that value, so the widget it shows is one of that
    session's (its state, its callback), as if the page had drawn it there."""
    metadata: object
    user_key: str | None
    value: object
    testing: tuple = ()   # under AppTest only: what the widget saved for the test to read (its format function)


class _PageCapture:
    """What the page recording under way in a thread has seen (``streamlit_internals.watch_drawing`` hands it each
    element, block, media file and widget)."""

    def __init__(self):
        self.messages, self.seen, self.media, self.active = [], set(), [], True

    def called_on(self, invoked: str, used: str) -> str:   # as CachedMessageReplayContext.select_dg_to_save
        return used if used in self.seen else invoked

    def take_media(self) -> list:   # the media files saved since the last element: that element's
        media, self.media = self.media, []
        return media

    def add(self, message, container: str) -> None:
        self.messages.append(message)
        self.seen.add(container)

    def widget(self, metadata, user_key: str | None, value) -> None:
        self.messages.append(RecordedWidget(metadata, user_key, value))


_CAPTURE: contextvars.ContextVar[_PageCapture | None] = contextvars.ContextVar("explorer_page_capture", default=None)


def _capturing() -> _PageCapture | None:
    capture = _CAPTURE.get()
    return capture if capture is not None and capture.active else None


@contextlib.contextmanager
def recording_page() -> Iterator[Callable[[], PageRecording]]:
    """Inside, everything drawn in this run is also kept (widgets too, without Streamlit's cache warning), except
    what ``unrecorded`` leaves out; ``with recording_page() as recorded: ...; recording = recorded()``."""
    internals.watch_drawing(_capturing)
    capture = _PageCapture()
    token = _CAPTURE.set(capture)

    def recorded() -> PageRecording:
        testing = internals.widgets_saved_for_testing()   # AppTest's own record of this run's widgets
        messages = [replace(m, testing=((m.metadata.id, testing[m.metadata.id]),)) if isinstance(m, RecordedWidget)
                    and m.metadata.id in testing else m for m in capture.messages]
        return PageRecording(tuple(messages), internals.element_bytes(capture.messages))
    try:
        yield recorded
    finally:
        _CAPTURE.reset(token)


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """Inside, nothing drawn enters a page's recording (a session's own banner, vote, notes)."""
    capture = _CAPTURE.get()
    if capture is None:
        yield
        return
    was, capture.active = capture.active, False
    try:
        yield
    finally:
        capture.active = was


def live_part(draw: Callable, args: tuple, state: Callable | None = None):
    """``draw(*args)`` here, and, while a page is recorded, named in the recording in its place (left out itself):
    each session that replays the page draws it then -> ``draw``'s result. ``state``: see ``LivePart``."""
    capture = _capturing()
    if capture is None:
        return draw(*args)
    here = internals.container_id()
    capture.messages.append(LivePart(here if here in capture.seen else internals.main_id(), draw, args, state,
                                     state(*args) if state is not None else None))
    with unrecorded():
        return draw(*args)
