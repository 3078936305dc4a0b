"""Classroom errors: each one's ``str`` is a sentence to show the teacher or the student as it is.

Each ``*_error`` function makes one error with the sentence every backend raises it with (the store and both
backends use them, so a student reads the same words whichever backend the server runs)."""
from __future__ import annotations

from explorer.words.i18n import _, ngettext


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


class RoomClosed(ClassroomError):
    """The teacher closed the room to new students (those already in stay)."""


class Removed(ClassroomError, PermissionError):
    """The teacher removed this student id from the room; it cannot come back under the same id."""


class TooManyFromAddress(ClassroomError):
    """One client address already holds the most seats one address may hold in this room."""


class TooManyRooms(ClassroomError):
    """The server already holds its maximum number of open rooms."""


class AlreadyRevealed(ClassroomError):
    """The answers to this question were revealed; answers can no longer change."""


class BadInput(ClassroomError, ValueError):
    """A nickname, id, option or view is empty, too long or of the wrong type."""


def no_room_error() -> NoSuchRoom:
    return NoSuchRoom(_("There is no open room with this code: it may have been closed or left idle for 12 hours. "
                      "Please check the code with your teacher."))


def not_teacher_error() -> NotTeacher:
    return NotTeacher(_("Only the teacher who started this room can do that."))


def room_full_error(n: int) -> RoomFull:
    return RoomFull(ngettext("This room is full ({n} student); please ask your teacher.",
                             "This room is full ({n} students); please ask your teacher.", n).format(n=n))


def room_closed_error() -> RoomClosed:
    return RoomClosed(_("Your teacher has closed this class to new students; please ask your teacher to open it."))


def removed_error() -> Removed:
    return Removed(_("Your teacher removed you from this class. To come back, join again with the code."))


def from_address_error(n: int) -> TooManyFromAddress:
    return TooManyFromAddress(_("Too many students ({n}) have joined this class from your network address; please "
                                "ask your teacher.").format(n=n))


def too_many_rooms_error() -> TooManyRooms:
    return TooManyRooms(_("The server already hosts as many classrooms as it can; please try again later."))


def not_joined_error() -> NotJoined:
    return NotJoined(_("Please join the room before answering."))


def revealed_error() -> AlreadyRevealed:
    return AlreadyRevealed(_("The answers to this question are already revealed; yours can no longer change."))
