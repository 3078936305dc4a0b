"""What every session shares: loaded models (one load per server, in the model worker) and attention results.

Attention results are kept once per (model, text, target) in a byte-bounded store (see ``lru.py``), so thirty
students typing the same example cost one forward pass and memory stays bounded. Every key is a plain value.
A result not yet stored is computed through one bounded fair queue (``fairqueue.py``) shared by all sessions:
each session holds at most one place, a newer edit replaces its waiting one, and the page says how many wait
ahead. ``EXPLORER_FORWARD_WORKERS`` (default 1) forward passes run at once; ``EXPLORER_FORWARD_QUEUE=0``
computes in the page's own thread instead (the old way, kept to measure the difference). The labs' own forward
passes on a student's text (``forward``) take the same queue.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import streamlit as st
import torch

from explorer import maths
from explorer.attention import analysis
from explorer.attention.result import AttentionResult, extract
from explorer.attribution.explain import explain
from explorer.examples import EXAMPLES
from explorer.jobs import keepers
from explorer.jobs.worker import Job, ModelWorker
from explorer.labs import blocks, real_model
from explorer.labs.quiz import Question
from explorer.lessons import computed
from explorer.lessons.model import Lesson
from explorer.model import registry
from explorer.model.loading import LoadedModel, log
from explorer.serving import process, regions
from explorer.serving.cache import ByteLRU
from explorer.serving.fairqueue import FairQueue, QueueFull, Replaced
from explorer.serving.regions import remembered
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.text import literal
from explorer.words import i18n
from explorer.words.i18n import N_, _, ngettext

T = TypeVar("T")

# 384 MB by default: with both embedded models loaded (~1.05 GB resident) the server stays near 1.5 GB however
# many texts the sessions send (a 512-token encoder result alone holds ~75 MB of weights).
_results = regions.store("results")   # sized by EXPLORER_RESULT_CACHE_MB (serving/regions.py)
WORKER = ModelWorker(jobs=keepers.jobs("models"))
FORWARDS = FairQueue(workers=max(1, int(os.environ.get("EXPLORER_FORWARD_WORKERS", "1") or 1)),
                     max_waiting=max(1, int(os.environ.get("EXPLORER_FORWARD_MAX_WAITING", "100") or 100)),
                     name="forward")


def get_model(name: str) -> LoadedModel:
    """The loaded model, shared by every session. The load runs in the model worker: a page shows its progress
    while it waits, and a student who leaves the page stops nothing.

    Inside a page, a model that cannot be loaded (unknown id, no network, hub switched off, a weight file that
    fails its sha256) is a warning in the page and the script stops there; elsewhere ModelUnavailable is raised.
    """
    in_page = internals.script_context() is not None
    try:
        job = WORKER.request(name)
        if in_page:
            show_progress(job)
        return job.wait()
    except registry.ModelUnavailable as err:
        if not in_page:
            raise
        st.warning(literal(err))
        st.stop()


def wait_or_stop(job: Job, errors: tuple[type[Exception], ...] = (ValueError,), stop: bool = True):
    """The shared job's value, with its progress bar in the page while it runs (``show_progress``). An error of
    ``errors`` (a text too long, a model without what the page needs) becomes a warning in the page, and the page
    stops there; with ``stop=False`` the error is raised to the caller instead."""
    show_progress(job)
    try:
        return job.wait()
    except errors as err:
        if not stop:
            raise
        st.warning(literal(err))
        st.stop()


def show_progress(job: Job) -> None:
    """A progress bar with the job's own message until the shared job (a load, a sweep) has finished; the job runs
    on if the student leaves the page."""
    if job.done.is_set():
        return
    bar = st.progress(job.fraction, text=literal(job.message))
    while not job.done.wait(0.25):
        bar.progress(job.fraction, text=literal(job.message))
    bar.empty()


def get_attention(name: str, text: str, target: str | None = None) -> AttentionResult:
    """Attention of model ``name`` on ``text``, computed once for all sessions. Treat the result as read-only."""
    loaded = get_model(name)

    def compute() -> AttentionResult:
        try:
            result = extract(loaded, text, target)
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            loaded.model.to("cpu")
            loaded.device = "cpu"
            loaded.notes.append(N_("The GPU ran out of memory: this model now runs on the CPU."))   # shown with _()
            result = extract(loaded, text, target)
        for part in {id(p): p for p in [result, *result.parts.values()]}.values():
            part.weights.setflags(write=False)
        return result

    key = (name, text, target)
    hit = _results.peek(key)
    if hit is not None:
        return hit
    return forward(key, lambda: _results.get_or_compute(key, compute))


@remembered(16 * 2**20, by_identity=(AttentionResult,))
def flip(a: AttentionResult, b: AttentionResult, query: str, candidates: list[str]) -> analysis.FlipResult:
    """``analysis.flip`` of two shared results, once per server (a class on the flip step asks it thirty times);
    read-only, like the results."""
    return analysis.flip(a, b, query, candidates)


@remembered(16 * 2**20, by_identity=(AttentionResult,))
def head_scores(result: AttentionResult, layer: int, head: int):
    """``labs.real_model.head_scores`` (one head rebuilt from the captured queries and keys), once per server."""
    scores = real_model.head_scores(result, layer, head)
    scores.setflags(write=False)
    return scores


EXPLANATIONS = keepers.jobs("explanations")   # "Which words mattered?": tens of seconds each


def explanation_job(model: str, text: str, query: str, cands: list[str]) -> Job:
    """The shared job computing this explanation, started if nobody has asked for it yet (the page waits on it;
    ``ui.prefetch`` starts it while a lesson's class is still on the step before)."""
    loaded = get_model(model)
    return EXPLANATIONS.run((model, text, query, *cands),
                            lambda progress: explain(loaded, text, cands, query, progress=progress),
                            _("explaining the prediction"))


# The labs' shared experiments: one function each, called by the page and by ``ui.prefetch`` (the same key).
@remembered(1 << 20, max_entries=1)
def saturation_curves() -> dict:
    """``maths.saturation_curves()``: seconds of random draws, the same for everyone (shared: read-only)."""
    return maths.saturation_curves()


@remembered(1 << 16, max_entries=len(maths.LOG_DK) + 1)
def score_std(d_k: int) -> float:
    return maths.score_std(d_k)


@remembered(1 << 16, max_entries=len(maths.LOG_DK))
def saturation_stats(d_k: int) -> dict:
    return maths.saturation_stats(d_k)


def permutation_demo(text: str, order: list[int]):
    """The permutation lab's experiment on the embedded encoder, once per (text, order) for the server."""
    return kept(("permutation", text, *order),
                lambda: real_model.permutation_demo(get_model(registry.EMBEDDED_ENCODER), text, order))


def padding_experiment(short: str, long: str):
    """The masks lab's padding experiment on the embedded encoder, once per pair for the server (ValueError for a
    pair it cannot batch)."""
    return kept(("padding", short, long),
                lambda: blocks.padding_experiment(get_model(registry.EMBEDDED_ENCODER), short, long))


def kept(key: tuple, work: Callable[[], T]) -> T:
    """``work()`` (a forward pass on a session's text, such as a lab's experiment) through the fair queue once per
    ``key`` for the whole server, then kept read-only with the attention results: a class that opens the same lab
    step runs it once, not once a student and rerun."""
    hit = _results.peek(key)
    if hit is not None:
        return hit
    return forward(key, lambda: _results.get_or_compute(key, work))


def forward(key: tuple, work: Callable[[], T], lang: str | None = None) -> T:
    """``work()``, a forward pass of a real model on a session's text, through the server's one fair queue:
    one place per session, first come first served, "Waiting for N others…" in the page meanwhile. Sessions that
    ask for the same ``key`` at once share one computation. ``EXPLORER_FORWARD_QUEUE=0`` runs it directly.
    ``lang``: the language its sentences are made in, wherever it runs (then ``key`` holds it); None for work
    whose result is the same in every language (it runs in English in the queue's thread)."""
    if not process.forward_queue_on():
        if lang is None:
            return work()
        with i18n.language(lang):
            return work()
    return _queued(key, work, lang or i18n.SOURCE)


NOTE_EVERY = 0.5   # seconds between looks at a waiting session's place in the queue (its result wakes it at once)


def _queued(key: tuple, work: Callable[[], T], lang: str) -> T:
    """``work()`` run by the shared forward queue for this session; in a page, a note while others go first."""
    ctx = internals.script_context()
    try:
        ticket = FORWARDS.submit(ctx.session_id if ctx else "server", key, work, lang)
    except QueueFull:
        if ctx is None:
            raise
        st.warning(_("The server is busy: too many requests are waiting. Try again in a few seconds."))
        st.stop()
    if ctx is None:            # the preload thread, tests: block
        return ticket.result()
    note, said = None, None
    while True:
        try:
            value = ticket.result(timeout=NOTE_EVERY)
        except TimeoutError:
            ahead = ticket.position()
            text = (ngettext("Waiting for {n} other…", "Waiting for {n} others…", ahead).format(n=ahead) if ahead
                    else _("Computing…"))
            if text != said:   # each caption is a message to the browser, and a full server has many waiting
                note = note or st.empty()
                note.caption(text)
                said = text
            continue
        except Replaced:       # a newer edit of this session took the place; its own run shows the result
            st.stop()
        if note is not None:
            note.empty()
        return value


def _lesson_measure(kind: str, lesson: Lesson, index: int, measure: Callable[[LoadedModel], T],
                    failed: Callable[[str], T]) -> T:
    """``measure(model)`` for step ``index`` of ``lesson``, once per (lesson, step, model, parameters) for the whole
    server, through the fair forward queue; ``failed(why)`` when the model cannot be had or the measure breaks (the
    lesson goes on: nothing is stored, so a later run tries again)."""
    step = lesson.steps[index]
    model = computed.step_model(step)
    lang = i18n.current()   # its sentences are made in the session's language, in whichever thread computes them
    key = (kind, lesson.source, lesson.title, index, step.computed, step.checks, model,
           tuple(sorted(step.params.items())), lang)

    hit = _results.peek(key)
    if hit is not None:
        return hit
    try:
        job = WORKER.request(model)
        if internals.script_context() is not None:
            show_progress(job)
        loaded = job.wait()
        return forward(key, lambda: _results.get_or_compute(key, lambda: measure(loaded)), lang=lang)
    except Exception as err:   # a model that cannot load, a measure that breaks: one sentence, the lesson goes on
        log.warning("lesson %r step %d: %s failed: %s", lesson.title, index + 1, kind, err)
        return failed(str(err) or type(err).__name__)


def lesson_question(lesson: Lesson, index: int) -> Question | str:
    """A computed step's question on its model (``lessons.computed.asked``), or the one sentence shown instead."""
    step = lesson.steps[index]
    return _lesson_measure("lesson-asked", lesson, index, lambda loaded: computed.asked(step, loaded),
                           lambda why: computed.unavailable(step, why))


def lesson_contradiction(lesson: Lesson, index: int) -> str | None:
    """None when the step's model agrees with the claims the step checks; else the sentence saying where not."""
    step = lesson.steps[index]
    if not step.checks:
        return None
    found = _lesson_measure("lesson-check", lesson, index,
                            lambda loaded: computed.contradiction(step, index + 1, loaded) or "",
                            lambda why: _("Step {n}'s claims could not be checked on {model}: {why}").format(
                                n=index + 1, model=computed.step_model(step), why=why))
    return found or None


def result_cache() -> ByteLRU:
    return _results


def preload_names() -> list[str]:
    """Models to load when the server starts: ``EXPLORER_PRELOAD`` (comma-separated names; empty: none),
    by default the embedded encoder, which every page opens with."""
    raw = os.environ.get("EXPLORER_PRELOAD", registry.EMBEDDED_ENCODER)
    return [name.strip() for name in raw.split(",") if name.strip()]


def preload(names: list[str]) -> None:
    """Load ``names`` and their first example before any browser asks (a background thread at server start; a
    session that asks meanwhile waits on the same load). A failure is logged and left for the pages to report."""
    for name in names:
        try:
            get_attention(name, next(iter(EXAMPLES.values())))
        except Exception as err:  # a page shows the same failure to whoever opens it
            log.warning("preloading %s failed: %s", name, err)
