"""The SQLite store's file: where it lives, its tables (a file an older version wrote gets the columns added since
and its old answer tables moved into rounds on open), one connection per thread (reopened after a fork, handed on
to the next thread when its thread ends) and write transactions (``BEGIN IMMEDIATE``: a read-modify-write never
races another writer, in this process or another)."""
from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import threading
import weakref
from contextlib import contextmanager
from pathlib import Path

from explorer.cache_folder import cache_root

from . import sqlite_sentences

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms(code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, created REAL NOT NULL,
    touched REAL NOT NULL, version INTEGER NOT NULL, locked INTEGER NOT NULL, view TEXT NOT NULL,
    joinable INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS rooms_touched ON rooms(touched);
CREATE TABLE IF NOT EXISTS students(code TEXT, student TEXT, nickname TEXT NOT NULL, address TEXT NOT NULL DEFAULT '',
    PRIMARY KEY(code, student)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS removed(code TEXT, student TEXT, PRIMARY KEY(code, student)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS wrong(address TEXT PRIMARY KEY, tries INTEGER NOT NULL, last REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS questions(code TEXT, qid TEXT, seq INTEGER NOT NULL, round INTEGER NOT NULL DEFAULT 1,
    state TEXT NOT NULL DEFAULT 'open', asked TEXT, PRIMARY KEY(code, qid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS votes(code TEXT, qid TEXT, round INTEGER, student TEXT, option TEXT NOT NULL,
    PRIMARY KEY(code, qid, round, student)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS homework(code TEXT, student TEXT, step INTEGER NOT NULL, finished INTEGER NOT NULL,
    PRIMARY KEY(code, student)) WITHOUT ROWID;
"""
# every table holding a room's rows, each emptied of them when the room goes
TABLES = ("votes", "questions", "removed", "students", "homework", *sqlite_sentences.TABLES, "rooms")
# Before rounds, a file kept one answer per student (answers) and the revealed questions (revealed): on open they
# become round 1's votes and revealed polls, and the old tables go.
_LEGACY = """
INSERT OR IGNORE INTO questions(code, qid, seq) SELECT code, qid, 0 FROM answers;
INSERT OR IGNORE INTO questions(code, qid, seq) SELECT code, qid, 0 FROM revealed;
UPDATE questions SET state='revealed' WHERE EXISTS(SELECT 1 FROM revealed v WHERE v.code=questions.code
    AND v.qid=questions.qid);
INSERT OR IGNORE INTO votes SELECT code, qid, 1, student, option FROM answers;
DROP TABLE answers;
DROP TABLE revealed;
"""
# Columns added after the first release: a file written by an older version gets them on open.
_ADDED = (("rooms", "joinable", "INTEGER NOT NULL DEFAULT 1"), ("students", "address", "TEXT NOT NULL DEFAULT ''"))


def default_db_path(env=os.environ) -> Path:
    """$EXPLORER_CLASSROOM_DB, else <cache root>/classroom.sqlite3."""
    return Path(env.get("EXPLORER_CLASSROOM_DB") or cache_root(env) / "classroom.sqlite3")




class SqliteFile:
    """The file and its connections, a mixin of ``sqlite_store.SqliteStore``: ``_open`` once, then ``_db`` for a
    read, ``_write`` for a transaction."""

    def _open(self, path: str | os.PathLike) -> None:
        """Open (or make) the file at ``path`` with every table, added column and moved legacy table."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._pool: queue.SimpleQueue = queue.SimpleQueue()   # (pid, connection) left by finished threads
        db = self._db()
        db.executescript(SCHEMA + sqlite_sentences.SCHEMA)
        for table, column, decl in _ADDED:
            if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                with contextlib.suppress(sqlite3.OperationalError):   # another process added it just now
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
        with self._write() as db:   # inside the write lock: one process moves the old tables, the others see none
            if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='answers'").fetchone():
                for statement in filter(str.strip, _LEGACY.split(";")):
                    db.execute(statement)

    def _db(self) -> sqlite3.Connection:
        """This thread's connection. Streamlit runs every script run in a new thread, so a connection outlives its
        thread: when the thread is gone it goes back to a pool the next thread takes it from, instead of each run
        of each student opening (and setting up) a connection of its own. One thread uses a connection at a time."""
        db = getattr(self._local, "db", None)
        if db is None or self._local.pid != os.getpid():
            db = self._pooled()
            if db is None:
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None,   # autocommit; we BEGIN ourselves
                                     check_same_thread=False)   # handed on to the next thread, never shared
                db.execute("PRAGMA busy_timeout=30000")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            self._local.db, self._local.pid = db, os.getpid()
            weakref.finalize(threading.current_thread(), self._pool.put, (os.getpid(), db))
        return db

    def _pooled(self) -> sqlite3.Connection | None:
        """A connection a finished thread of this process left, if any."""
        while True:
            try:
                pid, db = self._pool.get_nowait()
            except queue.Empty:
                return None
            if pid == os.getpid():
                return db

    @contextmanager
    def _write(self):
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
