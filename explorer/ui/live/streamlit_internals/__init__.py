"""Every private Streamlit name the app uses, in one package (Streamlit is pinned at 1.67.0).

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

from .contract import CONTEXT_FIELDS, SIGNATURES, problems
from .recording import (
    LivePart,
    PageRecording,
    Recording,
    live_part,
    record,
    recording_page,
    replay,
    replay_page,
    unrecorded,
)
from .running import (
    STOPS,
    RerunException,
    Runtime,
    StopException,
    app_session,
    folder_navigation,
    intended_page,
    latest_client_state,
    leave_folder_navigation,
    main_script_path,
    page_file,
    page_hash,
    pages,
    rerun_session,
    resolved,
    run_instead,
    running_as,
    running_page,
    runs_here,
    script_context,
    session_id,
    stops_paused,
)

__all__ = ["CONTEXT_FIELDS", "SIGNATURES", "STOPS", "LivePart", "PageRecording", "Recording", "RerunException",
           "Runtime", "StopException", "app_session", "folder_navigation", "intended_page", "latest_client_state",
           "leave_folder_navigation", "live_part", "main_script_path", "page_file", "page_hash", "pages", "problems",
           "record", "recording_page", "replay", "replay_page", "rerun_session", "resolved", "run_instead",
           "running_as", "running_page", "runs_here", "script_context", "session_id", "stops_paused", "unrecorded"]
