"""Class questions as Peer Instruction rounds: students vote alone, nobody sees the counts until the teacher shows
them, the class may discuss and vote again, and the reveal shows both rounds and the right answer.

A question's poll moves through these states (``round``, ``state``):

    (1, open) --show--> (1, shown) --again--> (2, open) --show--> (2, revealed)
        any state --reveal--> (its round, revealed)

Votes go to the open round only (one per student and round; a new vote replaces the student's earlier one in that
round); a round's counts may be shown once it is closed. Round 1's votes stay apart from round 2's. The teacher
also stores the question's text, options and right answer with the room (``ask``), for the report; a student's
recap shows the right answer only once it is revealed. This mixin holds the public calls of
:class:`explorer.classroom.store.ClassroomStore`; each backend makes them atomic (``_teacher_write`` ops ``ask``,
``show``, ``again``, ``reveal``, and ``_answer``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from explorer.words.i18n import _

from .errors import AlreadyRevealed, BadInput
from .ids import check_id, clock, normalise_code

OPEN, SHOWN, REVEALED = "open", "shown", "revealed"
ROUNDS = 2   # a first vote, and one more after the class has discussed
ASKED_MAX = 16_000   # longest stored question (prompt, options, right answer), in characters of JSON


_OPTION_VOTE = re.compile(r"#(\d{1,3})")


def vote_of(options: Sequence[str], answer: str) -> str:
    """An answer as the store keeps it: an option by its place in the question, "#0", "#1", … (the same place in
    every language, so a vote cast in German and one cast in Spanish count as one option), a typed word as typed
    (one that reads like an option's place is kept apart by a full-width "＃")."""
    if answer in options:
        return f"#{list(options).index(answer)}"
    return "＃" + answer[1:] if _OPTION_VOTE.fullmatch(answer) else answer


def option_index(vote: str, options: Sequence[str]) -> int | None:
    """The place of the option a stored vote names, or None for a typed word. A vote stored before options were
    kept by place (its text) still names the option with that text."""
    found = _OPTION_VOTE.fullmatch(vote)
    if found:
        return int(found.group(1)) if not options or int(found.group(1)) < len(options) else None
    return list(options).index(vote) if vote in options else None


def answer_text(vote: str, options: Sequence[str]) -> str:
    """A stored vote as it reads with the question's ``options`` (in the reader's language): the option, or the
    typed word; "option 3" when the question's options were never stored."""
    index = option_index(vote, options)
    if index is None:
        return vote
    return options[index] if index < len(options) else _("option {n}").format(n=index + 1)


def counts_by_text(counts: Mapping[str, int], options: Sequence[str]) -> dict[str, int]:
    """The store's counts (option places and typed words) keyed by what they read with ``options``: one option's
    votes counted once, whatever language each was cast in."""
    merged: dict[str, int] = {}
    for vote, n in counts.items():
        text = answer_text(vote, options)
        merged[text] = merged.get(text, 0) + int(n)
    return merged


class RoundClosed(AlreadyRevealed):
    """The teacher closed this round (its answers are shown, or a new round began): votes can no longer change."""


def round_closed_error() -> RoundClosed:
    return RoundClosed(_("This round of votes is closed: your answer can no longer change."))


@dataclass(frozen=True)
class Progress:
    """Where a question's poll stands: its round, the round's state and how many students voted in that round."""

    round: int = 1
    state: str = OPEN
    answered: int = 0

    @property
    def open(self) -> bool:
        """Votes are being taken (counts hidden from everyone)."""
        return self.state == OPEN

    @property
    def revealed(self) -> bool:
        """The right answer and every round's counts are shown; nothing can change any more."""
        return self.state == REVEALED

    @property
    def shown_rounds(self) -> tuple[int, ...]:
        """The rounds whose counts may be shown: every closed round."""
        return tuple(range(1, self.round if self.open else self.round + 1))


@dataclass(frozen=True)
class Asked:
    """A question as the teacher's page showed it, with its poll's state. ``prompt`` is the page's markdown (show
    it as literal text); ``correct`` is None for a question the teacher's page never stored (a vote came first);
    ``also``: the other options the page treats as equally right (a near-tie)."""

    qid: str
    prompt: str
    options: tuple[str, ...]
    correct: str | None
    typed: bool
    round: int
    state: str
    also: tuple[str, ...] = ()

    @property
    def rights(self) -> tuple[str, ...]:
        """Every right answer (none when the page never stored one)."""
        return () if self.correct is None else (self.correct, *self.also)

    @property
    def progress(self) -> Progress:
        return Progress(self.round, self.state)


def next_state(op: str, round_: int, state: str, expected: int | None) -> tuple[int, str]:
    """The poll's (round, state) after the teacher's ``op`` (show | again | reveal) from (``round_``, ``state``).
    ``expected``: the round the teacher's screen showed; a click from a stale screen (another tab moved the poll
    on) changes nothing. The Redis backend's Lua script (``_POLL``) mirrors this function."""
    if state == REVEALED or (expected is not None and expected != round_ and op != "reveal"):
        return round_, state
    if op == "reveal":
        return round_, REVEALED
    if op == "show" and state == OPEN:
        return round_, REVEALED if round_ >= ROUNDS else SHOWN
    if op == "again" and state == SHOWN and round_ < ROUNDS:
        return round_ + 1, OPEN
    return round_, state


def dump_asked(prompt: object, options: object, correct: object, typed: object, also: object = ()) -> str:
    """A question as stored: canonical JSON; BadInput unless it is text, a list of texts and one of them (``also``:
    other options as right, stored only when there are any)."""
    if not isinstance(prompt, str) or not isinstance(options, (list, tuple)) or not options \
            or not all(isinstance(o, str) and o for o in options) or correct not in options \
            or not isinstance(also, (list, tuple)) or any(a not in options for a in also):
        raise BadInput("A class question needs a text, its options (texts) and its right answer among them.")
    data = {"prompt": prompt, "options": list(options), "correct": correct, "typed": bool(typed)}
    if also:
        data["also"] = list(also)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    if len(text) > ASKED_MAX:
        raise BadInput("This class question is too long to store with the room.")
    return text


def load_asked(qid: str, text: str | None, round_: int, state: str) -> Asked:
    """The stored JSON (or None: never stored) -> Asked; a question never stored reads as its id, no options."""
    data = json.loads(text) if text else {}
    return Asked(qid, str(data.get("prompt", qid)), tuple(data.get("options", ())), data.get("correct"),
                 bool(data.get("typed", False)), int(round_), str(state), tuple(data.get("also", ())))


def check_round(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= ROUNDS:
        raise BadInput(f"A round is a whole number from 1 to {ROUNDS}.")
    return value


class Polls:
    """The class-question calls of :class:`explorer.classroom.store.ClassroomStore` (a mixin: it needs the store's
    ``_teacher`` check, ``_teacher_write`` and the backend's poll reads)."""

    # ------------------------------------------------------------------------------------------- teacher
    def ask(self, code: str, key: str, question_id: str, prompt: str, options, correct: str, typed: bool = False,
            now: float | None = None, also=()) -> None:
        """Store the question as the teacher's page shows it (text, options, right answer and ``also`` the others
        as right), for the report. It replaces the one stored before while round 1 is open (a control moved), and is
        kept as it was once a round has closed. Followers need not rerun: the version stays."""
        qid, now = check_id(question_id, "question id"), clock(now)
        text = dump_asked(prompt, options, correct, typed, also)
        self._teacher_write(self._teacher(code, key, now), key, now, "ask", json.dumps([qid, text]))

    def show(self, code: str, key: str, question_id: str, now: float | None = None, *, round: int | None = None
             ) -> int:
        """Close the open round and show its counts (round 1), or reveal everything (the last round) -> the new
        version. ``round``: the round the teacher's screen showed (a stale click changes nothing)."""
        return self._poll_write("show", code, key, question_id, round, now)

    def again(self, code: str, key: str, question_id: str, now: float | None = None, *, round: int | None = None
              ) -> int:
        """After round 1's counts were shown, open round 2 (round 1's votes stay as they were) -> new version."""
        return self._poll_write("again", code, key, question_id, round, now)

    def reveal(self, code: str, key: str, question_id: str, now: float | None = None, *, round: int | None = None
               ) -> int:
        """Reveal the right answer and every round's counts -> new version; no vote can change any more."""
        return self._poll_write("reveal", code, key, question_id, round, now)

    def _poll_write(self, op: str, code: str, key: str, question_id: str, round_: int | None, now) -> int:
        qid, now = check_id(question_id, "question id"), clock(now)
        expected = None if round_ is None else check_round(round_)
        return self._teacher_write(self._teacher(code, key, now), key, now, op, json.dumps([qid, expected]))

    # ------------------------------------------------------------------------------------------- everyone
    def progress(self, code: str, question_id: str, now: float | None = None) -> Progress:
        """The poll's round, state and how many voted in that round (one read: the teacher's watch calls it)."""
        return Progress(*self._poll(normalise_code(code), check_id(question_id, "question id"), clock(now)))

    def answer(self, code: str, question_id: str, student: str, option: str, now: float | None = None) -> int:
        """Record (or replace) a joined student's vote in the open round -> that round. AlreadyRevealed once the
        question is revealed; RoundClosed (one of them) while the round's counts are shown."""
        args = check_id(question_id, "question id"), check_id(student, "student id"), check_id(option, "answer")
        return self._answer(normalise_code(code), *args, clock(now))

    def counts(self, code: str, question_id: str, round: int | None = None, now: float | None = None
               ) -> dict[str, int]:
        """option -> number of students who chose it in ``round`` (None: the poll's current round); no names."""
        qid, round_ = check_id(question_id, "question id"), None if round is None else check_round(round)
        return self._counts(normalise_code(code), qid, round_, clock(now))

    def my_answer(self, code: str, question_id: str, student: str, round: int | None = None,
                  now: float | None = None) -> str | None:
        """``student``'s vote in ``round`` (None: the poll's current round), or None."""
        qid, sid = check_id(question_id, "question id"), check_id(student, "student id")
        return self._my_answer(normalise_code(code), qid, sid, None if round is None else check_round(round),
                               clock(now))

    def my_answers(self, code: str, student: str, now: float | None = None) -> dict[str, dict[int, str]]:
        """question id -> {round: option} of every vote ``student`` cast in the room (their recap)."""
        mine: dict[str, dict[int, str]] = {}
        for qid, round_, option in self._my_answers(normalise_code(code), check_id(student, "student id"),
                                                    clock(now)):
            mine.setdefault(qid, {})[int(round_)] = option
        return mine

    def questions(self, code: str, now: float | None = None) -> list[Asked]:
        """Every question of the room (asked by the teacher's page, or voted on), in the order they first came."""
        return [load_asked(qid, text, round_, state) for qid, round_, state, text in
                self._questions(normalise_code(code), clock(now))]

    def revealed(self, code: str, now: float | None = None) -> frozenset[str]:
        """The ids of the questions whose answers are revealed."""
        return frozenset(q.qid for q in self.questions(code, now) if q.state == REVEALED)
