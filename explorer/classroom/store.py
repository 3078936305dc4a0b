"""Classroom live mode storage: rooms, the teacher's view, joined students and pooled answers.

A teacher creates a room and gets ``(code, teacher_key)``; students join with the code and follow the
teacher's view, whose version number grows on every change (set_view, set_lock, reveal), so followers
only poll ``version(code)``. Nothing lives in process memory: every call goes to SQLite (default, one
file) or Redis (``EXPLORER_CLASSROOM_URL``), so many threads and processes may share one store.
Every method takes an optional ``now`` (unix seconds) so tests can move the clock.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: nothing to confuse when read aloud
CODE_LEN = 6
TTL_S = 12 * 3600  # a room with no teacher or student write for this long is gone
MAX_STUDENTS = 60
MAX_ROOMS = 200
NICK_MAX = 40
ID_MAX = 200  # longest student id, question id or option
VIEW_MAX = 64_000  # longest view, in characters of JSON
_DROPPED = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # control, format (bidi overrides), surrogates, line breaks


class ClassroomError(Exception):
    """Base of every classroom error; ``str(e)`` is a sentence to show the teacher or student."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class NoSuchRoom(ClassroomError, KeyError):
    """The code names no open room (never made, closed, or idle too long)."""


class InvalidCode(NoSuchRoom, ValueError):
    """The text typed cannot be a room code; no lookup was made."""


class NotTeacher(ClassroomError, PermissionError):
    """The teacher key is missing or wrong."""


class NotJoined(ClassroomError, PermissionError):
    """A student answered without joining the room first."""


class RoomFull(ClassroomError):
    """The room already has its maximum number of students."""


class TooManyRooms(ClassroomError):
    """The server already holds its maximum number of open rooms."""


class AlreadyRevealed(ClassroomError):
    """The answers to this question were revealed; answers can no longer change."""


class BadInput(ClassroomError, ValueError):
    """A nickname, id, option or view is empty, too long or of the wrong type."""


def _no_room() -> NoSuchRoom:
    return NoSuchRoom("There is no open room with this code: it may have been closed or left idle for 12 hours. "
                      "Please check the code with your teacher.")


def _not_teacher() -> NotTeacher:
    return NotTeacher("Only the teacher who started this room can do that.")


def _full(n: int) -> RoomFull:
    return RoomFull(f"This room is full ({n} students); please ask your teacher.")


def _too_many() -> TooManyRooms:
    return TooManyRooms("The server already hosts as many classrooms as it can; please try again later.")


def _not_joined() -> NotJoined:
    return NotJoined("Please join the room before answering.")


def _frozen() -> AlreadyRevealed:
    return AlreadyRevealed("The answers to this question are already revealed; yours can no longer change.")


@dataclass(frozen=True)
class Room:
    code: str
    created: float  # unix seconds
    touched: float  # last teacher or student write
    version: int  # grows on every view change, lock change and reveal
    locked: bool
    students: int


