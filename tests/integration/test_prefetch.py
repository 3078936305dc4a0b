"""While a class is on one step of a lesson, the server prepares the next step (explorer.ui.prefetch): the page then
finds its slow parts computed. Checked on the embedded encoder with the app's first lesson."""
from __future__ import annotations

import dataclasses

from explorer.lessons import catalogue
from explorer.ui import cached, prefetch


def lesson_one():
    return next(x for x in catalogue({})[0] if x.source == "app:1-attention-in-20-minutes")


def test_the_next_steps_texts_and_flip_are_ready_before_the_teacher_presses_next():
    lesson = dataclasses.replace(lesson_one(), source="test:prepared")   # a source no other test prepares
    flip_step = lesson.steps[1]
    assert flip_step.page == "pages/flip.py"
    p = flip_step.params
    cached.result_cache().clear()
    cached.flip.memo.clear()
    prefetch.next_step(lesson, 0)   # the class is on step 1
    job = prefetch.PREPARED.peek((lesson.source, 1))
    assert job is not None and job.done.wait(120)
    a = cached.result_cache().peek((p["model"], p["text"], None))
    b = cached.result_cache().peek((p["model"], p["text_b"], None))
    assert a is not None and b is not None   # both sentences' attention, computed once, waiting for the page
    hits = cached.flip.memo.hits
    cached.flip(a, b, p["query"], p["cands"].split(","))
    assert cached.flip.memo.hits == hits + 1   # the page's flip is the prepared one


def test_the_last_step_prepares_nothing_and_a_bad_step_only_logs(caplog):
    lesson = lesson_one()
    before = set(prefetch.PREPARED.keys())
    prefetch.next_step(lesson, len(lesson.steps) - 1)
    assert set(prefetch.PREPARED.keys()) == before
    broken = dataclasses.replace(lesson, source="test:broken", steps=(
        lesson.steps[0], dataclasses.replace(lesson.steps[0], params={**lesson.steps[0].params,
                                                                      "model": "no-such/model-xyz"})))
    prefetch.next_step(broken, 0)
    job = prefetch.PREPARED.peek(("test:broken", 1))
    assert job.done.wait(60) and job.error is None   # logged, not raised: the page says it as it always does
    assert any("preparing test:broken step 2 failed" in r.getMessage() for r in caplog.records)
