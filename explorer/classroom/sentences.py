"""The class's own sentences: the teacher asks for one sentence per student, the class looks at one head across them.

A room holds one sentence round at a time (``open_sentences`` starts a new one; the earlier round's sentences go):

    (none) --open--> open --close--> closed --show--> shown      (show also closes an open round)

While the round is open every joined student may write one sentence and change it (``write_sentence``: the newest
text replaces the student's earlier one, which keeps its place in the order the sentences first came). The teacher
sees every sentence with its writer (``sentences``: nicknames stay with the teacher) and may hide any: a hidden
sentence never reaches the projector (``class_sentences``), the figure or the report, and its writer cannot write
another in this round. Showing stores the figure's settings (model, layer, head, word) with the round, so every
follower draws the same figure. Everything goes with the room (``close``, ``expire``), as votes do.

This mixin holds the public calls of :class:`explorer.classroom.store.ClassroomStore`; each backend makes
``_sentence_write`` atomic (SQLite: one ``BEGIN IMMEDIATE``; Redis: one Lua script, ``redis_scripts.SENTENCES``).
"""
from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from explorer.words.i18n import _, ngettext

from .errors import BadInput, ClassroomError
from .ids import check_id, clock, normalise_code

SENTENCE_MAX = 300   # characters of one student's sentence
PROMPT_MAX = 300   # characters of the teacher's prompt
FIGURE_MAX = 2_000   # characters of the shown figure's settings, as JSON
OPEN, CLOSED, SHOWN = "open", "closed", "shown"
_LINE_BREAKS = "\n\r\t\v\f\u2028\u2029\x85"   # read as spaces: a pasted sentence may hold them


class SentencesClosed(ClassroomError):
    """No sentence round is open: the teacher has not asked yet, or closed it."""


class SentenceHidden(ClassroomError, PermissionError):
    """The teacher hid this student's sentence: it stays hidden for the round."""


def closed_error() -> SentencesClosed:
    return SentencesClosed(_("Your teacher is not collecting sentences now: yours can no longer change."))


def hidden_error() -> SentenceHidden:
    return SentenceHidden(_("Your teacher has set your sentence aside for this round."))


def wrote_count(wrote: int, students: int) -> str:
    """"**3 of 25** students wrote one": the verb agrees with how many wrote, not with the class ("1 von 25 hat",
    "2 de 25 han")."""
    return ngettext("**{n} of {m}** students wrote one", "**{n} of {m}** students wrote one", wrote).format(
        n=wrote, m=students)


def clean_sentence(text: object, most: int = SENTENCE_MAX, what: str = "sentence") -> str:
    """A sentence as stored: line breaks and tabs read as spaces, stripped; BadInput (one sentence to show) when it
    is empty, only spaces, longer than ``most`` characters, or holds another control character."""
    if not isinstance(text, str) or not text.strip():
        raise BadInput(_("Please write a sentence first.") if what == "sentence" else
                       _("Please write what the students should write about."))
    text = "".join(" " if ch in _LINE_BREAKS else ch for ch in text).strip()
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text):
        raise BadInput(_("Your text holds a control character; please type it again as plain text."))
    if len(text) > most:
        raise BadInput(_("Please keep it to {n} characters; this one has {m}.").format(n=most, m=len(text)))
    return text


@dataclass(frozen=True)
class SentenceRound:
    """The room's sentence round: ``number`` (0: none asked yet), the teacher's ``prompt``, its ``state`` ('' when
    none, open, closed, shown), the ``figure`` settings stored when shown, and how many students ``wrote``."""
    number: int = 0
    prompt: str = ""
    state: str = ""
    figure: Mapping | None = None
    wrote: int = 0

    @property
    def open(self) -> bool:
        return self.state == OPEN


@dataclass(frozen=True)
class Sentence:
    """One student's sentence, for the teacher: who wrote it, the text, and whether the teacher hid it."""
    student: str
    text: str
    hidden: bool


@dataclass(frozen=True)
class MySentence:
    """A student's own sentence: the text, whether it was hidden, and its ``number`` among the shown ones (from 1;
    None when hidden)."""
    text: str
    hidden: bool
    number: int | None


