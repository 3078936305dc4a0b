"""A recorded page drawn again in a follower's session (:mod:`explorer.ui.live.replayed`): its elements, blocks and
widgets where the page drew them, its live parts drawn here, Streamlit's own work per message done once for the
class. One of the three modules that name Streamlit's private parts (with :mod:`explorer.ui.live.streamlit_internals`
and :mod:`explorer.ui.live.page_recorder`); :mod:`explorer.ui.live.streamlit_contract` lists and checks each.

What is used, what for, and why no public API serves:

- ``populate_hash_if_needed`` (wrapped, as the three above) and the script context's ``_enqueue`` with the app
  session's ``_enqueue_forward_msg``: what a replay costs a follower is Streamlit's own work a message, and two
  parts of it are the same for every follower (measured, docs/benchmarks.md). A message's hash leaves its metadata
  (where it goes) out, so a recorded element's is computed at its first replay and reused (``replay_page``); and a
  replay's messages are handed to the session's event loop in one call at its end (``_one_handoff``), where each
  message used to wake the loop on its own. No public API enqueues messages.


- ``register_widget_from_metadata``, ``save_for_app_testing`` and a DeltaGenerator's ``_enqueue`` and ``_block``:
  a recorded widget is registered again in the replaying session with its recorded value, and each element and
  block is enqueued where the page drew it, as ``replay_cached_messages`` does for a cached function.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator

from streamlit.delta_generator import DeltaGenerator
from streamlit.delta_generator_singletons import get_dg_singleton_instance
from streamlit.elements.lib.utils import save_for_app_testing
from streamlit.runtime import Runtime
from streamlit.runtime.caching.cached_message_replay import ElementMsgData
from streamlit.runtime.scriptrunner_utils import script_run_context as _run_context
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.runtime.state.widgets import register_widget_from_metadata

from explorer.ui.live.page_recorder import LivePart, PageRecording, RecordedWidget
from explorer.ui.live.streamlit_internals import app_session, script_context

__all__ = ["replay_page"]

_PATCHED = threading.Lock()


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
        if isinstance(msg, RecordedWidget):   # a widget of this run: its state is kept at the run's end
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
