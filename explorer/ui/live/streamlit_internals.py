"""Every private Streamlit name the app uses, in one place (Streamlit is pinned at 1.67.0).

A Streamlit upgrade that moves one of these breaks the live classroom, not a page: so no other module of
explorer/, pages/, bench/ or app.py names them (tests/unit/test_streamlit_internals.py fails if one does, but for
its two named exceptions in bench/), and
``problems`` checks each against the installed Streamlit, by name and signature, inside a real server's session
(tests/app/test_streamlit_contract.py runs it in CI).

What is used, what for, and why no public API serves:

- ``get_script_run_ctx`` (``streamlit.runtime.scriptrunner``): the running script's context. Its ``session_id``
  names a browser tab (the fair queue's place, the class watcher's session; ``st.context`` has no session id),
  its ``main_script_path`` is app.py's folder, against which page files are named.
- ``ctx.pages_manager``: ``get_pages()`` and ``current_page_script_hash`` say which page file is running, as a path
  relative to app.py (``pages/heatmaps.py``, the teacher's view a class follows) and its URL path;
  ``st.navigation``'s page object is only returned to app.py, and it carries no file. ``intended_page_script_hash``
  and ``set_script_intent`` choose the page *before* ``st.navigation`` resolves the browser's: a following
  student's run is the teacher's page in the same run. ``st.switch_page`` would stop the run and start a second
  one (one more run per follower per teacher click; measured earlier as followers left on intermediate pages).
- ``StreamlitPage._script_hash`` and ``._page``: a page object's identity (what the pages manager's hashes name)
  and its file; the public ``url_path`` and ``title`` name neither.
- ``PagesManager.uses_pages_directory``: with a ``pages/`` folder, Streamlit runs a deep link on a fresh server as
  an old-style multipage app (the page file alone, no app.py) until the entry script has called ``st.navigation``
  once. Setting it to False (what ``st.navigation`` itself does) and rerunning sends the link through app.py. No
  option switches the folder mode off.
- ``RerunException`` and ``StopException``: a write of the address that a rerun or ``st.stop()`` cut off is
  remembered and sent again (``params``); a page's own ``st.stop()`` still publishes the teacher's view
  (``following.run_page``). ``st.stop()`` is called inside shared helpers (a model that fails to load, an empty
  prompt), where an early ``return`` cannot end the page.
- ``SafeSessionState._yield_callback``: after ``st.stop()`` every read or write of the session state raises the
  stop again; for the few lines that publish the view of a page that stopped early it is swapped for a no-op
  (``object.__setattr__``: the class forbids setting attributes). No public API continues a stopped run.
- ``Runtime.instance().get_app_session``, ``AppSession`` and, on it, ``request_rerun``, ``_client_state``,
  ``_scriptrunner`` (its ``_requests._state`` and ``_script_thread``), ``_call_soon_on_event_loop``, with
  ``ScriptRequestType`` and ``SCRIPT_RUN_CONTEXT_ATTR_NAME``: the server reruns a session whose class moved on,
  as "run on save" does, from a thread no session owns (``push``). ``st.rerun`` only reruns the calling script,
  and a timed fragment is a browser timer whose ticks crossed the teacher's clicks.
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
- ``populate_hash_if_needed`` (wrapped, as the three above) and the script context's ``_enqueue`` with the app
  session's ``_enqueue_forward_msg``: what a replay costs a follower is Streamlit's own work a message, and two
  parts of it are the same for every follower (measured, docs/benchmarks.md). A message's hash leaves its metadata
  (where it goes) out, so a recorded element's is computed at its first replay and reused (``replay_page``); and a
  replay's messages are handed to the session's event loop in one call at its end (``_one_handoff``), where each
  message used to wake the loop on its own. No public API enqueues messages.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.delta_generator_singletons import context_dg_stack, get_dg_singleton_instance
from streamlit.elements.lib.utils import save_for_app_testing
from streamlit.navigation.page import StreamlitPage
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime import caching as _caching
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.caching.cache_resource_api import CACHE_RESOURCE_MESSAGE_REPLAY_CTX
from streamlit.runtime.caching.cache_type import CacheType
from streamlit.runtime.caching.cached_message_replay import (
    BlockMsgData,
    CachedResult,
    ElementMsgData,
    MediaMsgData,
    replay_cached_messages,
)
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils import script_run_context as _run_context
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    SCRIPT_RUN_CONTEXT_ATTR_NAME,
    ScriptRunContext,
    get_script_run_ctx,
)
from streamlit.runtime.state.common import TESTING_KEY
from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state import SessionState
from streamlit.runtime.state.widgets import register_widget_from_metadata

__all__ = ["STOPS", "LivePart", "PageRecording", "live_part", "recording_page", "replay_page", "running_as",
           "unrecorded",
           "RerunException", "StopException", "app_session", "folder_navigation", "intended_page",
           "latest_client_state", "leave_folder_navigation", "main_script_path", "page_file", "page_hash", "pages",
           "problems", "record", "Recording", "replay", "rerun_session", "resolved", "run_instead", "running_page",
           "runs_here", "script_context", "session_id", "stops_paused"]

STOPS = (RerunException, StopException)   # what stops a run: a newer rerun, or st.stop()


# ---------------------------------------------------------------------------------------------- the running script

def script_context() -> ScriptRunContext | None:
    """The running script's context; None outside a script run (a worker thread, the preload, bare tests)."""
    return get_script_run_ctx(suppress_warning=True)


