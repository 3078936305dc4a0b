"""The labs of "Attention in 20 minutes" open on experiments the server prepared while the class was on the step
before (explorer.ui.prefetch.PLANS): after the preparation, each page's first view computes none of them again.
Checked by replacing each experiment with one that fails once the preparation has run: the page still draws."""
from __future__ import annotations

import dataclasses

import pytest
import streamlit as st
from pagetest import open_page

from explorer import maths
from explorer.labs import blocks, real_model
from explorer.lessons import catalogue
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.ui import cached, prefetch

LAB_EXPERIMENTS = {   # page -> the computations its first view would otherwise run
    "pages/lab_softmax.py": [(maths, "saturation_curves"), (maths, "score_std"), (maths, "saturation_stats"),
                             (real_model, "head_scores")],
    "pages/lab_permutation.py": [(real_model, "permutation_demo")],
    "pages/lab_masks.py": [(blocks, "padding_experiment")],
}


def _lesson_one():
    return next(x for x in catalogue({})[0] if x.source == "app:1-attention-in-20-minutes")


@pytest.mark.parametrize("page", sorted(LAB_EXPERIMENTS))
def test_a_prepared_lab_step_computes_nothing_on_its_first_view(page, monkeypatch):
    lesson = _lesson_one()
    index = next(i for i, step in enumerate(lesson.steps) if step.page == page)
    lesson = dataclasses.replace(lesson, source=f"test:prepared-{page}")   # a key no other test prepared
    st.cache_data.clear()   # nothing an earlier test computed counts
    cached.result_cache().clear()
    prefetch.next_step(lesson, index - 1)   # the class is on the step before
    job = prefetch.PREPARED.peek((lesson.source, index))
    assert job is not None and job.done.wait(300) and job.error is None

    def refuse(*_args, **_kwargs):
        raise AssertionError("computed again after the preparation")
    for module, name in LAB_EXPERIMENTS[page]:
        monkeypatch.setattr(module, name, refuse)
    at = open_page(page)   # raises nothing: every experiment was found prepared
    assert at.metric or at.markdown
    if page == "pages/lab_masks.py":   # its first section's sentence, in both models, was prepared too
        sentence = at.text_input[0].value
        assert all(cached.result_cache().peek((model, sentence, None)) is not None
                   for model in (EMBEDDED_ENCODER, EMBEDDED_DECODER))


def test_a_followers_run_prepares_the_next_step_unless_prepared_or_last(monkeypatch):
    lesson = _lesson_one()
    asked = []
    monkeypatch.setattr(prefetch, "next_step", lambda found, index: asked.append((found.source, index)))
    monkeypatch.setattr(prefetch.PREPARED, "peek", lambda key: None)   # not prepared yet, whatever ran before
    where = {"source": lesson.source, "step": 2, "n": len(lesson.steps)}
    prefetch.follow(where)
    assert asked == [(lesson.source, 2)]
    prefetch.follow({**where, "step": len(lesson.steps) - 1})   # the last step: nothing after it
    prefetch.follow({"step": "2"})                               # malformed: nothing
    monkeypatch.setattr(prefetch.PREPARED, "peek", lambda key: object())
    prefetch.follow({**where, "step": 3})                        # already prepared: not asked again
    assert asked == [(lesson.source, 2)]


def test_every_plan_is_named_by_one_row_of_the_table_of_pages():
    from explorer.sitemap.table import PAGES
    named = [page.prepare for page in PAGES.values() if page.prepare]
    assert sorted(named) == sorted(prefetch.PLANS)
