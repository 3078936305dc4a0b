"""Every private Streamlit part the app uses; no other module names one (tests/unit/test_streamlit_internals.py
reads explorer/, pages/, bench/ and app.py). Streamlit is pinned at 1.67.0: after an upgrade, read this file against
the contract test's table (tests/streamlit_contract.py, checked by name and signature, and inside a real server's
session, by tests/app/test_streamlit_contract.py). What each part is used for and why no public API serves: the
table "Streamlit's private parts" in docs/architecture.md. The logic built on them lives elsewhere:
:mod:`explorer.ui.live.page_recorder` (a call or a page's run recorded), :mod:`explorer.ui.live.page_replay` (drawn
again), :mod:`explorer.ui.live.push` (which sessions the server reruns, and when).
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
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
from streamlit.runtime.caching.cache_resource_api import CACHE_RESOURCE_MESSAGE_REPLAY_CTX as _CALL_RECORDER
from streamlit.runtime.caching.cached_message_replay import BlockMsgData, ElementMsgData, MediaMsgData
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils import script_run_context as _run_context
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.state.common import TESTING_KEY
from streamlit.runtime.state.session_state import SessionState
from streamlit.runtime.state.widgets import register_widget_from_metadata

STOPS = (RerunException, StopException)   # what stops a run: a newer rerun, or st.stop()
_WRAPPED = threading.Lock()


# ---------------------------------------------------------------------------------------------- the running script
def script_context() -> _run_context.ScriptRunContext | None:
    """The running script's context; None outside a script run (a worker thread, the preload, bare tests)."""
    return _run_context.get_script_run_ctx(suppress_warning=True)


def session_id() -> str | None:   # the running script's browser session (one per tab)
    ctx = script_context()
    return ctx.session_id if ctx is not None else None


def main_script_path() -> Path | None:   # the entry script (app.py) of the running session
    ctx = script_context()
    return Path(ctx.main_script_path) if ctx is not None else None


# ---------------------------------------------------------------------------------------------- pages
def pages() -> list[dict]:
    """Streamlit's record of each page of this run's navigation (``script_path``, ``url_pathname``, …)."""
    ctx = script_context()
    return list(ctx.pages_manager.get_pages().values()) if ctx is not None else []


def running_page() -> dict:
    """Streamlit's record of the running page (``script_path``, ``url_pathname``); {} when unknown."""
    ctx = script_context()
    return {} if ctx is None else ctx.pages_manager.get_pages().get(ctx.pages_manager.current_page_script_hash) or {}


def intended_page() -> str | None:
    """The page the browser asked this run for (its hash, as ``page_hash`` gives), before ``st.navigation``."""
    ctx = script_context()
    return ctx.pages_manager.intended_page_script_hash if ctx is not None else None


def run_instead(page: StreamlitPage) -> None:
    """Make the coming ``st.navigation`` run ``page`` in this run, whatever the browser asked for."""
    ctx = script_context()
    if ctx is not None:
        ctx.pages_manager.set_script_intent(page_hash(page), "")


def page_hash(page: StreamlitPage) -> str:   # a page object's identity, as the pages manager names pages
    return page._script_hash


def page_file(page: StreamlitPage) -> Path | None:
    """The file of a page made from a path (None for a page made from a function)."""
    file = getattr(page, "_page", None)
    return file if isinstance(file, Path) else None


def leave_folder_navigation() -> bool:
    """Switch Streamlit's old-style multipage mode (the entry script one more page) off if it is on or this run
    began in it -> whether it was (the caller then reruns, through app.py)."""
    ctx, infos = script_context(), pages()   # (both paths are the app session's own string)
    if PagesManager.uses_pages_directory or len(infos) > 1 and any(
            p.get("script_path") == ctx.main_script_path for p in infos):
        PagesManager.uses_pages_directory = False
        return True
    return False


def running_as(page: StreamlitPage) -> contextlib.AbstractContextManager:
    """Inside, this run draws as ``page``'s script does: a widget's id includes the page that draws it."""
    ctx = script_context()
    return ctx.run_with_active_hash(page_hash(page)) if ctx is not None else contextlib.nullcontext()