def session_id() -> str | None:
    """The id of the browser session whose script is running (one per tab); None outside a script run."""
    ctx = script_context()
    return ctx.session_id if ctx is not None else None


def main_script_path() -> Path | None:
    """The entry script (app.py) of the running session; None outside a script run."""
    ctx = script_context()
    return Path(ctx.main_script_path) if ctx is not None else None


# ---------------------------------------------------------------------------------------------- pages

def pages() -> list[dict]:
    """Streamlit's record of each page of this run's navigation (``script_path``, ``url_pathname``, …); []
    outside a script run."""
    ctx = script_context()
    return list(ctx.pages_manager.get_pages().values()) if ctx is not None else []


def running_page() -> dict:
    """Streamlit's record of the running page (``script_path``, ``url_pathname``); {} when unknown."""
    ctx = script_context()
    if ctx is None:
        return {}
    return ctx.pages_manager.get_pages().get(ctx.pages_manager.current_page_script_hash) or {}


def intended_page() -> str | None:
    """The page the browser asked this run for (its hash, as ``page_hash`` gives), before ``st.navigation``."""
    ctx = script_context()
    return ctx.pages_manager.intended_page_script_hash if ctx is not None else None


def run_instead(page: StreamlitPage) -> None:
    """Make the coming ``st.navigation`` run ``page`` in this run, whatever the browser asked for (the address bar
    and the highlighted page follow). Call it before ``st.navigation``."""
    ctx = script_context()
    if ctx is not None:
        ctx.pages_manager.set_script_intent(page_hash(page), "")


def page_hash(page: StreamlitPage) -> str:
    """A page object's identity, as Streamlit's pages manager names pages."""
    return page._script_hash


def page_file(page: StreamlitPage) -> Path | None:
    """The file of a page made from a path (None for a page made from a function)."""
    file = getattr(page, "_page", None)
    return file if isinstance(file, Path) else None


def folder_navigation() -> bool:
    """This run is Streamlit's old-style multipage app: the page files of ``pages/`` with the entry script as one
    more page, instead of app.py's ``st.navigation`` (where app.py is never a page)."""
    ctx = script_context()
    if ctx is None:
        return False
    infos = ctx.pages_manager.get_pages().values()
    main = resolved(ctx.main_script_path)
    return len(infos) > 1 and any(resolved(p.get("script_path", "")) == main for p in infos)


