"""A class that never waits for the next step: while it is on one step of a lesson, the server computes what the
next step's page will need (the attention of its texts, the flip between them, an explanation, a lab's
experiment: the ``PLANS`` the table of pages names in each row's ``prepare``), once, in a thread
no page owns (``jobs.worker.Jobs``). When the teacher presses Next, the page finds its results waiting.

Only the shared, slow parts are prepared, through the same cached functions the pages call (so what is prepared
is exactly what the page reads): a step that names no text, or a page with nothing slow, needs nothing. A
preparation that fails is logged and left to the page, which shows the error as it always does.
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import logging
from pathlib import Path

import numpy as np

from explorer.examples import ANIMAL_TIRED
from explorer.jobs import keepers
from explorer.labs import blocks, real_model
from explorer.lessons.model import Lesson, Step
from explorer.lessons.run import resume
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.plots import thumbnails
from explorer.sitemap.table import PAGES
from explorer.ui import cached
from explorer.words.i18n import _

_LOG = logging.getLogger(__name__)
PREPARED = keepers.jobs("prepared")   # the last steps prepared, by (lesson source, step index)


def _texts(step: Step, *names: str) -> list[tuple[str, str]]:
    model = step.params.get("model")
    return [(model, step.params[n]) for n in names if model and step.params.get(n)]


def _flip(p: dict, results: list) -> None:
    if len(results) == 2 and p.get("query") and p.get("cands"):
        cached.flip(*results, p["query"], p["cands"].split(","))


def _explain(p: dict, _results: list) -> None:
    cands = [c for c in (p.get("ex_c1"), p.get("ex_c2")) if c]
    if p.get("model") and p.get("text") and p.get("ex_query") and len(cands) == 2:
        cached.explanation_job(p["model"], p["text"], p["ex_query"], cands)


def _softmax(_p: dict, _results: list) -> None:
    cached.saturation_curves()
    cached.score_std(256)
    cached.saturation_stats(real_model.SOFTMAX_D_K)
    result = cached.get_attention(EMBEDDED_ENCODER, real_model.TEMPERATURE_TEXT)
    cached.head_scores(result, *real_model.TEMPERATURE_HEAD)


def _permutation(_p: dict, _results: list) -> None:
    text = real_model.PERMUTATION_TEXT
    n = len(real_model.content_token_ids(cached.get_model(EMBEDDED_ENCODER), text))
    cached.permutation_demo(text, real_model.first_order(n))


def _masks(_p: dict, _results: list) -> None:
    for model in (EMBEDDED_ENCODER, EMBEDDED_DECODER):   # its first section: the example in both (a decoder load)
        cached.get_attention(model, ANIMAL_TIRED)
    cached.padding_experiment(*blocks.PADDING_PAIR)


def _patch(p: dict, _results: list) -> None:
    """The patching page's shared jobs for the step's ready pair: the preview and each direction's exact run (the
    same jobs, keyed by the same plain values, that the page and lesson 7's questions wait on)."""
    from explorer.lessons import patching_claims
    from explorer.patching import READY, shared
    if p.get("pair", "ioi") not in READY:
        return   # a student's own pair is computed when it is asked for
    pair = READY[p.get("pair", "ioi")]
    loaded = cached.get_model(pair.model)
    level = p.get("pt_level", "residual")
    directions = ("denoise", "noise") if p.get("pt_dir") == "both" else (p.get("pt_dir", "denoise"),)
    for direction in directions:
        shared.preview(loaded, pair, direction)
        patching_claims.exact(loaded, {**p, "pair": p.get("pair", "ioi")}, level, direction)


# A page's slow first view, beyond the attention of the step's texts: what its page computes on opening, by the
# name its row of the table of pages gives in ``prepare``
PLANS = {"flip": _flip, "explain": _explain, "softmax": _softmax, "permutation": _permutation, "masks": _masks,
         "patch": _patch}


def _prepare(step: Step) -> None:
    """Compute what ``step``'s page reads first, through the pages' own cached functions."""
    results = [cached.get_attention(model, text) for model, text in _texts(step, "text", "text_b")]
    page = PAGES.get(step.page)
    if page is not None and page.prepare:
        PLANS[page.prepare](dict(step.params), results)


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


def follow(where: object) -> None:
    """A follower's run on a lesson's step (the view's ``place``): prepare the next step too, so that a replica
    without the teacher's session prepares it as well. Once per server and step; later calls cost a lookup."""
    if not isinstance(where, dict) or not isinstance(where.get("step"), int):
        return
    if not isinstance(where.get("n"), int) or where["step"] + 1 >= where["n"]:
        return   # the last step: nothing comes after it
    if PREPARED.peek((where.get("source"), where["step"] + 1)) is not None:
        return
    found = resume(where)
    if found is not None:
        next_step(*found)


def page_modules(files: list[Path]) -> list[str]:
    """The project's modules that the page files import (read with ``ast``, the pages are not run)."""
    names = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("explorer"):
                names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names += [a.name for a in node.names if a.name.startswith("explorer")]
    return list(dict.fromkeys(names))


def warm(files: list[Path]) -> None:
    """At server start: import what the pages import and load PIL's PNG encoder (the head grids' pictures), so
    that no page's first run in this process pays for them. Measured on the heatmap page: its first run took
    1.66 s against 0.14 s for the next one, a quarter of it imports and a quarter the first PNG."""
    for name in page_modules(files):
        with contextlib.suppress(ImportError):   # "from m import a_function" names no module: m is imported
            importlib.import_module(name)
    thumbnails.png_uri(np.zeros((2, 2), dtype=np.uint8))
