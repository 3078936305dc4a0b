"""Homework: a lesson each student runs alone, at their own pace, with answers that reach the class's report.

A homework is a room (``explorer.classroom.store``) whose view names a lesson instead of the teacher's page:
``{"homework": {"source", "title", "steps"}}``. The teacher sets it with every step's question stored (``ask``, as
the teacher's page stores a live question), so the report knows each prompt, option and right answer; the link
and code are the room's. A student joins (a nickname is optional), runs the steps alone, and votes once per
question: one round, the answer shown to them right after their vote. A second vote on the same question (the
same student id, another device, a reload) is refused with :class:`AlreadyAnswered`, as a live poll refuses a vote
once the student's round is closed: a vote cast before the answer was seen stays. Their furthest step and whether
they finished are kept too, so the report says how many started and finished. Ending the homework closes the room:
every answer goes, and a link or code opened after that gets NoSuchRoom (``ended_error``'s sentence).

A homework may ask for a sentence too (``sentence_prompt``): the room's sentence round
(``explorer.classroom.sentences``) opens with the homework and stays open while it runs, so each student writes
one sentence (and may change it) whenever they get to it; the teacher sees them with the nicknames, may hide any,
and the report holds the ones not hidden. They go with the homework, as its answers do.

This mixin holds the public calls; each backend makes ``_homework_answer`` and ``_homework_step`` atomic (the
SQLite store in one ``BEGIN IMMEDIATE``, the Redis store in one Lua script, ``redis_scripts.HOMEWORK``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from explorer.words.i18n import _

from .errors import BadInput, ClassroomError, NoSuchRoom
from .ids import check_id, clock, normalise_code
from .polls import option_index
from .sentences import PROMPT_MAX, clean_sentence

HOMEWORK = "homework"   # the view's key that makes a room a homework
STEPS_MAX = 60


class AlreadyAnswered(ClassroomError):
    """This student has voted on this homework question: the first vote counts."""


def already_answered_error() -> AlreadyAnswered:
    return AlreadyAnswered(_("You have already answered this question: your first answer counts."))


def ended_error() -> NoSuchRoom:
    return NoSuchRoom(_("This homework has ended: your teacher closed it, and its answers are gone. Ask your teacher "
                      "for a new link if you still need it."))


def not_homework_error() -> BadInput:
    return BadInput(_("This code is for a live class, not homework: join it on the Classroom page."))


def unknown_question_error() -> BadInput:
    return BadInput(_("This is not a question of this homework, or not one of its options."))


@dataclass(frozen=True)
class HomeworkInfo:
    """What a homework runs: the lesson's ``source`` (``explorer.lessons.folders.find``), ``title`` and ``steps``."""
    code: str
    source: str
    title: str
    steps: int


@dataclass(frozen=True)
class HomeworkProgress:
    """How many students ``started`` (joined) and ``finished`` (reached the end), for the report."""
    started: int
    finished: int


class Homework:
    """The homework calls of :class:`explorer.classroom.store.ClassroomStore` (a mixin: it needs the store's
    ``create_room``, ``set_view``, ``ask``, ``view``, ``roster`` and the backend's homework writes)."""

    # ------------------------------------------------------------------------------------------- teacher
    def set_homework(self, source: str, title: str, questions, now: float | None = None, *, steps: int,
                     sentence_prompt: str = "") -> tuple[str, str]:
        """A new homework room for a lesson of ``steps`` steps -> (code, teacher key). ``questions``: (question id,
        prompt, options, right answer[, the other right answers]) of each step that asks one, stored before any
        student comes;
        ``sentence_prompt``: what each student's sentence should be about ("" asks for none; BadInput when it is
        too long or holds a control character, checked before the room is made)."""
        if not isinstance(source, str) or not source or not isinstance(title, str) or not title:
            raise BadInput("A homework needs its lesson.")
        if not isinstance(steps, int) or not 1 <= steps <= STEPS_MAX:
            raise BadInput(f"A homework has 1 to {STEPS_MAX} steps.")
        prompt = clean_sentence(sentence_prompt, PROMPT_MAX, "prompt") if (sentence_prompt or "").strip() else ""
        now = clock(now)
        code, key = self.create_room(now)
        self.set_view(code, key, {HOMEWORK: {"source": source, "title": title, "steps": steps}}, now)
        for qid, prompt_, options, correct, *also in questions:   # also: the other right answers (a near-tie)
            self.ask(code, key, qid, prompt_, list(options), correct, now=now, also=tuple(also[0]) if also else ())
        if prompt:
            self.open_sentences(code, key, prompt, now)
        return code, key

    def homework_progress(self, code: str, key: str, now: float | None = None) -> HomeworkProgress:
        """How many students started and finished (teacher only)."""
        now = clock(now)
        started = len(self.roster(code, key, now))
        return HomeworkProgress(started, self._homework_finished(normalise_code(code), now))

    # ------------------------------------------------------------------------------------------- everyone
    def homework(self, code: str, now: float | None = None) -> HomeworkInfo | None:
        """The homework of this room; None when the room is a live class. NoSuchRoom (``ended_error``) when there
        is no such room (ended, expired, or a code never given)."""
        room = normalise_code(code)
        try:
            _version, view = self.view(room, now)
        except NoSuchRoom as err:
            raise ended_error() from err
        found = view.get(HOMEWORK)
        if not isinstance(found, dict):
            return None
        return HomeworkInfo(room, str(found.get("source", "")), str(found.get("title", "")), int(found.get("steps", 0)))

    def homework_answer(self, code: str, question_id: str, student: str, option: str,
                        now: float | None = None) -> None:
        """Record a joined student's one vote on a stored question of the homework. AlreadyAnswered for a second
        vote (the first counts); BadInput for a question or option the homework does not have, or a live class's
        room; NoSuchRoom when it has ended."""
        args = check_id(question_id, "question id"), check_id(student, "student id"), check_id(option, "answer")
        try:
            self._homework_answer(normalise_code(code), *args, clock(now))
        except NoSuchRoom as err:
            raise ended_error() from err

    def homework_step(self, code: str, student: str, step: int, finished: bool = False,
                      now: float | None = None) -> None:
        """Keep how far ``student`` got: the furthest ``step`` (from 0) and, once true, ``finished``."""
        if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < STEPS_MAX:
            raise BadInput(f"A step is a whole number from 0 to {STEPS_MAX - 1}.")
        try:
            self._homework_step(normalise_code(code), check_id(student, "student id"), step, bool(finished),
                                clock(now))
        except NoSuchRoom as err:
            raise ended_error() from err

    def homework_place(self, code: str, student: str, now: float | None = None) -> tuple[int, bool]:
        """(furthest step, finished) of ``student``; (0, False) before their first step is kept."""
        return self._homework_place(normalise_code(code), check_id(student, "student id"), clock(now))


def allowed(asked_json: str | None, option: str) -> bool:
    """Whether ``option`` may be voted on the stored question (``polls.dump_asked``'s JSON): one of its options, or
    any text for a typed question; never for a question never stored."""
    if not asked_json:
        return False
    data = json.loads(asked_json)
    return bool(data.get("typed")) or option_index(option, data.get("options", ())) is not None