@functools.lru_cache(maxsize=256)
def resolved(path: str | Path) -> Path:
    """``Path(path).resolve()``, remembered: the app's files do not move while it runs, and every run of every
    session asks about the same few (a realpath walks the disk each time: a fifth of a follower's run)."""
    return Path(path).resolve()


def leave_folder_navigation() -> bool:
    """Switch Streamlit's old-style multipage mode off if it is on, or if this run began in it -> whether it was
    (the caller then reruns, through app.py)."""
    if PagesManager.uses_pages_directory or folder_navigation():
        PagesManager.uses_pages_directory = False
        return True
    return False


# ---------------------------------------------------------------------------------------------- stops

def runs_here() -> bool:
    """This thread's run is still its session's current one: a stop here came from the page's own ``st.stop()``,
    not from a newer run replacing it (which stops the script the same way). Always True under AppTest, whose
    runtime is a mock running one run at a time."""
    app = app_session(session_id())
    if app is None:
        return True
    runner = app._scriptrunner
    return runner is not None and runner._script_thread is threading.current_thread()


@contextlib.contextmanager
def stops_paused() -> Iterator[None]:
    """Inside: reads and writes of the session state do not raise a pending stop again (after ``st.stop()`` each
    one does), so a stopped page's bookkeeping can finish."""
    state = script_context().session_state   # SafeSessionState: its yield callback raises the stop again
    callback = state._yield_callback
    object.__setattr__(state, "_yield_callback", lambda: None)
    try:
        yield
    finally:
        object.__setattr__(state, "_yield_callback", callback)


# ---------------------------------------------------------------------------------------------- server-started reruns

def app_session(session: str | None) -> AppSession | None:
    """The real server's session ``session``; None when it has gone, outside a server, or under AppTest (whose
    runtime is a mock: nothing there for the server to rerun)."""
    if session is None or not Runtime.exists():
        return None
    app = Runtime.instance().get_app_session(session)
    return app if isinstance(app, AppSession) else None


def rerun_session(session: str) -> bool:
    """Ask Streamlit to run ``session``'s page again at its latest address, as run-on-save does, unless a run is
    already waiting to start -> False when the session has gone. A waiting run shows what is new, and a request
    now would be merged into it with the last run's page and address in place of the waiting one's (a teacher's
    click on another page, lost)."""
    app = Runtime.instance().get_app_session(session) if Runtime.exists() else None
    if app is None:
        return False

    def rerun() -> None:   # on the event loop, where the browser's own requests are handled: no race with them
        runner = app._scriptrunner
        if runner is not None and runner._requests._state == ScriptRequestType.RERUN:
            return
        app.request_rerun(latest_client_state(app))
    app._call_soon_on_event_loop(rerun)
    return True


