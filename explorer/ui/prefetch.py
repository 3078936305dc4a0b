"""A class that never waits for the next step: while it is on one step of a lesson, the server computes what the
next step's page will need (the attention of its texts, the flip between them, an explanation), once, in a thread
no page owns (``serving.worker.Jobs``). When the teacher presses Next, the page finds its results waiting.

Only the shared, slow parts are prepared, through the same cached functions the pages call (so what is prepared
is exactly what the page reads): a step that names no text, or a page with nothing slow, needs nothing. A
preparation that fails is logged and left to the page, which shows the error as it always does.
"""
from __future__ import annotations

import logging

from explorer.lessons.model import Lesson, Step
from explorer.serving.worker import Jobs
from explorer.ui import cached
from explorer.words.i18n import _

_LOG = logging.getLogger(__name__)
PREPARED = Jobs(16)   # the last steps prepared, by (lesson source, step index)


def _texts(step: Step, *names: str) -> list[tuple[str, str]]:
    model = step.params.get("model")
    return [(model, step.params[n]) for n in names if model and step.params.get(n)]


def _prepare(step: Step) -> None:
    """Compute what ``step``'s page reads first, through the pages' own cached functions."""
    results = [cached.get_attention(model, text) for model, text in _texts(step, "text", "text_b")]
    if step.page == "pages/flip.py" and len(results) == 2 and step.params.get("query") and step.params.get("cands"):
        cached.flip(*results, step.params["query"], step.params["cands"].split(","))
    p = step.params
    cands = [c for c in (p.get("ex_c1"), p.get("ex_c2")) if c]
    if step.page == "pages/explain.py" and p.get("model") and p.get("text") and p.get("ex_query") and len(cands) == 2:
        cached.explanation_job(p["model"], p["text"], p["ex_query"], cands)


def next_step(lesson: Lesson, index: int) -> None:
    """The class is on step ``index``: prepare step ``index + 1`` in the background, once per server."""
    if index + 1 >= len(lesson.steps):
        return
    step = lesson.steps[index + 1]

    def work(progress):
        try:
            _prepare(step)
        except Exception as err:   # the page meets it again and says so
            _LOG.warning("preparing %s step %d failed: %s", lesson.source, index + 2, err)

    PREPARED.run((lesson.source, index + 1), work, _("preparing the next step"))
