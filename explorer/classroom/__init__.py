"""Classroom live mode: rooms a teacher starts and students follow, and lessons set as homework (storage only; no
Streamlit here)."""
from __future__ import annotations

import os
from collections.abc import Mapping

from .address import WRONG_FIRST_WAIT_S, WRONG_FORGET_S, WRONG_FREE_TRIES, WRONG_LONGEST_WAIT_S, wait_after
from .errors import (
    AlreadyRevealed,
    BadInput,
    ClassroomError,
    InvalidCode,
    NoSuchRoom,
    NotJoined,
    NotTeacher,
    Removed,
    RoomClosed,
    RoomFull,
    TooManyFromAddress,
    TooManyRooms,
)
from .homework import AlreadyAnswered, HomeworkInfo, HomeworkProgress
from .ids import ALPHABET, CODE_LEN, normalise_code, pretty_code
from .polls import OPEN, REVEALED, ROUNDS, SHOWN, Asked, Progress, RoundClosed
from .qr import qr_svg
from .redis_store import ACL_COMMANDS, RedisStore, acl_rule
from .rooms import MAX_ROOMS, MAX_STUDENTS, NICK_MAX, SEATS_PER_ADDRESS, TTL_S, Room, TeacherView, clean_nickname
from .sqlite_file import default_db_path
from .sqlite_store import SqliteStore
from .store import ClassroomStore


def open_store(env: Mapping[str, str] = os.environ, **limits) -> ClassroomStore:
    """Redis when $EXPLORER_CLASSROOM_URL is set (redis://… or rediss://user:password@host:port/db), else SQLite at
    default_db_path(env). $EXPLORER_SEATS_PER_ADDRESS overrides SEATS_PER_ADDRESS (0: no cap); $EXPLORER_MAX_STUDENTS
    overrides MAX_STUDENTS (a lecture hall of 300: see docs/deploy.md)."""
    if env.get("EXPLORER_SEATS_PER_ADDRESS", "").strip():
        limits.setdefault("seats_per_address", int(env["EXPLORER_SEATS_PER_ADDRESS"]))
    if env.get("EXPLORER_MAX_STUDENTS", "").strip():
        limits.setdefault("max_students", int(env["EXPLORER_MAX_STUDENTS"]))
    url = env.get("EXPLORER_CLASSROOM_URL")
    return RedisStore(url, **limits) if url else SqliteStore(default_db_path(env), **limits)


__all__ = ["AlreadyAnswered", "HomeworkInfo", "HomeworkProgress",
           "ACL_COMMANDS", "ALPHABET", "OPEN", "REVEALED", "ROUNDS", "SHOWN", "Asked", "Progress", "RoundClosed",
           "CODE_LEN", "MAX_ROOMS", "MAX_STUDENTS", "NICK_MAX", "SEATS_PER_ADDRESS",
           "TTL_S", "WRONG_FIRST_WAIT_S", "WRONG_FORGET_S", "WRONG_FREE_TRIES", "WRONG_LONGEST_WAIT_S",
           "AlreadyRevealed", "BadInput", "ClassroomError", "ClassroomStore", "InvalidCode", "NoSuchRoom", "NotJoined",
           "NotTeacher", "RedisStore", "Removed", "Room", "RoomClosed", "RoomFull", "SqliteStore", "TeacherView",
           "TooManyFromAddress", "TooManyRooms", "acl_rule", "clean_nickname", "default_db_path",
           "normalise_code", "open_store", "pretty_code", "qr_svg", "wait_after"]