def latest_client_state(app: AppSession) -> ClientState:
    """The client state for a server-started rerun of ``app``: its own, except that while a run is under way the
    page and address are that run's. Streamlit keeps the one of the session's last *finished* script thread, and a
    thread runs a whole chain of reruns: a teacher's run on a new page or after a slider step would otherwise be
    replaced by a run from the address before it (another page's parameters, an old head)."""
    state = ClientState()
    state.CopyFrom(app._client_state)
    runner = app._scriptrunner
    ctx = getattr(getattr(runner, "_script_thread", None), SCRIPT_RUN_CONTEXT_ATTR_NAME, None)
    if ctx is not None:   # the run's address, with every write it has made so far
        state.query_string, state.page_script_hash = ctx.query_string, ctx.page_script_hash
    return state


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
class _Widget:
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
                capture.messages.append(_Widget(metadata, user_key, result.value))
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
        messages = [replace(m, testing=((m.metadata.id, testing[m.metadata.id]),)) if isinstance(m, _Widget)
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


def _roots() -> dict[str, DeltaGenerator]:
    """The process's root containers (main, sidebar, events, bottom) by id: the same objects in every session."""
    roots = get_dg_singleton_instance()
    return {dg._id: dg for dg in (roots.main_dg, roots.sidebar_dg, roots.event_dg, roots.bottom_dg)}


# the replay under way in this thread: its recording's hashes, and the recorded message being enqueued
_HASHING: contextvars.ContextVar[tuple[dict, object] | None] = contextvars.ContextVar("explorer_hashing",
                                                                                      default=None)


def _wrap_hashing() -> None:
    """Wrap ``populate_hash_if_needed`` once: a replayed element's message takes the hash its first replay
    computed. The hash is of the message without its metadata (Streamlit's own rule), which is all a follower's
    copy changes; a fragment's message (its id is hashed) is hashed as usual."""
    with _PATCHED:
        if getattr(_run_context.populate_hash_if_needed, "_explorer", False):
            return
        populate = _run_context.populate_hash_if_needed

        def populate_hash_if_needed(msg) -> None:
            replaying = _HASHING.get()
            if replaying is None or replaying[1] is None or msg.hash or msg.WhichOneof("type") != "delta" \
                    or msg.delta.fragment_id:
                populate(msg)
                return
            hashes, source = replaying
            known = hashes.get(id(source))
            if known is None:
                populate(msg)
                hashes[id(source)] = (msg.hash, msg.metadata.cacheable)
            else:
                msg.hash, msg.metadata.cacheable = known
        populate_hash_if_needed._explorer = True
        _run_context.populate_hash_if_needed = populate_hash_if_needed


@contextlib.contextmanager
def _one_handoff(ctx: ScriptRunContext) -> Iterator[None]:
    """Inside, what this run enqueues is kept, and handed to its session's event loop in one call at the end, in
    order (as ``AppSession`` does with each message: only while the run's script runner is still the session's).
    Outside a real server (AppTest) messages go as usual."""
    app, send = app_session(ctx.session_id), ctx._enqueue
    runner = getattr(send, "__self__", None)
    if app is None or runner is None:
        yield
        return
    batch: list = []
    ctx._enqueue = batch.append
    try:
        yield
    finally:
        ctx._enqueue = send

        def deliver() -> None:
            if app._scriptrunner is runner:
                for msg in batch:
                    app._enqueue_forward_msg(msg)
        if batch:
            app._call_soon_on_event_loop(deliver)


def replay_page(recording: PageRecording) -> None:
    """Draw a page's recording in this session, where the page would have drawn, its live parts drawn here (as
    ``replay_cached_messages`` does, plus the live parts; media files are this session's again)."""
    _wrap_hashing()
    ctx = script_context()
    token = _HASHING.set((recording.hashes, None))
    try:
        with _one_handoff(ctx):
            _replay(recording, ctx)
    finally:
        _HASHING.reset(token)


def _replay(recording: PageRecording, ctx: ScriptRunContext) -> None:
    dgs, hashes = _roots(), recording.hashes
    for msg in recording.messages:
        if isinstance(msg, _Widget):   # a widget of this run: its state is kept at the run's end
            if msg.metadata.id in ctx.shared.widget_ids_this_run:
                continue   # registered twice in the recorded run (Streamlit does for some): once here
            if msg.user_key:   # its value first (a widget's state is not set once it exists in the run)
                if "trigger" not in msg.metadata.value_type:   # a button's press is never carried over
                    ctx.session_state[msg.user_key] = msg.value
                ctx.shared.widget_user_keys_this_run.check_and_add(msg.user_key)
            ctx.shared.widget_ids_this_run.check_and_add(msg.metadata.id)
            register_widget_from_metadata(msg.metadata, ctx)
            for widget_id, saved in msg.testing:
                save_for_app_testing(ctx, widget_id, saved)
        elif isinstance(msg, LivePart):
            with dgs[msg.dg_id]:
                msg.draw(*msg.args)
        elif isinstance(msg, ElementMsgData):
            for data in msg.media_data or ():
                Runtime.instance().media_file_mgr.add(data.media, data.mimetype, data.media_id)
            _HASHING.set((hashes, msg))   # the one message this element enqueues is this one's
            made = dgs[msg.id_of_dg_called_on]._enqueue(msg.delta_type, msg.message, layout_config=msg.layout_config)
            _HASHING.set((hashes, None))
            if isinstance(made, DeltaGenerator):
                dgs[msg.returned_dgs_id] = made
        else:
            _HASHING.set((hashes, msg))
            dgs[msg.returned_dgs_id] = dgs[msg.id_of_dg_called_on]._block(msg.message)
            _HASHING.set((hashes, None))


# ---------------------------------------------------------------------------------------------- the contract

# name -> (owner, attribute, the parameters this module passes, in order; None: an attribute, not called)
SIGNATURES = {
    "get_script_run_ctx": (None, get_script_run_ctx, ["suppress_warning"]),
    "PagesManager.get_pages": (PagesManager, "get_pages", ["self"]),
    "PagesManager.set_script_intent": (PagesManager, "set_script_intent", ["self", "page_script_hash", "page_name"]),
    "PagesManager.current_page_script_hash": (PagesManager, "current_page_script_hash", None),
    "PagesManager.intended_page_script_hash": (PagesManager, "intended_page_script_hash", None),
    "PagesManager.uses_pages_directory": (PagesManager, "uses_pages_directory", None),
    "StreamlitPage._script_hash": (StreamlitPage, "_script_hash", None),
    "Runtime.exists": (Runtime, "exists", []),
    "Runtime.instance": (Runtime, "instance", []),
    "Runtime.get_app_session": (Runtime, "get_app_session", ["self", "session_id"]),
    "AppSession.request_rerun": (AppSession, "request_rerun", ["self", "client_state"]),
    "AppSession._call_soon_on_event_loop": (AppSession, "_call_soon_on_event_loop", ["self", "callback"]),
    "SafeSessionState.__init__": (SafeSessionState, "__init__", ["self", "state", "yield_callback"]),
    "ScriptRequestType.RERUN": (ScriptRequestType, "RERUN", None),
    "CachedMessageReplayContext.calling_cached_function": (type(CACHE_RESOURCE_MESSAGE_REPLAY_CTX),
                                                           "calling_cached_function", ["self", "func"]),
    "CachedMessageReplayContext._most_recent_messages": (type(CACHE_RESOURCE_MESSAGE_REPLAY_CTX),
                                                         "_most_recent_messages", None),
    "CachedResult.__init__": (CachedResult, "__init__", ["self", "value", "messages", "main_id", "sidebar_id",
                                                         "stored_at"]),
    "replay_cached_messages": (None, replay_cached_messages, ["result", "cache_type", "cached_func"]),
    "CacheType.RESOURCE": (CacheType, "RESOURCE", None),
    "caching.save_element_message": (None, _caching.save_element_message,
                                     ["delta_type", "element_proto", "invoked_dg_id", "used_dg_id", "returned_dg_id",
                                      "layout_config", "agent_props"]),
    "caching.save_block_message": (None, _caching.save_block_message,
                                   ["block_proto", "invoked_dg_id", "used_dg_id", "returned_dg_id", "agent_props"]),
    "caching.save_media_data": (None, _caching.save_media_data, ["media_data", "mimetype", "media_id"]),
    "ElementMsgData.__init__": (ElementMsgData, "__init__", ["self", "delta_type", "message", "id_of_dg_called_on",
                                                             "returned_dgs_id", "media_data", "layout_config",
                                                             "agent_props"]),
    "BlockMsgData.__init__": (BlockMsgData, "__init__", ["self", "message", "id_of_dg_called_on", "returned_dgs_id",
                                                         "agent_props"]),
    "DeltaGenerator._enqueue": (DeltaGenerator, "_enqueue", ["self", "delta_type", "element_proto", "layout_config",
                                                             "has_one_shot_effect", "agent_props"]),
    "SessionState.register_widget": (SessionState, "register_widget", ["self", "metadata", "user_key"]),
    "ScriptRunContext.run_with_active_hash": (ScriptRunContext, "run_with_active_hash", ["self", "page_hash"]),
    "register_widget_from_metadata": (None, register_widget_from_metadata, ["metadata", "ctx"]),
    "save_for_app_testing": (None, save_for_app_testing, ["ctx", "k", "v"]),
    "DeltaGenerator._block": (DeltaGenerator, "_block", ["self", "block_proto", "dg_type", "agent_props"]),
    "populate_hash_if_needed": (None, _run_context.populate_hash_if_needed, ["msg"]),
    "ScriptRunContext.enqueue": (ScriptRunContext, "enqueue", ["self", "msg"]),
    "AppSession._enqueue_forward_msg": (AppSession, "_enqueue_forward_msg", ["self", "msg"]),
}
# attributes set on instances, checked on the live objects of a running session (``problems(live=True)``)
CONTEXT_FIELDS = ("session_id", "main_script_path", "query_string", "page_script_hash", "session_state",
                  "pages_manager", "_enqueue")


def _parameters(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def problems(live: bool = False) -> list[str]:
    """Each internal above that the installed Streamlit lacks or has changed, one sentence naming it; [] when all
    hold. ``live=True`` (inside a run of a real ``streamlit run`` server) also checks the attributes Streamlit sets
    on the running session's objects: the app session, its script runner and requests, the session state and
    the script context."""
    found = []
    for name, (owner, attr, params) in SIGNATURES.items():
        if owner is None:
            target = attr
        elif not hasattr(owner, attr):
            found.append(f"{name} is missing")
            continue
        else:
            target = inspect.getattr_static(owner, attr)
            target = getattr(owner, attr) if isinstance(target, staticmethod | classmethod) else target
        if params is not None and _parameters(target) != params:
            found.append(f"{name} changed its signature: expected ({', '.join(params)}), found "
                         f"({', '.join(_parameters(target))})")
    for name in ("RerunException", "StopException"):
        if not issubclass(globals()[name], BaseException):
            found.append(f"{name} is no longer an exception")
    if not isinstance(getattr(ClientState(), "query_string", None), str) or not hasattr(ClientState(),
                                                                                         "page_script_hash"):
        found.append("ClientState.query_string / page_script_hash are missing")
    if not isinstance(getattr(st._main, "_id", None), str) or not isinstance(getattr(st.sidebar, "_id", None), str):
        found.append("st._main._id / st.sidebar._id are missing")
    if live:
        found += _live_problems()
    return found


def _live_problems() -> list[str]:
    ctx = script_context()
    if ctx is None:
        return ["get_script_run_ctx found no script run (call problems(live=True) inside a page)"]
    found = [f"ScriptRunContext.{f} is missing" for f in CONTEXT_FIELDS if not hasattr(ctx, f)]
    if threading.current_thread().__dict__.get(SCRIPT_RUN_CONTEXT_ATTR_NAME) is not ctx:
        found.append("SCRIPT_RUN_CONTEXT_ATTR_NAME no longer names the thread's context")
    if not isinstance(ctx.session_state, SafeSessionState) or not callable(
            ctx.session_state.__dict__.get("_yield_callback")):
        found.append("SafeSessionState._yield_callback is missing")
    app = app_session(ctx.session_id)
    if app is None:
        return [*found, "Runtime.get_app_session found no AppSession for this run's session"]
    for attr in ("_client_state", "_scriptrunner"):
        if not hasattr(app, attr):
            found.append(f"AppSession.{attr} is missing")
    if not isinstance(getattr(app, "_client_state", None), ClientState):
        found.append("AppSession._client_state is no ClientState")
    runner = getattr(app, "_scriptrunner", None)
    if getattr(runner, "_script_thread", None) is not threading.current_thread():
        found.append("AppSession._scriptrunner._script_thread is not the running script's thread")
    requests = getattr(runner, "_requests", None)
    if not isinstance(requests, ScriptRequests) or not isinstance(getattr(requests, "_state", None),
                                                                  ScriptRequestType):
        found.append("AppSession._scriptrunner._requests._state is missing")
    return found
