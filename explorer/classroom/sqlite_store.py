"""SQLite backend of the classroom store: the store's calls as statements on one file in WAL mode, shared by threads
and processes (``sqlite_file``: its tables, a connection per thread, write transactions).

Writes run in ``BEGIN IMMEDIATE`` transactions, so a read-modify-write (join's limit, the version counter) never
races another writer; reads are single statements, each consistent on its own.
"""
from __future__ import annotations

import hmac
import json
import os

from . import errors, sqlite_sentences
from .address import WRONG_FORGET_S
from .homework import HOMEWORK, allowed, already_answered_error, not_homework_error, unknown_question_error
from .ids import clock
from .polls import OPEN, REVEALED, next_state, round_closed_error
from .rooms import Room, hash_key
from .sqlite_file import TABLES, SqliteFile
from .store import ClassroomStore


class SqliteStore(SqliteFile, ClassroomStore):
    def __init__(self, path: str | os.PathLike, **limits):
        super().__init__(**limits)
        self._open(path)

    def _live(self, db, code: str, now: float, cols: str = "key_hash") -> tuple:
        row = db.execute(f"SELECT {cols} FROM rooms WHERE code=? AND touched>?", (code, now - self.ttl_s)).fetchone()
        if row is None:
            raise errors.no_room_error()
        return row

    def _check_teacher(self, db, code: str, key: str, now: float) -> None:
        if not hmac.compare_digest(self._live(db, code, now)[0], hash_key(key)):
            raise errors.not_teacher_error()

    def _touch(self, db, code: str, now: float) -> None:
        db.execute("UPDATE rooms SET touched=? WHERE code=?", (now, code))

    @staticmethod
    def _drop(db, codes) -> None:
        for table in TABLES:
            db.executemany(f"DELETE FROM {table} WHERE code=?", [(c,) for c in codes])

    # ------------------------------------------------------------------------------------------- writes
    def expire(self, now: float | None = None) -> int:
        now = clock(now)
        with self._write() as db:
            codes = [r[0] for r in db.execute("SELECT code FROM rooms WHERE touched<=?", (now - self.ttl_s,))]
            self._drop(db, codes)
            db.execute("DELETE FROM wrong WHERE last<=?", (now - WRONG_FORGET_S,))
        return len(codes)

    def _create(self, code, key_hash, now):
        with self._write() as db:
            if db.execute("SELECT 1 FROM rooms WHERE code=?", (code,)).fetchone():
                return False
            live = db.execute("SELECT COUNT(*) FROM rooms WHERE touched>?", (now - self.ttl_s,)).fetchone()[0]
            if live >= self.max_rooms:
                raise errors.too_many_rooms_error()
            db.execute("INSERT INTO rooms(code, key_hash, created, touched, version, locked, view, joinable) "
                       "VALUES(?,?,?,?,0,0,'{}',1)", (code, key_hash, now, now))
        return True

    def _teacher_write(self, code, key, now, op, value):
        with self._write() as db:
            self._check_teacher(db, code, key, now)
            if op == "joinable":   # not a change of what followers see: the version stays
                db.execute("UPDATE rooms SET joinable=?, touched=? WHERE code=?", (int(value), now, code))
                return db.execute("SELECT version FROM rooms WHERE code=?", (code,)).fetchone()[0]
            if op == "view":
                db.execute("UPDATE rooms SET view=? WHERE code=?", (value, code))
            elif op == "lock":
                db.execute("UPDATE rooms SET locked=? WHERE code=?", (int(value), code))
            elif op == "remove":
                for student in json.loads(value):
                    db.execute("DELETE FROM students WHERE code=? AND student=?", (code, student))
                    db.execute("DELETE FROM votes WHERE code=? AND student=? AND qid NOT IN "
                               "(SELECT qid FROM questions WHERE code=? AND state=?)", (code, student, code, REVEALED))
                    db.execute("INSERT OR IGNORE INTO removed VALUES(?,?)", (code, student))
                    db.execute("DELETE FROM sentences WHERE code=? AND student=?", (code, student))
            elif op == "ask":   # the question as the teacher's page shows it; no change followers must see
                qid, text = json.loads(value)
                self._question(db, code, qid)
                db.execute("UPDATE questions SET asked=? WHERE code=? AND qid=? AND "
                           "(round=1 AND state=? OR asked IS NULL)", (text, code, qid, OPEN))
                db.execute("UPDATE rooms SET touched=? WHERE code=?", (now, code))
                return db.execute("SELECT version FROM rooms WHERE code=?", (code,)).fetchone()[0]
            else:  # show | again | reveal
                qid, expected = json.loads(value)
                round_, state = self._question(db, code, qid)
                db.execute("UPDATE questions SET round=?, state=? WHERE code=? AND qid=?",
                           (*next_state(op, round_, state, expected), code, qid))
            db.execute("UPDATE rooms SET version=version+1, touched=? WHERE code=?", (now, code))
            return db.execute("SELECT version FROM rooms WHERE code=?", (code,)).fetchone()[0]

    def _close(self, code, key, now):
        with self._write() as db:
            self._check_teacher(db, code, key, now)
            self._drop(db, [code])

    def _join(self, code, student, nickname, address, now):
        with self._write() as db:
            joinable = self._live(db, code, now, "joinable")[0]
            if db.execute("SELECT 1 FROM removed WHERE code=? AND student=?", (code, student)).fetchone():
                raise errors.removed_error()
            known = db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone()
            if not known:
                if not joinable:
                    raise errors.room_closed_error()
                if db.execute("SELECT COUNT(*) FROM students WHERE code=?", (code,)).fetchone()[0] >= self.max_students:
                    raise errors.room_full_error(self.max_students)
                if address and self.seats_per_address and db.execute(
                        "SELECT COUNT(*) FROM students WHERE code=? AND address=?",
                        (code, address)).fetchone()[0] >= self.seats_per_address:
                    raise errors.from_address_error(self.seats_per_address)
            db.execute("INSERT INTO students(code, student, nickname, address) VALUES(?,?,?,?) "
                       "ON CONFLICT(code, student) DO UPDATE SET nickname=excluded.nickname",
                       (code, student, nickname, address))
            self._touch(db, code, now)

    def _wrong_try(self, address, now, forget_s):
        with self._write() as db:
            row = db.execute("SELECT tries, last FROM wrong WHERE address=?", (address,)).fetchone()
            tries = row[0] + 1 if row and row[1] > now - forget_s else 1
            db.execute("INSERT OR REPLACE INTO wrong VALUES(?,?,?)", (address, tries, now))
        return tries

    @staticmethod
    def _question(db, code: str, qid: str) -> tuple[int, str]:
        """The poll's (round, state), its row made (round 1, open; numbered after the room's others) if new."""
        db.execute("INSERT OR IGNORE INTO questions(code, qid, seq) VALUES(?, ?, "
                   "(SELECT COUNT(*) + 1 FROM questions WHERE code=?))", (code, qid, code))
        return db.execute("SELECT round, state FROM questions WHERE code=? AND qid=?", (code, qid)).fetchone()

    def _answer(self, code, qid, student, option, now):
        with self._write() as db:
            self._live(db, code, now)
            if not db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone():
                raise errors.not_joined_error()
            round_, state = self._question(db, code, qid)
            if state != OPEN:
                raise errors.revealed_error() if state == REVEALED else round_closed_error()
            db.execute("INSERT OR REPLACE INTO votes VALUES(?,?,?,?,?)", (code, qid, round_, student, option))
            self._touch(db, code, now)
        return round_

    def _homework_answer(self, code, qid, student, option, now):
        with self._write() as db:
            view = self._live(db, code, now, "view")[0]
            if HOMEWORK not in json.loads(view):
                raise not_homework_error()
            if not db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone():
                raise errors.not_joined_error()
            row = db.execute("SELECT asked FROM questions WHERE code=? AND qid=?", (code, qid)).fetchone()
            if not row or not allowed(row[0], option):
                raise unknown_question_error()
            if db.execute("SELECT 1 FROM votes WHERE code=? AND qid=? AND round=1 AND student=?",
                          (code, qid, student)).fetchone():
                raise already_answered_error()
            db.execute("INSERT INTO votes VALUES(?,?,1,?,?)", (code, qid, student, option))
            self._touch(db, code, now)

    def _homework_step(self, code, student, step, finished, now):
        with self._write() as db:
            self._live(db, code, now)
            if not db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone():
                raise errors.not_joined_error()
            db.execute("INSERT INTO homework VALUES(?,?,?,?) ON CONFLICT(code, student) DO UPDATE SET "
                       "step=MAX(step, excluded.step), finished=MAX(finished, excluded.finished)",
                       (code, student, step, int(finished)))
            self._touch(db, code, now)

    def _sentence_write(self, code, key, op, student, value, now):
        with self._write() as db:
            if op == "write":
                self._live(db, code, now)
                sqlite_sentences.write(db, code, student, value)
                self._touch(db, code, now)
                return 0
            self._check_teacher(db, code, key, now)
            sqlite_sentences.teacher(db, code, op, student, value)
            db.execute("UPDATE rooms SET version=version+1, touched=? WHERE code=?", (now, code))
            return db.execute("SELECT version FROM rooms WHERE code=?", (code,)).fetchone()[0]

    # ------------------------------------------------------------------------------------------- reads
    def _sentence_read(self, code, now):
        db = self._db()
        db.execute("BEGIN")   # one snapshot for the liveness, the round and its sentences
        try:
            self._live(db, code, now)
            return sqlite_sentences.read(db, code)
        finally:
            db.execute("COMMIT")

    def _homework_place(self, code, student, now):
        self._live(self._db(), code, now)
        row = self._db().execute("SELECT step, finished FROM homework WHERE code=? AND student=?",
                                 (code, student)).fetchone()
        return (row[0], bool(row[1])) if row else (0, False)

    def _homework_finished(self, code, now):
        self._live(self._db(), code, now)
        return self._db().execute("SELECT COUNT(*) FROM homework h JOIN students s ON s.code=h.code AND "
                                  "s.student=h.student WHERE h.code=? AND h.finished=1", (code,)).fetchone()[0]

    def _key_hash(self, code, now):
        row = self._db().execute("SELECT key_hash FROM rooms WHERE code=? AND touched>?",
                                 (code, now - self.ttl_s)).fetchone()
        return row and row[0]

    def _room(self, code, now):
        row = self._db().execute(
            "SELECT code, created, touched, version, locked, (SELECT COUNT(*) FROM students s WHERE s.code=r.code), "
            "joinable FROM rooms r WHERE code=? AND touched>?", (code, now - self.ttl_s)).fetchone()
        return row and Room(row[0], row[1], row[2], row[3], bool(row[4]), row[5], bool(row[6]))

    def _view(self, code, now):
        version, text, locked = self._live(self._db(), code, now, "version, view, locked")
        return version, text, bool(locked)

    def _version(self, code, now):
        return self._live(self._db(), code, now, "version")[0]

    def _roster(self, code, now):
        return [tuple(r) for r in self._db().execute("SELECT student, nickname FROM students WHERE code=?", (code,))]

    def _joined(self, code, student, now):
        # One statement: the room's liveness and the seat come from the same snapshot.
        row = self._db().execute(
            "SELECT EXISTS(SELECT 1 FROM students s WHERE s.code=r.code AND s.student=?) FROM rooms r "
            "WHERE r.code=? AND r.touched>?", (student, code, now - self.ttl_s)).fetchone()
        if row is None:
            raise errors.no_room_error()
        return bool(row[0])

    def _wrong_state(self, address, now, forget_s):
        row = self._db().execute("SELECT tries, last FROM wrong WHERE address=? AND last>?",
                                 (address, now - forget_s)).fetchone()
        return row and (row[0], row[1])

    def _poll(self, code, qid, now):
        # One statement: the room's liveness, the poll and its round's votes come from the same snapshot.
        row = self._db().execute(
            "SELECT q.round, q.state, (SELECT COUNT(*) FROM votes v WHERE v.code=q.code AND v.qid=q.qid AND "
            "v.round=q.round) FROM rooms r LEFT JOIN questions q ON q.code=r.code AND q.qid=? "
            "WHERE r.code=? AND r.touched>?", (qid, code, now - self.ttl_s)).fetchone()
        if row is None:
            raise errors.no_room_error()
        return (row[0], row[1], row[2]) if row[0] is not None else (1, OPEN, 0)

    def _round(self, db, code, qid, round_) -> int:
        """``round_``, or (None) the poll's current round."""
        if round_ is not None:
            return round_
        row = db.execute("SELECT round FROM questions WHERE code=? AND qid=?", (code, qid)).fetchone()
        return row[0] if row else 1

    def _counts(self, code, qid, round_, now):
        db = self._db()
        db.execute("BEGIN")   # one snapshot for the liveness, the round and the tally
        try:
            self._live(db, code, now)
            rows = db.execute("SELECT option, COUNT(*) FROM votes WHERE code=? AND qid=? AND round=? GROUP BY option",
                              (code, qid, self._round(db, code, qid, round_))).fetchall()
        finally:
            db.execute("COMMIT")
        return dict(rows)

    def _my_answer(self, code, qid, student, round_, now):
        db = self._db()
        self._live(db, code, now)
        row = db.execute("SELECT option FROM votes WHERE code=? AND qid=? AND round=? AND student=?",
                         (code, qid, self._round(db, code, qid, round_), student)).fetchone()
        return row and row[0]

    def _my_answers(self, code, student, now):
        self._live(self._db(), code, now)
        return [tuple(r) for r in self._db().execute(
            "SELECT qid, round, option FROM votes WHERE code=? AND student=?", (code, student))]

    def _questions(self, code, now):
        self._live(self._db(), code, now)
        return [tuple(r) for r in self._db().execute(
            "SELECT qid, round, state, asked FROM questions WHERE code=? ORDER BY seq, qid", (code,))]