# ---------------------------------------------------------------------------------------------- stops
def runs_here() -> bool:
    """This thread's run is still its session's current one (a stop here is the page's own ``st.stop()``, not a
    newer run replacing it). Always True under AppTest, which has no app session."""
    app = app_session(session_id())
    return app is None or getattr(app._scriptrunner, "_script_thread", None) is threading.current_thread()


@contextlib.contextmanager
def stops_paused() -> Iterator[None]:
    """Inside, reads and writes of the session state do not raise a pending stop again (after ``st.stop()`` each
    one does), so a stopped page's bookkeeping can finish."""
    state = script_context().session_state   # a SafeSessionState
    callback = state._yield_callback
    object.__setattr__(state, "_yield_callback", lambda: None)   # the class forbids setting attributes
    try:
        yield
    finally:
        object.__setattr__(state, "_yield_callback", callback)


# ---------------------------------------------------------------------------------------------- server-started reruns
def app_session(session: str | None) -> AppSession | None:
    """The real server's session ``session``; None when it has gone, outside a server, or under AppTest."""
    app = Runtime.instance().get_app_session(session) if session is not None and Runtime.exists() else None
    return app if isinstance(app, AppSession) else None


def rerun_session(session: str) -> bool:
    """Ask Streamlit to run ``session``'s page again at its latest address, as run-on-save does, unless a run is
    already waiting (a request would be merged into it with an older address) -> False when the session has gone."""
    app = Runtime.instance().get_app_session(session) if Runtime.exists() else None
    if app is None:
        return False

    def rerun() -> None:   # on the event loop, where the browser's own requests are handled: no race with them
        runner = app._scriptrunner
        if runner is None or runner._requests._state != ScriptRequestType.RERUN:
            app.request_rerun(latest_client_state(app))
    app._call_soon_on_event_loop(rerun)
    return True


def latest_client_state(app: AppSession) -> ClientState:
    """The client state for a server-started rerun: the session's own, but while a run is under way with that run's
    page and address (Streamlit keeps the last *finished* thread's, and one thread runs a chain of reruns)."""
    state = ClientState()
    state.CopyFrom(app._client_state)
    ctx = getattr(getattr(app._scriptrunner, "_script_thread", None), _run_context.SCRIPT_RUN_CONTEXT_ATTR_NAME, None)
    if ctx is not None:
        state.query_string, state.page_script_hash = ctx.query_string, ctx.page_script_hash
    return state


# ---------------------------------------------------------------------------------------------- recording
def main_id() -> str:   # the id of the page's own container
    return st._main._id


def container_id() -> str:   # the id of the container this line draws in (the innermost ``with``)
    return context_dg_stack.get()[-1]._id


def element_bytes(messages) -> int:   # the protobuf size of the elements among recorded ``messages``
    return sum(m.message.ByteSize() for m in messages if isinstance(m, ElementMsgData))


def record_call(draw: Callable[[], None]) -> tuple:
    """Run ``draw()`` and keep what it drew as ``st.cache_resource`` keeps a cached function's drawing."""
    with _CALL_RECORDER.calling_cached_function(draw):
        draw()
    return tuple(_CALL_RECORDER._most_recent_messages)


def widgets_saved_for_testing() -> dict:   # under AppTest, what this run's widgets saved for the test, by id
    return st.session_state.get(TESTING_KEY) or {}


def watch_drawing(watcher: Callable[[], object]) -> None:
    """Wrap, once, the functions each element, block, media file and widget of a run passes through: after each,
    ``watcher()`` (the recording under way in this thread, or None) is handed it (``add(message, container id)``,
    the element's container by ``called_on(invoked, used)`` and media by ``take_media()``; ``media.append``;
    ``widget(metadata, user_key, value)``)."""
    with _WRAPPED:
        if getattr(_caching.save_element_message, "_explorer", False):
            return
        element, block, media = _caching.save_element_message, _caching.save_block_message, _caching.save_media_data
        register = SessionState.register_widget

        def save_element_message(delta_type, element_proto, invoked_dg_id, used_dg_id, returned_dg_id,
                                 layout_config=None, agent_props=None):
            element(delta_type, element_proto, invoked_dg_id, used_dg_id, returned_dg_id, layout_config, agent_props)
            if (w := watcher()) is not None:
                w.add(ElementMsgData(delta_type, element_proto, w.called_on(invoked_dg_id, used_dg_id),
                                     returned_dg_id, w.take_media(), layout_config), returned_dg_id)

        def save_block_message(block_proto, invoked_dg_id, used_dg_id, returned_dg_id, agent_props=None):
            block(block_proto, invoked_dg_id, used_dg_id, returned_dg_id, agent_props)
            if (w := watcher()) is not None:
                w.add(BlockMsgData(block_proto, w.called_on(invoked_dg_id, used_dg_id), returned_dg_id),
                      returned_dg_id)

        def save_media_data(media_data, mimetype, media_id):
            media(media_data, mimetype, media_id)
            if (w := watcher()) is not None:
                w.media.append(MediaMsgData(media_data, mimetype, media_id))

        def register_widget(self, metadata, user_key):
            result = register(self, metadata, user_key)
            if (w := watcher()) is not None:
                w.widget(metadata, user_key, result.value)
            return result
        save_element_message._explorer = True   # wrapped: the next call returns at once
        _caching.save_element_message, _caching.save_block_message = save_element_message, save_block_message
        _caching.save_media_data, SessionState.register_widget = save_media_data, register_widget


