"""Classroom live mode: rooms a teacher starts and students follow (storage only; no Streamlit here)."""
from __future__ import annotations

import os
from collections.abc import Mapping

from .qr import qr_svg
from .redis_store import RedisStore
from .sqlite_store import SqliteStore, cache_root, default_db_path
from .store import (
    ALPHABET,
    CODE_LEN,
    MAX_ROOMS,
    MAX_STUDENTS,
    NICK_MAX,
    TTL_S,
    AlreadyRevealed,
    BadInput,
    ClassroomError,
    ClassroomStore,
    InvalidCode,
    NoSuchRoom,
    NotJoined,
    NotTeacher,
    Room,
    RoomFull,
    TooManyRooms,
    clean_nickname,
    normalise_code,
    pretty_code,
)


def open_store(env: Mapping[str, str] = os.environ, **limits) -> ClassroomStore:
    """Redis when $EXPLORER_CLASSROOM_URL is set (redis://host:port/db), else SQLite at default_db_path(env)."""
    url = env.get("EXPLORER_CLASSROOM_URL")
    return RedisStore(url, **limits) if url else SqliteStore(default_db_path(env), **limits)


__all__ = ["ALPHABET", "CODE_LEN", "MAX_ROOMS", "MAX_STUDENTS", "NICK_MAX", "TTL_S", "AlreadyRevealed", "BadInput",
           "ClassroomError", "ClassroomStore", "InvalidCode", "NoSuchRoom", "NotJoined", "NotTeacher", "RedisStore",
           "Room", "RoomFull", "SqliteStore", "TooManyRooms", "cache_root", "clean_nickname", "default_db_path",
           "normalise_code", "open_store", "pretty_code", "qr_svg"]
