"""The recorder a class's replay is built on: what one call or a whole page's run drew, kept and drawn again in
another session (``record``/``replay`` for :mod:`explorer.ui.drawn_once`; ``recording_page`` for
:mod:`explorer.ui.live.replayed`, whose recordings :mod:`explorer.ui.live.page_replay` draws again). With
:mod:`explorer.ui.live.streamlit_internals` and that module it is one of the three that use Streamlit's private
parts (tests/unit/test_streamlit_internals.py fails on any other); :mod:`explorer.ui.live.streamlit_contract` lists
and checks each.

What is used, what for, and why no public API serves:

- ``CACHE_RESOURCE_MESSAGE_REPLAY_CTX`` (its ``calling_cached_function`` and ``_most_recent_messages``),
  ``CachedResult``, ``ElementMsgData``, ``replay_cached_messages``, ``CacheType`` and ``st._main._id`` /
  ``st.sidebar._id``: the elements a figure draws are recorded once per view and replayed to every other session
  (``record``, ``replay``; ``explorer.ui.drawn_once``), exactly as ``st.cache_resource`` replays what a cached
  function drew. ``st.cache_resource`` itself keeps its entries by count, not by bytes, and cannot say how large
  an entry is, where the class's render cache must be bounded in MB and evict whole views.
- ``streamlit.runtime.caching``'s ``save_element_message``, ``save_block_message`` and ``save_media_data``,
  ``BlockMsgData``, ``MediaMsgData``, ``context_dg_stack`` and a DeltaGenerator's ``_enqueue`` and ``_block``: a
  whole page's run is recorded (``recording_page``) and replayed to a class's followers
  (``explorer.ui.live.replayed``). The cache's own recording would refuse the page's widgets (a warning drawn
  at each), so these three module functions, which every element passes through, are wrapped once to also keep
  what a page's recording asks for (only while one runs in that thread); parts drawn per session are left out
  (``unrecorded``) and named in the recording (``live_part``), and replay draws them in place.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import streamlit as st
from streamlit.delta_generator_singletons import context_dg_stack
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime import caching as _caching
from streamlit.runtime.caching.cache_resource_api import CACHE_RESOURCE_MESSAGE_REPLAY_CTX
from streamlit.runtime.caching.cache_type import CacheType
from streamlit.runtime.caching.cached_message_replay import (
    BlockMsgData,
    CachedResult,
    ElementMsgData,
    MediaMsgData,
    replay_cached_messages,
)
from streamlit.runtime.state.common import TESTING_KEY
from streamlit.runtime.state.session_state import SessionState

from explorer.ui.live.streamlit_internals import page_hash, script_context

__all__ = ["LivePart", "PageRecording", "Recording", "live_part", "record", "recording_page", "replay",
           "running_as", "unrecorded"]


# ---------------------------------------------------------------------------------------------- recorded elements

@dataclass(frozen=True)
class Recording:
    """The elements one call drew, ready to be drawn again in another session: ``nbytes`` is their size as
    protobuf messages (what each replay sends)."""
    result: CachedResult
    nbytes: int


def record(draw: Callable[[], None]) -> Recording:
    """Run ``draw()`` (it draws in this session as usual) and keep what it drew, as ``st.cache_resource`` keeps
    what a cached function draws. Widgets inside ``draw`` are refused by Streamlit as in a cached function."""
    replay_ctx = CACHE_RESOURCE_MESSAGE_REPLAY_CTX
    with replay_ctx.calling_cached_function(draw):
        draw()
    messages = replay_ctx._most_recent_messages
    size = sum(m.message.ByteSize() for m in messages if isinstance(m, ElementMsgData))
    return Recording(CachedResult(None, messages, st._main._id, st.sidebar._id), size)


def replay(recording: Recording) -> None:
    """Draw a recording's elements in this session, where the recording's ``draw`` would have drawn them (the
    current ``with`` container, or the page)."""
    replay_cached_messages(recording.result, CacheType.RESOURCE, replay)


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
    """What a page's run drew (elements, blocks, live parts, in order); ``nbytes``: the elements' protobuf size.
    ``hashes``: each recorded element's message hash and cacheable flag, filled in at its first replay."""
    messages: tuple
    main_id: str
    sidebar_id: str
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
    def __init__(self):
        self.messages, self.seen, self.media, self.active = [], set(), [], True

    def called_on(self, invoked: str, used: str) -> str:   # as CachedMessageReplayContext.select_dg_to_save
        return used if used in self.seen else invoked


