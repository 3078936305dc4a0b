"""Classroom live mode storage: rooms, the teacher's view, joined students and pooled answers.

A teacher creates a room and gets ``(code, teacher_key)``; students join with the code and follow the
teacher's view, whose version number grows on every change (set_view, set_lock, a poll shown or revealed), so followers
only poll ``version(code)``. Nothing lives in process memory: every call goes to SQLite (default, one
file) or Redis (``EXPLORER_CLASSROOM_URL``), so many threads and processes may share one store.
The teacher keeps the class: a roster of who joined, removing a student (the id can never sit again), and
closing the room to new students. Wrong codes are counted per client address in the store, so every session and
every replica sees the same count.
Every method takes an optional ``now`` (unix seconds) so tests can move the clock.
"""
from __future__ import annotations

import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Mapping

from explorer.words.i18n import _

from .address import WRONG_FORGET_S, WRONG_FREE_TRIES, address_hash, wait_after
from .errors import BadInput, ClassroomError, InvalidCode, no_room_error, not_teacher_error
from .homework import Homework
from .ids import check_id, clock, new_code, normalise_code
from .polls import Polls
from .rooms import (
    MAX_ROOMS,
    MAX_STUDENTS,
    SEATS_PER_ADDRESS,
    TTL_S,
    Room,
    clean_nickname,
    dump_view,
    hash_key,
    key_matches,
)
from .sentences import Sentences