def new_code() -> str:
    """A random room code of CODE_LEN characters from ALPHABET (~30 bits)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LEN))


def normalise_code(text: object) -> str:
    """Typed code -> canonical code: strip, uppercase, drop spaces and dashes; InvalidCode if malformed."""
    code = "".join(str(text).split()).upper().replace("-", "") if isinstance(text, str) else ""
    if len(code) != CODE_LEN or any(ch not in ALPHABET for ch in code):
        raise InvalidCode(f"That is not a room code: a room code has {CODE_LEN} letters and digits, like "
                          "K7M-2QX, and never contains 0, O, 1, I or L.")
    return code


def pretty_code(code: str) -> str:
    """'K7M2QX' -> 'K7M-2QX' (easier to read aloud; normalise_code drops the dash again)."""
    return f"{code[:3]}-{code[3:]}"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_matches(stored_hash: str | None, key: object) -> bool:
    """Constant-time check of a teacher key against the stored sha256 hex digest."""
    if not stored_hash or not isinstance(key, str) or not key:
        return False
    return hmac.compare_digest(stored_hash, hash_key(key))


def clean_nickname(text: object) -> str:
    """Nickname as stored: whitespace -> space, control/format characters dropped, stripped, <= NICK_MAX chars."""
    if not isinstance(text, str):
        raise BadInput("Please type a nickname.")
    kept = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or
                   unicodedata.category(ch) not in _DROPPED)
    nick = kept.strip()[:NICK_MAX].strip()
    if not nick:
        raise BadInput("Please type a nickname (letters, digits or emoji).")
    return nick


def check_id(value: object, what: str) -> str:
    """A caller-given opaque id (student, question, option): a non-empty string of at most ID_MAX chars."""
    if not isinstance(value, str) or not value or len(value) > ID_MAX:
        raise BadInput(f"The {what} must be a non-empty text of at most {ID_MAX} characters.")
    return value


def dump_view(view: object) -> str:
    """View dict -> canonical JSON text; BadInput unless it is a JSON-able dict of at most VIEW_MAX chars."""
    if not isinstance(view, Mapping):
        raise BadInput("The teacher's view must be a dictionary.")
    try:
        text = json.dumps(dict(view), sort_keys=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise BadInput("The teacher's view holds something that is not plain data (text, numbers, lists).") from e
    if len(text) > VIEW_MAX:
        raise BadInput("The teacher's view is too large to share with the class.")
    return text


def _now(now: float | None) -> float:
    return time.time() if now is None else float(now)


class ClassroomStore(ABC):
    """The interface both backends share. Public methods validate, then call the backend's atomic ``_ops``."""

    def __init__(self, *, ttl_s: float = TTL_S, max_students: int = MAX_STUDENTS, max_rooms: int = MAX_ROOMS):
        self.ttl_s, self.max_students, self.max_rooms = float(ttl_s), int(max_students), int(max_rooms)

    # ------------------------------------------------------------------------------------------- teacher
    def create_room(self, now: float | None = None) -> tuple[str, str]:
        """New room -> (code, teacher_key). Idle rooms are expired first; TooManyRooms at max_rooms."""
        now = _now(now)
        self.expire(now)
        key = secrets.token_urlsafe(32)
        for _ in range(20):  # a clash with a live code is rare: try another code
            code = new_code()
            if self._create(code, hash_key(key), now):
                return code, key
        raise ClassroomError("No free room code was found; please try again.")

    def is_teacher(self, code: str, key: str, now: float | None = None) -> bool:
        try:
            return key_matches(self._key_hash(normalise_code(code), _now(now)), key)
        except InvalidCode:
            return False

    def _teacher(self, code: str, key: str, now: float) -> str:
        """Normalised code after a read-only key check (backends check again inside their write)."""
        code = normalise_code(code)
        stored = self._key_hash(code, now)
        if stored is None:
            raise _no_room()
        if not key_matches(stored, key):
            raise _not_teacher()
        return code

    def set_view(self, code: str, key: str, view: Mapping, now: float | None = None) -> int:
        """Replace the shared view (a JSON-able dict) -> its new version."""
        text, now = dump_view(view), _now(now)
        return self._teacher_write(self._teacher(code, key, now), key, now, "view", text)

    def set_lock(self, code: str, key: str, locked: bool, now: float | None = None) -> int:
        """Lock (students must follow) or unlock the view -> new version."""
        now = _now(now)
        return self._teacher_write(self._teacher(code, key, now), key, now, "lock", "1" if locked else "0")

    def reveal(self, code: str, key: str, question_id: str, now: float | None = None) -> int:
        """Reveal a question's pooled answers to the class -> new version; its answers are frozen."""
        qid, now = check_id(question_id, "question id"), _now(now)
        return self._teacher_write(self._teacher(code, key, now), key, now, "reveal", qid)

    def nicknames(self, code: str, key: str, now: float | None = None) -> list[str]:
        """Nicknames of the joined students, sorted case-insensitively (teacher only)."""
        now = _now(now)
        return sorted(self._nicknames(self._teacher(code, key, now), now), key=lambda s: (s.casefold(), s))

    def close(self, code: str, key: str, now: float | None = None) -> None:
        """Delete the room with its view, students and answers."""
        now = _now(now)
        self._close(self._teacher(code, key, now), key, now)

    # ------------------------------------------------------------------------------------------- everyone
    def room(self, code: str, now: float | None = None) -> Room | None:
        try:
            return self._room(normalise_code(code), _now(now))
        except InvalidCode:
            return None

    def view(self, code: str, now: float | None = None) -> tuple[int, dict]:
        """(version, view dict with 'locked' set from the room's lock)."""
        version, text, locked = self._view(normalise_code(code), _now(now))
        return version, {**json.loads(text), "locked": locked}

    def version(self, code: str, now: float | None = None) -> int:
        """The view's version: one key lookup, the call followers poll."""
        return self._version(normalise_code(code), _now(now))

    def join(self, code: str, student: str, nickname: str, now: float | None = None) -> str:
        """Join (or rename, when already joined) -> the nickname as stored. RoomFull at max_students."""
        nick, sid = clean_nickname(nickname), check_id(student, "student id")
        self._join(normalise_code(code), sid, nick, _now(now))
        return nick

    def answer(self, code: str, question_id: str, student: str, option: str, now: float | None = None) -> None:
        """Record (or replace) a joined student's answer; AlreadyRevealed once the question is revealed."""
        args = check_id(question_id, "question id"), check_id(student, "student id"), check_id(option, "answer")
        self._answer(normalise_code(code), *args, _now(now))

    def counts(self, code: str, question_id: str, now: float | None = None) -> dict[str, int]:
        """option -> number of students who chose it (no names)."""
        return self._counts(normalise_code(code), check_id(question_id, "question id"), _now(now))

    def my_answer(self, code: str, question_id: str, student: str, now: float | None = None) -> str | None:
        qid, sid = check_id(question_id, "question id"), check_id(student, "student id")
        return self._my_answer(normalise_code(code), qid, sid, _now(now))

    def revealed(self, code: str, now: float | None = None) -> frozenset[str]:
        return frozenset(self._revealed(normalise_code(code), _now(now)))

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
    @abstractmethod
    def _close(self, code: str, key: str, now: float) -> None: ...
    @abstractmethod
    def _nicknames(self, code: str, now: float) -> list[str]: ...
    @abstractmethod
    def _room(self, code: str, now: float) -> Room | None: ...
    @abstractmethod
    def _view(self, code: str, now: float) -> tuple[int, str, bool]: ...
    @abstractmethod
    def _version(self, code: str, now: float) -> int: ...
    @abstractmethod
    def _join(self, code: str, student: str, nickname: str, now: float) -> None: ...
    @abstractmethod
    def _answer(self, code: str, qid: str, student: str, option: str, now: float) -> None: ...
    @abstractmethod
    def _counts(self, code: str, qid: str, now: float) -> dict[str, int]: ...
    @abstractmethod
    def _my_answer(self, code: str, qid: str, student: str, now: float) -> str | None: ...
    @abstractmethod
    def _revealed(self, code: str, now: float) -> set[str]: ...
