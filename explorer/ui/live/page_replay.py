"""A recording (:mod:`explorer.ui.live.page_recorder`) drawn again in this session: a call's (``replay``, for
:mod:`explorer.ui.drawn_once`) or a whole page's in a follower's session (``replay_page``, for
:mod:`explorer.ui.live.replayed`): its elements, blocks and widgets where the page drew them, its live parts drawn
here. Two parts of Streamlit's own work a message are the same for every follower and done once for the class
(measured, docs/benchmarks.md): a recorded element's message hash is computed at its first replay and reused (a hash
leaves out where the message goes, all a follower's copy changes), and a page replay's messages are handed to the
session's event loop in one call at its end, where each message used to wake the loop on its own. Streamlit's
private parts these rest on are named only in :mod:`explorer.ui.live.streamlit_internals`.
"""
from __future__ import annotations

import contextvars

from explorer.ui.live import streamlit_internals as internals
from explorer.ui.live.page_recorder import LivePart, PageRecording, RecordedWidget, Recording

__all__ = ["replay", "replay_page"]

# the replay under way in this thread: its recording's hashes, and the recorded message being enqueued
_HASHING: contextvars.ContextVar[tuple[dict, object] | None] = contextvars.ContextVar("explorer_hashing",
                                                                                      default=None)


def replay(recording: Recording) -> None:
    """Draw a call's recording in this session, where its ``draw`` would have drawn (the current ``with``
    container, or the page)."""
    containers = internals.root_containers()
    for message in recording.messages:
        internals.draw_again(containers, message)


def replay_page(recording: PageRecording) -> None:
    """Draw a page's recording in this session, where the page would have drawn, its live parts drawn here."""
    internals.reuse_hashes(_HASHING.get)
    ctx = internals.script_context()
    token = _HASHING.set((recording.hashes, None))
    try:
        with internals.one_handoff(ctx):
            _replay(recording, ctx)
    finally:
        _HASHING.reset(token)


def _replay(recording: PageRecording, ctx) -> None:
    containers, hashes = internals.root_containers(), recording.hashes
    for message in recording.messages:
        if isinstance(message, RecordedWidget):   # a widget of this run: its state is kept at the run's end
            internals.register_again(ctx, message.metadata, message.user_key, message.value, message.testing)
        elif isinstance(message, LivePart):
            with containers[message.dg_id]:
                message.draw(*message.args)
        else:
            _HASHING.set((hashes, message))   # the one message this element or block enqueues is this one's
            internals.draw_again(containers, message)
            _HASHING.set((hashes, None))