class ClassroomStore(Polls, Homework, Sentences, ABC):
    """The interface both backends share (the class-question calls: ``polls.Polls``; homework:
    ``homework.Homework``; the class's sentences: ``sentences.Sentences``). Public methods validate,
    then call the backend's atomic ``_ops``."""

    def __init__(self, *, ttl_s: float = TTL_S, max_students: int = MAX_STUDENTS, max_rooms: int = MAX_ROOMS,
                 seats_per_address: int = SEATS_PER_ADDRESS):
        """``seats_per_address``: most seats the joins from one client address may hold in a room (0: no cap)."""
        self.ttl_s, self.max_students, self.max_rooms = float(ttl_s), int(max_students), int(max_rooms)
        self.seats_per_address = int(seats_per_address)

    # ------------------------------------------------------------------------------------------- teacher
    def create_room(self, now: float | None = None) -> tuple[str, str]:
        """New room -> (code, teacher_key). Idle rooms are expired first; TooManyRooms at max_rooms."""
        now = clock(now)
        self.expire(now)
        key = secrets.token_urlsafe(32)
        for _try in range(20):  # a clash with a live code is rare: try another code
            code = new_code()
            if self._create(code, hash_key(key), now):
                return code, key
        raise ClassroomError(_("No free room code was found; please try again."))

    def is_teacher(self, code: str, key: str, now: float | None = None) -> bool:
        try:
            return key_matches(self._key_hash(normalise_code(code), clock(now)), key)
        except InvalidCode:
            return False

    def _teacher(self, code: str, key: str, now: float) -> str:
        """Normalised code after a read-only key check (backends check again inside their write)."""
        code = normalise_code(code)
        stored = self._key_hash(code, now)
        if stored is None:
            raise no_room_error()
        if not key_matches(stored, key):
            raise not_teacher_error()
        return code

    def set_view(self, code: str, key: str, view: Mapping, now: float | None = None) -> int:
        """Replace the shared view (a JSON-able dict) -> its new version."""
        text, now = dump_view(view), clock(now)
        return self._teacher_write(self._teacher(code, key, now), key, now, "view", text)

    def set_lock(self, code: str, key: str, locked: bool, now: float | None = None) -> int:
        """Lock (students must follow) or unlock the view -> new version."""
        now = clock(now)
        return self._teacher_write(self._teacher(code, key, now), key, now, "lock", "1" if locked else "0")

    def roster(self, code: str, key: str, now: float | None = None) -> list[tuple[str, str]]:
        """(student id, nickname) of every joined student, sorted by nickname case-insensitively (teacher only)."""
        now = clock(now)
        seats = self._roster(self._teacher(code, key, now), now)
        return sorted(seats, key=lambda seat: (seat[1].casefold(), seat[1], seat[0]))

    def nicknames(self, code: str, key: str, now: float | None = None) -> list[str]:
        """Nicknames of the joined students, sorted case-insensitively (teacher only)."""
        return [nick for _, nick in self.roster(code, key, now)]

    def remove(self, code: str, key: str, students, now: float | None = None) -> int:
        """Take these students' seats away (teacher only) -> new version, so their sessions are rerun (the
        server watches the version) and leave. Their answers to questions not yet revealed go too; the ids can
        never join this room again."""
        ids, now = [check_id(s, "student id") for s in students], clock(now)
        if not ids:
            raise BadInput("Please choose the students to remove.")
        return self._teacher_write(self._teacher(code, key, now), key, now, "remove", json.dumps(ids))

    def set_joinable(self, code: str, key: str, joinable: bool, now: float | None = None) -> None:
        """Open (True) or close (False) the room to new students; students already in stay and may rejoin."""
        now = clock(now)
        self._teacher_write(self._teacher(code, key, now), key, now, "joinable", "1" if joinable else "0")

    def close(self, code: str, key: str, now: float | None = None) -> None:
        """Delete the room with its view, students and answers."""
        now = clock(now)
        self._close(self._teacher(code, key, now), key, now)

    # ------------------------------------------------------------------------------------------- everyone
    def room(self, code: str, now: float | None = None) -> Room | None:
        try:
            return self._room(normalise_code(code), clock(now))
        except InvalidCode:
            return None

    def view(self, code: str, now: float | None = None) -> tuple[int, dict]:
        """(version, view dict with 'locked' set from the room's lock)."""
        version, text, locked = self._view(normalise_code(code), clock(now))
        return version, {**json.loads(text), "locked": locked}

    def version(self, code: str, now: float | None = None) -> int:
        """The view's version: one key lookup, the call followers poll."""
        return self._version(normalise_code(code), clock(now))

    def join(self, code: str, student: str, nickname: str, now: float | None = None, *,
             address: str | None = None) -> str:
        """Join (or rename, when already joined) -> the nickname as stored. A new seat is refused with Removed
        (this id was removed), RoomClosed, RoomFull (max_students) or TooManyFromAddress (``address``, the
        client's, already holds seats_per_address seats; None: unknown, not counted)."""
        nick, sid = clean_nickname(nickname), check_id(student, "student id")
        where = address_hash(address) if address else ""
        self._join(normalise_code(code), sid, nick, where, clock(now))
        return nick

    def joined(self, code: str, student: str, now: float | None = None) -> bool:
        """Does ``student`` hold a seat in the room? NoSuchRoom when the room is gone."""
        return self._joined(normalise_code(code), check_id(student, "student id"), clock(now))

    def wrong_code(self, address: str, now: float | None = None) -> float:
        """Count one wrong code from ``address`` (shared by every session and replica) -> seconds it must now
        wait before the next try (0 for the first WRONG_FREE_TRIES - 1 within WRONG_FORGET_S of each other)."""
        tries = self._wrong_try(address_hash(address), clock(now), WRONG_FORGET_S)
        return wait_after(tries, WRONG_FREE_TRIES)

    def code_wait(self, address: str, now: float | None = None) -> float:
        """Seconds ``address`` must still wait before typing another code (0: it may try now)."""
        now = clock(now)
        state = self._wrong_state(address_hash(address), now, WRONG_FORGET_S)
        if state is None:
            return 0.0
        tries, last = state
        return max(0.0, last + wait_after(tries, WRONG_FREE_TRIES) - now)

    @abstractmethod
    def expire(self, now: float | None = None) -> int:
        """Delete every room idle for ttl_s or more -> how many were deleted."""

    # ------------------------------------------------------------------------------------------- backend
    @abstractmethod
    def _create(self, code: str, key_hash: str, now: float) -> bool: ...  # False: code taken
    @abstractmethod
    def _key_hash(self, code: str, now: float) -> str | None: ...
    @abstractmethod
    def _teacher_write(self, code: str, key: str, now: float, op: str, value: str) -> int: ...
    # op: view | lock | remove (value: JSON list of ids) | show | again | reveal (value: JSON [qid, round or null])
    # bump the version; joinable and ask (value: JSON [qid, question JSON]) do not
    @abstractmethod
    def _close(self, code: str, key: str, now: float) -> None: ...
    @abstractmethod
    def _roster(self, code: str, now: float) -> list[tuple[str, str]]: ...
    @abstractmethod
    def _room(self, code: str, now: float) -> Room | None: ...
    @abstractmethod
    def _view(self, code: str, now: float) -> tuple[int, str, bool]: ...
    @abstractmethod
    def _version(self, code: str, now: float) -> int: ...
    @abstractmethod
    def _join(self, code: str, student: str, nickname: str, address: str, now: float) -> None: ...
    @abstractmethod
    def _joined(self, code: str, student: str, now: float) -> bool: ...
    @abstractmethod
    def _wrong_try(self, address: str, now: float, forget_s: float) -> int: ...  # -> tries, this one included
    @abstractmethod
    def _wrong_state(self, address: str, now: float, forget_s: float) -> tuple[int, float] | None: ...
    @abstractmethod
    def _answer(self, code: str, qid: str, student: str, option: str, now: float) -> int: ...  # -> its round
    @abstractmethod
    def _poll(self, code: str, qid: str, now: float) -> tuple[int, str, int]: ...  # round, state, answered
    @abstractmethod
    def _counts(self, code: str, qid: str, round_: int | None, now: float) -> dict[str, int]: ...
    @abstractmethod
    def _my_answer(self, code: str, qid: str, student: str, round_: int | None, now: float) -> str | None: ...
    @abstractmethod
    def _my_answers(self, code: str, student: str, now: float) -> list[tuple[str, int, str]]: ...
    @abstractmethod
    def _questions(self, code: str, now: float) -> list[tuple[str, int, str, str | None]]: ...
    # qid, round, state, the stored question's JSON (None: never asked), in the order the questions came
    @abstractmethod
    def _homework_answer(self, code: str, qid: str, student: str, option: str, now: float) -> None: ...
    # one atomic write: the room is a homework, the student joined, the question stored and the option one of its
    # options (homework.allowed), no earlier vote of this student on it (AlreadyAnswered); then round 1's vote
    @abstractmethod
    def _homework_step(self, code: str, student: str, step: int, finished: bool, now: float) -> None: ...
    # a joined student's furthest step (the larger one kept) and finished (once true, kept)
    @abstractmethod
    def _homework_place(self, code: str, student: str, now: float) -> tuple[int, bool]: ...
    @abstractmethod
    def _homework_finished(self, code: str, now: float) -> int: ...