class Sentences:
    """The sentence calls of :class:`explorer.classroom.store.ClassroomStore` (a mixin: it needs the store's
    ``_teacher`` check and the backend's ``_sentence_write`` and ``_sentence_read``)."""

    # ------------------------------------------------------------------------------------------- teacher
    def open_sentences(self, code: str, key: str, prompt: str, now: float | None = None) -> int:
        """Start a new round with this prompt (the earlier round's sentences go) -> the room's new version."""
        text, now = clean_sentence(prompt, PROMPT_MAX, "prompt"), clock(now)
        return self._sentence_write(self._teacher(code, key, now), key, "open", "", text, now)

    def close_sentences(self, code: str, key: str, now: float | None = None) -> int:
        """No more writing or changing -> the room's new version."""
        now = clock(now)
        return self._sentence_write(self._teacher(code, key, now), key, "close", "", "", now)

    def show_sentences(self, code: str, key: str, figure: Mapping, now: float | None = None) -> int:
        """Close the round (if open) and show the figure with these settings (plain data) -> new version."""
        text = json.dumps(dict(figure), sort_keys=True, separators=(",", ":"))
        if len(text) > FIGURE_MAX:
            raise BadInput("The figure's settings are too long to store with the room.")
        now = clock(now)
        return self._sentence_write(self._teacher(code, key, now), key, "show", "", text, now)

    def hide_sentence(self, code: str, key: str, student: str, now: float | None = None) -> int:
        """Hide this student's sentence for the round: never on the projector, in the figure or the report ->
        new version."""
        sid, now = check_id(student, "student id"), clock(now)
        return self._sentence_write(self._teacher(code, key, now), key, "hide", sid, "", now)

    def sentences(self, code: str, key: str, now: float | None = None) -> list[Sentence]:
        """Every sentence of the round in the order they first came, with their writers (teacher only)."""
        now = clock(now)
        _round, rows = self._sentence_read(self._teacher(code, key, now), now)
        return [Sentence(sid, text, hidden) for sid, text, hidden in rows]

    # ------------------------------------------------------------------------------------------- everyone
    def write_sentence(self, code: str, student: str, text: str, now: float | None = None) -> str:
        """Write (or change) a joined student's sentence while the round is open -> the sentence as stored.
        BadInput for an empty, too long or control-character text; SentencesClosed; SentenceHidden; NotJoined."""
        sentence, sid = clean_sentence(text), check_id(student, "student id")
        self._sentence_write(normalise_code(code), None, "write", sid, sentence, clock(now))
        return sentence

    def sentence_round(self, code: str, now: float | None = None) -> SentenceRound:
        """The round's prompt, state, figure and how many wrote (no texts, no names)."""
        round_, rows = self._sentence_read(normalise_code(code), clock(now))
        number, prompt, state, figure = round_
        return SentenceRound(number, prompt, state, json.loads(figure) if figure else None, len(rows))

    def class_sentences(self, code: str, now: float | None = None) -> list[str]:
        """The sentences the class may see (hidden ones left out), in the order they first came; no names."""
        _round, rows = self._sentence_read(normalise_code(code), clock(now))
        return [text for _sid, text, hidden in rows if not hidden]

    def my_sentence(self, code: str, student: str, now: float | None = None) -> MySentence | None:
        """``student``'s sentence in this round with its number among the shown ones, or None."""
        sid = check_id(student, "student id")
        _round, rows = self._sentence_read(normalise_code(code), clock(now))
        number = 0
        for writer, text, hidden in rows:
            number += not hidden
            if writer == sid:
                return MySentence(text, hidden, None if hidden else number)
        return None

    # ------------------------------------------------------------------------------------------- backend
    def _sentence_write(self, code: str, key: str | None, op: str, student: str, value: str, now: float) -> int:
        """One atomic write: op open | close | show | hide (the teacher's, ``key`` checked again) bumps the room's
        version and returns it; write (a joined student's, round open, not hidden) returns 0."""
        raise NotImplementedError

    def _sentence_read(self, code: str, now: float) -> tuple[tuple[int, str, str, str], list[tuple[str, str, bool]]]:
        """((round, prompt, state, figure JSON or ''), [(student, text, hidden)] in the order first written)."""
        raise NotImplementedError
