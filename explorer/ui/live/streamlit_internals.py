"""The private Streamlit parts the classroom's runs need: the running script, its pages, stops and server-started
reruns. A Streamlit upgrade that moves one of these breaks the live classroom, not a page: so no module but this
one, :mod:`explorer.ui.live.page_recorder`, :mod:`explorer.ui.live.page_replay` and the contract that lists them
all (:mod:`explorer.ui.live.streamlit_contract`, whose ``problems`` checks each by name and signature) names them
(tests/unit/test_streamlit_internals.py fails if another module of explorer/, pages/, bench/ or app.py does, but
for its two named exceptions in bench/).

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
"""
from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from pathlib import Path

from streamlit.navigation.page import StreamlitPage
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    SCRIPT_RUN_CONTEXT_ATTR_NAME,
    ScriptRunContext,
    get_script_run_ctx,
)

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
