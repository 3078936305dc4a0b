"""Your own lesson: built while exploring (each view added as a step), edited on the Lessons page, downloaded as a
lesson file and opened again from one. It is kept in the session as plain fields; ``lesson()`` turns them into a
:class:`Lesson` through the lesson file's own checks, so what runs is exactly what a download would hold."""
from __future__ import annotations

import itertools

import streamlit as st

from explorer.lessons import Lesson, LessonError, Step, StepQuestion, dump, parse
from explorer.lessons.files import MAX_STEPS
from explorer.lessons.pages import STEP_PAGES, asks_own, shareable
from explorer.sitemap import table
from explorer.ui.live import membership
from explorer.words.i18n import _, ngettext

OWN, BUILDING, NOTE = "_own_lesson", "_own_building", "_own_note"
FILE = "my-lesson.toml"
_uids = itertools.count(1)


def own() -> dict:
    """The lesson being built: {"title": str, "steps": [fields of each step, with a "uid" for its widgets]}."""
    return st.session_state.setdefault(OWN, {"title": _("My lesson"), "steps": []})


def building() -> bool:
    return bool(st.session_state.get(BUILDING))


def set_building(on: bool) -> None:
    st.session_state[BUILDING] = on


def _fields(step: Step) -> dict:
    q = step.question
    return {"uid": next(_uids), "title": step.title, "page": step.page, "minutes": step.minutes, "notes": step.notes,
            "params": dict(step.params), "page_question": step.page_question,
            "prompt": q.prompt if q else "", "options": "\n".join(q.options) if q else "",
            "answer": q.answer if q else "", "explain": q.explain if q else "",
            "computed": step.computed, "checks": list(step.checks)}   # kept as they are (no editor for them)


def add_current(page: str | None) -> None:
    """Callback: the view on screen (``page``, the page that drew the button, with the URL parameters its last run
    wrote) becomes the last step."""
    steps = own()["steps"]
    if page not in STEP_PAGES:
        st.session_state[NOTE] = _("This page cannot be a lesson step: open one of the model pages or labs first.")
        return
    if len(steps) >= MAX_STEPS:
        st.session_state[NOTE] = _("A lesson has at most {n} steps.").format(n=MAX_STEPS)
        return
    params = shareable(page, st.query_params.to_dict())
    steps.append(_fields(Step(STEP_PAGES[page].title, page, 3.0, "", params, None, asks_own(page, params))))
    st.session_state[NOTE] = _("Added as step {n}: {page}.").format(n=len(steps), page=_(STEP_PAGES[page].title))


def move(uid: int, by: int) -> None:
    steps = own()["steps"]
    at = next(i for i, s in enumerate(steps) if s["uid"] == uid)
    to = min(max(at + by, 0), len(steps) - 1)
    steps.insert(to, steps.pop(at))


def remove(uid: int) -> None:
    own()["steps"][:] = [s for s in own()["steps"] if s["uid"] != uid]


def lesson() -> Lesson:
    """The own lesson, checked as its file would be; LessonError (one message) when something does not fit."""
    fields = own()
    steps = []
    for s in fields["steps"]:
        options = tuple(o.strip() for o in s["options"].splitlines() if o.strip())
        computed = "" if s["page_question"] else s.get("computed", "")
        question = (StepQuestion(s["prompt"], options, s["answer"], s["explain"])
                    if not s["page_question"] and not computed and (s["prompt"].strip() or options) else None)
        steps.append(Step(s["title"], s["page"], float(s["minutes"]), s["notes"], s["params"], question,
                          s["page_question"] and asks_own(s["page"], s["params"]), computed,
                          tuple(s.get("checks", ()))))
    if not steps:
        raise LessonError(FILE, _("has no steps yet: add a view with “Add this view as a step”"), field="step")
    return parse(dump(Lesson(fields["title"], tuple(steps))), FILE, "own")


def load(data: bytes, name: str) -> None:
    """An uploaded lesson file becomes the own lesson (LessonError, and nothing changes, when it does not fit)."""
    found = parse(data, name, "own")
    st.session_state[OWN] = {"title": found.title, "steps": [_fields(s) for s in found.steps]}


def adopt(found: Lesson) -> None:
    """A lesson from the catalogue, copied to be edited as one's own."""
    st.session_state[OWN] = {"title": found.title, "steps": [_fields(s) for s in found.steps]}


def builder_bar() -> None:
    """While building: a slim bar on every page to add the view on screen (drawn by app.py before the page)."""
    if not building() or membership.is_following() or membership.projector():
        return
    n = len(own()["steps"])
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="small", key="own_bar"):
        st.markdown(":material/add: " + ngettext("**Your own lesson**: {n} step", "**Your own lesson**: {n} steps",
                                                 n).format(n=n))
        st.button(_("Add this view as a step"), icon=":material/add:", key="_own_add", on_click=add_current,
                  args=(membership.current_page(),))
        st.page_link(table.LESSONS.file, label=_("Edit it"), icon=":material/edit:")
    message = st.session_state.pop(NOTE, None)
    if message:
        st.caption(message)

