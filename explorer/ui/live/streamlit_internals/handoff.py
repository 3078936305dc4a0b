"""A replay's messages, cheaper for the server: each recorded element's hash computed once, and a replay's
messages handed to the session's event loop in one call (the package's docstring says why)."""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator

from streamlit.runtime.scriptrunner_utils import script_run_context as _run_context
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    ScriptRunContext,
)

from .running import app_session

_PATCHED = threading.Lock()
# the replay under way in this thread: its recording's hashes, and the recorded message being enqueued
HASHING: contextvars.ContextVar[tuple[dict, object] | None] = contextvars.ContextVar("explorer_hashing",
                                                                                      default=None)


def wrap_hashing() -> None:
    """Wrap ``populate_hash_if_needed`` once: a replayed element's message takes the hash its first replay
    computed. The hash is of the message without its metadata (Streamlit's own rule), which is all a follower's
    copy changes; a fragment's message (its id is hashed) is hashed as usual."""
    with _PATCHED:
        if getattr(_run_context.populate_hash_if_needed, "_explorer", False):
            return
        populate = _run_context.populate_hash_if_needed

        def populate_hash_if_needed(msg) -> None:
            replaying = HASHING.get()
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
def one_handoff(ctx: ScriptRunContext) -> Iterator[None]:
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