# ---------------------------------------------------------------------------------------------- drawing again
def root_containers() -> dict[str, DeltaGenerator]:
    """The process's root containers (main, sidebar, events, bottom) by id: the same objects in every session."""
    roots = get_dg_singleton_instance()
    return {dg._id: dg for dg in (roots.main_dg, roots.sidebar_dg, roots.event_dg, roots.bottom_dg)}


def draw_again(containers: dict[str, DeltaGenerator], message) -> None:
    """Draw a recorded element or block here, in the container it was drawn in; one it makes joins ``containers``."""
    if isinstance(message, BlockMsgData):
        containers[message.returned_dgs_id] = containers[message.id_of_dg_called_on]._block(message.message)
        return
    for data in message.media_data or ():   # media files are this session's again
        Runtime.instance().media_file_mgr.add(data.media, data.mimetype, data.media_id)
    made = containers[message.id_of_dg_called_on]._enqueue(message.delta_type, message.message,
                                                            layout_config=message.layout_config)
    if isinstance(made, DeltaGenerator):
        containers[message.returned_dgs_id] = made


def register_again(ctx: _run_context.ScriptRunContext, metadata, user_key: str | None, value, testing: tuple) -> None:
    """Register a recorded widget in this run with its recorded value: the widget shown is this session's."""
    if metadata.id in ctx.shared.widget_ids_this_run:   # registered twice in the recorded run: once here
        return
    if user_key:   # its value first (a widget's state is not set once it exists in the run)
        if "trigger" not in metadata.value_type:   # a button's press is never carried over
            ctx.session_state[user_key] = value
        ctx.shared.widget_user_keys_this_run.check_and_add(user_key)
    ctx.shared.widget_ids_this_run.check_and_add(metadata.id)
    register_widget_from_metadata(metadata, ctx)
    for widget_id, saved in testing:
        save_for_app_testing(ctx, widget_id, saved)


def reuse_hashes(replaying: Callable[[], tuple[dict, object] | None]) -> None:
    """Wrap ``populate_hash_if_needed`` once: while ``replaying()`` names (a recording's hashes, the recorded message
    being enqueued), a delta takes the hash its first replay computed (a fragment's, whose id is hashed, does not)."""
    with _WRAPPED:
        if getattr(_run_context.populate_hash_if_needed, "_explorer", False):
            return
        populate = _run_context.populate_hash_if_needed

        def populate_hash_if_needed(msg) -> None:
            hashes, source = replaying() or (None, None)
            if source is None or msg.hash or msg.WhichOneof("type") != "delta" or msg.delta.fragment_id:
                return populate(msg)
            if id(source) not in hashes:
                populate(msg)
                hashes[id(source)] = (msg.hash, msg.metadata.cacheable)
            msg.hash, msg.metadata.cacheable = hashes[id(source)]
        populate_hash_if_needed._explorer = True
        _run_context.populate_hash_if_needed = populate_hash_if_needed


@contextlib.contextmanager
def one_handoff(ctx: _run_context.ScriptRunContext) -> Iterator[None]:
    """Inside, what this run enqueues is handed to its session's event loop in one call at the end, in order, while
    the run's script runner is still the session's (as ``AppSession`` does a message). Under AppTest: as usual."""
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
