"""A running lesson's place, as plain data kept in the room's shared view (``ClassroomStore.set_view``), so it lives
in the store (SQLite or Redis) with the page and its parameters: a student who joins mid-lesson reads it with the
page, and a server restarted mid-lesson finds it there. ``resume`` turns it back into the lesson and the step."""
from __future__ import annotations

import os
from collections.abc import Mapping

from explorer.labs.quiz import Question

from .computed import opens_page
from .files import LessonError, parse
from .folders import find
from .model import Lesson
from .writing import dump

OWN_MAX = 24_000   # longest own lesson file carried in the room's view (the view holds at most 64,000 characters)


def place(lesson: Lesson, index: int, started: float, step_started: float,
          asked: Question | str | None = None) -> dict:
    """Step ``index`` of ``lesson`` as the room's view carries it: what followers show (step n of N, its title, its
    class question) and what a restarted teacher needs to carry on (where the lesson comes from, the clock).
    ``asked``: a computed step's question as computed on its model, or the sentence shown instead ("note")."""
    step = lesson.steps[index]
    where = {"source": lesson.source, "title": lesson.title, "step": index, "n": len(lesson.steps),
             "step_title": step.title, "page": step.page, "started": started, "step_started": step_started,
             "qid": None, "question": None, "lang": lesson.lang}
    asking = [j for j in range(index, -1, -1) if lesson.steps[j].page_question and lesson.steps[j].page == step.page]
    if asking:   # the step whose page question the page asks now: its class poll (ui/live/class_question.poll_key)
        where["page_poll"] = asking[0]
    if step.question:
        q = step.question
        where["qid"] = lesson.question_id(index)
        where["question"] = {"prompt": q.prompt, "options": list(q.options), "answer": q.answer, "explain": q.explain}
    elif step.computed and isinstance(asked, Question):
        where["qid"] = lesson.question_id(index)
        where["question"] = {"prompt": asked.prompt, "options": list(asked.options), "answer": asked.correct,
                             "explain": asked.reveal}
        if asked.also:   # a near-tie: the other answers as right
            where["question"]["also"] = list(asked.also)
        if opens_page(step):   # the page's run answers it: the page stays open while the class votes
            where["open"] = True
    elif step.computed and isinstance(asked, str):
        where["note"] = asked
    if not lesson.source.startswith(("app:", "dir:")):
        text = dump(lesson)
        if len(text) <= OWN_MAX:
            where["toml"] = text
    return where


def ended(lesson: Lesson, qids: list[str]) -> dict:
    """What the room's view carries once ``lesson`` is finished: its title and the ids of the class questions asked
    during it (``qids``, in order), so that every follower sees the recap of their own answers. It has no step:
    ``resume`` finds nothing to carry on."""
    return {"source": lesson.source, "title": lesson.title, "ended": True, "qids": list(qids)}


def resume(where: object, env: Mapping[str, str] = os.environ) -> tuple[Lesson, int] | None:
    """(lesson, step index) from a view's ``place``, or None when it cannot be found again (a lesson file
    removed or changed to fewer steps, an own lesson too long to carry, anything malformed)."""
    if not isinstance(where, Mapping) or not isinstance(where.get("step"), int):
        return None
    source, index = where.get("source"), where["step"]
    try:
        if isinstance(where.get("toml"), str):
            lesson = parse(where["toml"], "the class's lesson", str(source or "own"))
        elif isinstance(source, str) and source.startswith(("app:", "dir:")):
            lesson = find(source, env)
        else:
            return None
    except LessonError:
        return None
    if lesson is None or not 0 <= index < len(lesson.steps):
        return None
    return lesson, index
