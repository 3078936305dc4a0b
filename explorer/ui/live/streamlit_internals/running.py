"""The running script and its session: which page runs, a stop, a rerun the server starts (the fence's first
part; the package's docstring says what each internal is for)."""
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
