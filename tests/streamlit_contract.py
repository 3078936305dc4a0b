"""The contract with Streamlit's private parts, in one table a reader checks against a new Streamlit release (it is
pinned at 1.67.0): every private name :mod:`explorer.ui.live.streamlit_internals` uses (the one module that names
any), by its owner and the parameters the module passes. ``problems`` checks each against the installed Streamlit,
by name and signature, and inside a real server's session (tests/app/test_streamlit_contract.py) the attributes
Streamlit sets on its live objects. It lives with the tests: only they run it.
"""
from __future__ import annotations

import dataclasses
import inspect
import threading

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
from streamlit.runtime.caching.cached_message_replay import BlockMsgData, ElementMsgData, MediaMsgData
from streamlit.runtime.media_file_manager import MediaFileManager
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

from explorer.ui.live.streamlit_internals import app_session, script_context

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
    "ScriptRunContext.run_with_active_hash": (ScriptRunContext, "run_with_active_hash", ["self", "page_hash"]),
    # recording
    "CachedMessageReplayContext.calling_cached_function": (type(CACHE_RESOURCE_MESSAGE_REPLAY_CTX),
                                                           "calling_cached_function", ["self", "func"]),
    "CachedMessageReplayContext._most_recent_messages": (type(CACHE_RESOURCE_MESSAGE_REPLAY_CTX),
                                                         "_most_recent_messages", None),
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
    "MediaMsgData.__init__": (MediaMsgData, "__init__", ["self", "media", "mimetype", "media_id"]),
    "SessionState.register_widget": (SessionState, "register_widget", ["self", "metadata", "user_key"]),
    "context_dg_stack.get": (type(context_dg_stack), "get", ["self"]),
    # drawing again
    "get_dg_singleton_instance": (None, get_dg_singleton_instance, []),
    "MediaFileManager.add": (MediaFileManager, "add", ["self", "path_or_data", "mimetype", "coordinates", "file_name",
                                                       "is_for_static_download"]),
    "DeltaGenerator._enqueue": (DeltaGenerator, "_enqueue", ["self", "delta_type", "element_proto", "layout_config",
                                                             "has_one_shot_effect", "agent_props"]),
    "register_widget_from_metadata": (None, register_widget_from_metadata, ["metadata", "ctx"]),
    "save_for_app_testing": (None, save_for_app_testing, ["ctx", "k", "v"]),
    "DeltaGenerator._block": (DeltaGenerator, "_block", ["self", "block_proto", "dg_type", "agent_props"]),
    "populate_hash_if_needed": (None, _run_context.populate_hash_if_needed, ["msg"]),
    "ScriptRunContext.enqueue": (ScriptRunContext, "enqueue", ["self", "msg"]),
    "AppSession._enqueue_forward_msg": (AppSession, "_enqueue_forward_msg", ["self", "msg"]),
}
# attributes set on instances, checked on the live objects of a running session (``problems(live=True)``)
CONTEXT_FIELDS = ("session_id", "main_script_path", "query_string", "page_script_hash", "session_state",
                  "pages_manager", "_enqueue", "shared")
# the process's root containers, on the object get_dg_singleton_instance returns
ROOTS = ("main_dg", "sidebar_dg", "event_dg", "bottom_dg")


def _parameters(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def signature_problems(signatures: dict) -> list[str]:
    """Each entry of ``signatures`` (name -> (owner, attribute, parameters)) that the installed Streamlit lacks or
    has changed, one sentence naming it."""
    found = []
    for name, (owner, attr, params) in signatures.items():
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
    return found


def problems(live: bool = False) -> list[str]:
    """Each internal above that the installed Streamlit lacks or has changed, one sentence naming it; [] when all
    hold. ``live=True`` (inside a run of a real ``streamlit run`` server) also checks the attributes Streamlit sets
    on the running session's objects: the app session, its script runner and requests, the session state and
    the script context."""
    found = signature_problems(SIGNATURES)
    for name, stop in (("RerunException", RerunException), ("StopException", StopException)):
        if not issubclass(stop, BaseException):
            found.append(f"{name} is no longer an exception")
    if not isinstance(getattr(ClientState(), "query_string", None), str) or not hasattr(ClientState(),
                                                                                         "page_script_hash"):
        found.append("ClientState.query_string / page_script_hash are missing")
    if not isinstance(getattr(st._main, "_id", None), str) or not isinstance(getattr(st.sidebar, "_id", None), str):
        found.append("st._main._id / st.sidebar._id are missing")
    if not isinstance(TESTING_KEY, str):
        found.append("TESTING_KEY is no longer a session state key")
    roots = get_dg_singleton_instance()
    found += [f"DeltaGeneratorSingleton.{r} is missing" for r in ROOTS if not isinstance(getattr(roots, r, None),
                                                                                          DeltaGenerator)]
    for cls, fields in ((ElementMsgData, ("delta_type", "message", "id_of_dg_called_on", "returned_dgs_id",
                                          "media_data", "layout_config")),
                        (BlockMsgData, ("message", "id_of_dg_called_on", "returned_dgs_id"))):
        names = {f.name for f in dataclasses.fields(cls)}
        found += [f"{cls.__name__}.{f} is missing" for f in fields if f not in names]
    if live:
        found += _live_problems()
    return found


def _live_problems() -> list[str]:
    ctx = script_context()
    if ctx is None:
        return ["get_script_run_ctx found no script run (call problems(live=True) inside a page)"]
    found = [f"ScriptRunContext.{f} is missing" for f in CONTEXT_FIELDS if not hasattr(ctx, f)]
    found += [f"ScriptRunContext.shared.{f} is missing" for f in ("widget_ids_this_run", "widget_user_keys_this_run")
              if not hasattr(getattr(ctx, "shared", None), f)]
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