_CAPTURE: contextvars.ContextVar[_PageCapture | None] = contextvars.ContextVar("explorer_page_capture", default=None)
_PATCHED = threading.Lock()


def _capturing() -> _PageCapture | None:
    capture = _CAPTURE.get()
    return capture if capture is not None and capture.active else None


def _wrap_caching() -> None:
    """Wrap Streamlit's three save functions once, so a page's recording sees every element, block and media."""
    with _PATCHED:
        if getattr(_caching.save_element_message, "_explorer", False):
            return
        element, block, media = _caching.save_element_message, _caching.save_block_message, _caching.save_media_data
        register = SessionState.register_widget

        def save_element_message(delta_type, element_proto, invoked_dg_id, used_dg_id, returned_dg_id,
                                 layout_config=None, agent_props=None):
            element(delta_type, element_proto, invoked_dg_id, used_dg_id, returned_dg_id, layout_config, agent_props)
            capture = _capturing()
            if capture is not None:
                capture.messages.append(ElementMsgData(delta_type, element_proto,
                                                       capture.called_on(invoked_dg_id, used_dg_id), returned_dg_id,
                                                       capture.media, layout_config))
                capture.media = []
                capture.seen.add(returned_dg_id)

        def save_block_message(block_proto, invoked_dg_id, used_dg_id, returned_dg_id, agent_props=None):
            block(block_proto, invoked_dg_id, used_dg_id, returned_dg_id, agent_props)
            capture = _capturing()
            if capture is not None:
                capture.messages.append(BlockMsgData(block_proto, capture.called_on(invoked_dg_id, used_dg_id),
                                                     returned_dg_id))
                capture.seen.add(returned_dg_id)

        def register_widget(self, metadata, user_key):
            result = register(self, metadata, user_key)
            capture = _capturing()
            if capture is not None:
                capture.messages.append(RecordedWidget(metadata, user_key, result.value))
            return result

        def save_media_data(media_data, mimetype, media_id):
            media(media_data, mimetype, media_id)
            capture = _capturing()
            if capture is not None:
                capture.media = [*capture.media, MediaMsgData(media_data, mimetype, media_id)]

        for fn in (save_element_message, save_block_message, save_media_data, register_widget):
            fn._explorer = True
        _caching.save_element_message, _caching.save_block_message = save_element_message, save_block_message
        _caching.save_media_data = save_media_data
        SessionState.register_widget = register_widget


@contextlib.contextmanager
def recording_page() -> Iterator[Callable[[], PageRecording]]:
    """Inside, everything drawn in this run is also kept (widgets too, without Streamlit's cache warning), except
    what ``unrecorded`` leaves out; ``with recording_page() as recorded: ...; recording = recorded()``."""
    _wrap_caching()
    capture = _PageCapture()
    token = _CAPTURE.set(capture)

    def recorded() -> PageRecording:
        size = sum(m.message.ByteSize() for m in capture.messages if isinstance(m, ElementMsgData))
        testing = st.session_state.get(TESTING_KEY) or {}   # AppTest's own record of this run's widgets
        messages = [replace(m, testing=((m.metadata.id, testing[m.metadata.id]),)) if isinstance(m, RecordedWidget)
                    and m.metadata.id in testing else m for m in capture.messages]
        return PageRecording(tuple(messages), st._main._id, st.sidebar._id, size)
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
    here = context_dg_stack.get()[-1]._id
    capture.messages.append(LivePart(here if here in capture.seen else st._main._id, draw, args, state,
                                     state(*args) if state is not None else None))
    with unrecorded():
        return draw(*args)


@contextlib.contextmanager
def running_as(page: StreamlitPage) -> Iterator[None]:
    """Inside, this run draws as ``page``'s script does (``StreamlitPage.run``): a widget's id includes the page
    that draws it, so a replayed page's widgets and live parts keep the ids the page itself gives them."""
    ctx = script_context()
    if ctx is None:
        yield
        return
    with ctx.run_with_active_hash(page_hash(page)):
        yield
