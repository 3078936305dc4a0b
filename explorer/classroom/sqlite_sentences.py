"""The SQLite store's tables and statements for the class's sentences (``explorer.classroom.sentences``).

``SqliteStore`` runs each function inside its own ``BEGIN IMMEDIATE`` after checking the room (and the teacher's
key), and bumps the room's version after a teacher's write: each write is atomic, as the Redis store's one Lua
script (``redis_scripts.SENTENCES``) is."""
from __future__ import annotations

from . import errors
from .sentences import closed_error, hidden_error

SCHEMA = """
CREATE TABLE IF NOT EXISTS sentence_rounds(code TEXT PRIMARY KEY, round INTEGER NOT NULL, prompt TEXT NOT NULL,
    state TEXT NOT NULL, figure TEXT NOT NULL DEFAULT '', next INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sentences(code TEXT, student TEXT, seq INTEGER NOT NULL, text TEXT NOT NULL,
    hidden INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(code, student)) WITHOUT ROWID;
"""
TABLES = ("sentences", "sentence_rounds")   # deleted with the room


def write(db, code: str, student: str, text: str) -> None:
    """A joined student's sentence while the round is open: the newest text kept, its first place in the order."""
    if not db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone():
        raise errors.not_joined_error()
    row = db.execute("SELECT state, next FROM sentence_rounds WHERE code=?", (code,)).fetchone()
    if not row or row[0] != "open":
        raise closed_error()
    if db.execute("SELECT 1 FROM sentences WHERE code=? AND student=? AND hidden=1", (code, student)).fetchone():
        raise hidden_error()
    db.execute("INSERT INTO sentences VALUES(?,?,?,?,0) ON CONFLICT(code, student) DO UPDATE SET text=excluded.text",
               (code, student, row[1], text))
    db.execute("UPDATE sentence_rounds SET next=next+1 WHERE code=?", (code,))


def teacher(db, code: str, op: str, student: str, value: str) -> None:
    """The teacher's op: open (a new round with the prompt ``value``; the old sentences go), close, show (the
    figure's JSON ``value``) or hide (``student``'s sentence)."""
    if op == "open":
        db.execute("DELETE FROM sentences WHERE code=?", (code,))
        db.execute("INSERT INTO sentence_rounds(code, round, prompt, state) VALUES(?,1,?,'open') ON CONFLICT(code) "
                   "DO UPDATE SET round=round+1, prompt=excluded.prompt, state='open', figure='', next=0",
                   (code, value))
    elif op == "close":
        db.execute("UPDATE sentence_rounds SET state='closed' WHERE code=? AND state='open'", (code,))
    elif op == "show":
        db.execute("UPDATE sentence_rounds SET state='shown', figure=? WHERE code=?", (value, code))
    elif op == "hide":
        db.execute("UPDATE sentences SET hidden=1 WHERE code=? AND student=?", (code, student))
    else:
        raise ValueError(f"unknown sentence op {op!r}")


def read(db, code: str) -> tuple[tuple[int, str, str, str], list[tuple[str, str, bool]]]:
    """((round, prompt, state, figure JSON or ''), [(student, text, hidden)] in the order first written)."""
    row = db.execute("SELECT round, prompt, state, figure FROM sentence_rounds WHERE code=?", (code,)).fetchone()
    rows = db.execute("SELECT student, text, hidden FROM sentences WHERE code=? ORDER BY seq, student",
                      (code,)).fetchall()
    return (tuple(row) if row else (0, "", "", "")), [(sid, text, bool(h)) for sid, text, h in rows]
