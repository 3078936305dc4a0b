"""Redis backend of the classroom store (redis-py 8.1, any Redis >= 6).

Keys of one room share the hash tag ``{CODE}`` (one cluster slot):
    <prefix>room:{CODE}              hash  key_hash, created, touched, version, locked, view (JSON), joinable
    <prefix>room:{CODE}:students     hash  student id -> nickname
    <prefix>room:{CODE}:addr         hash  student id -> hashed client address of its first join ('' unknown)
    <prefix>room:{CODE}:removed      set   student ids the teacher removed
    <prefix>room:{CODE}:polls        hash  question id -> JSON {r: round, s: open|shown|revealed, n: order, a: the
                                           question as the teacher's page stored it ('' not yet)}
    <prefix>room:{CODE}:q:<qid>      hash  student id -> option, round 1
    <prefix>room:{CODE}:q2:<qid>     hash  student id -> option, round 2
    <prefix>room:{CODE}:sent         hash  student id -> JSON {t: sentence, n: order, h: hidden 0|1}; the round's
                                           prompt, state, figure in the room hash (s_prompt, s_state, s_figure, ...)
    <prefix>rooms                    zset  code -> touched (counts rooms, finds idle ones)
    <prefix>wrong:<address hash>     hash  tries, last: wrong codes from one client address (own TTL)
Every write is one Lua script (atomic); it refreshes a 12 h TTL on all the room's keys, a backstop for
``expire``. Liveness is judged from ``touched`` and the caller's ``now`` so both backends expire alike.

``ACL_COMMANDS`` is every command the store sends or its scripts call: a Redis ACL user limited to those and to
the key pattern ``<prefix>*`` (``acl_rule``) is all it needs (deploy/cluster.py sets one up).
"""
from __future__ import annotations

import json

import redis

from . import errors
from .errors import NoSuchRoom
from .homework import already_answered_error, not_homework_error, unknown_question_error
from .ids import clock
from .polls import OPEN, ROUNDS, round_closed_error
from .redis_scripts import ANSWER, CREATE, EXPIRE, HOMEWORK, JOIN, SENTENCES, TEACHER, WRONG
from .rooms import Room, hash_key
from .sentences import closed_error, hidden_error
from .store import ClassroomStore

# Every command the store sends (reads in MULTI, scripts by EVALSHA, loaded on a NOSCRIPT) or its scripts call.
ACL_COMMANDS = (
    "ping", "select", "multi", "exec", "discard", "evalsha", "script|load",  # the client
    "hget", "hmget", "hgetall", "hvals", "hlen", "hexists", "hkeys",  # reads
    "hset", "hsetnx", "hdel", "hincrby", "sadd", "sismember", "del", "exists", "pexpire",  # scripts
    "zadd", "zrem", "zcount", "zrangebyscore",
)


def acl_rule(password_sha256: str, prefix: str = "explorer:") -> str:
    """The rule of an ACL user that may run only ACL_COMMANDS on keys ``<prefix>*``, with this password (given as
    its sha256 hex digest, so a config file need not hold it): ``ACL SETUSER name <rule>`` or a redis.conf
    ``user name <rule>`` line. No pub/sub channels, no other keys, no admin commands."""
    commands = " ".join("+" + c for c in ACL_COMMANDS)
    return f"reset on #{password_sha256} resetkeys ~{prefix}* resetchannels -@all {commands}"


class RedisStore(ClassroomStore):
    def __init__(self, client: redis.Redis | str, *, prefix: str = "explorer:", **limits):
        super().__init__(**limits)
        if isinstance(client, str):
            client = redis.Redis.from_url(client, decode_responses=True, socket_timeout=10, socket_connect_timeout=5)
        self.r, self.prefix = client, prefix
        self._scripts = {name: client.register_script(src) for name, src in
                         dict(create=CREATE, teacher=TEACHER, join=JOIN, answer=ANSWER, expire=EXPIRE,
                                  homework=HOMEWORK, wrong=WRONG, sentences=SENTENCES).items()}

    def _key(self, code: str, part: str = "") -> str:
        return f"{self.prefix}room:{{{code}}}{part}"

    def _run(self, name: str, code: str, now: float, *args) -> int:
        status, value = self._scripts[name](keys=[self._key(code), self.prefix + "rooms"],
                                            args=[repr(now), repr(now - self.ttl_s), code, *args])
        status = status.decode() if isinstance(status, bytes) else status
        if status in ("ok", "taken"):
            return int(value) if status == "ok" else -1
        raise {"noroom": errors.no_room_error, "notteacher": errors.not_teacher_error,
               "toomany": errors.too_many_rooms_error,
               "notjoined": errors.not_joined_error, "revealed": errors.revealed_error,
               "full": lambda: errors.room_full_error(self.max_students), "closed": errors.room_closed_error,
               "removed": errors.removed_error, "roundclosed": round_closed_error,
               "nothomework": not_homework_error, "unknownq": unknown_question_error,
               "answered": already_answered_error, "sclosed": closed_error, "shidden": hidden_error,
               "fromaddress": lambda: errors.from_address_error(self.seats_per_address)}[status]()

    def _read(self, code: str, now: float, *calls) -> list:
        """Run HGET touched plus ``calls`` (name, key, *args) in one MULTI; NoSuchRoom unless the room is live."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hget(self._key(code), "touched")
        for name, key, *args in calls:
            getattr(pipe, name)(key, *args)
        touched, *out = pipe.execute()
        if touched is None or float(touched) <= now - self.ttl_s:
            raise errors.no_room_error()
        return out

    # ------------------------------------------------------------------------------------------- writes
    def expire(self, now: float | None = None) -> int:
        return self._run("expire", "", clock(now), self.prefix)

    def _create(self, code, key_hash, now):
        return self._run("create", code, now, key_hash, self.max_rooms) == 0

    def _teacher_write(self, code, key, now, op, value):
        # The base class already checked the key with compare_digest; the script re-checks the digest atomically.
        return self._run("teacher", code, now, hash_key(key), op, value)

    def _close(self, code, key, now):
        self._run("teacher", code, now, hash_key(key), "close", "")

    def _join(self, code, student, nickname, address, now):
        self._run("join", code, now, student, nickname, self.max_students, address, self.seats_per_address)

    def _wrong_try(self, address, now, forget_s):
        return int(self._scripts["wrong"](keys=[self.prefix + "wrong:" + address], args=[repr(now), repr(forget_s)]))

    def _answer(self, code, qid, student, option, now):
        return self._run("answer", code, now, student, qid, option)

    def _homework_answer(self, code, qid, student, option, now):
        self._run("homework", code, now, "answer", student, qid, option)

    def _homework_step(self, code, student, step, finished, now):
        self._run("homework", code, now, "step", student, step, int(finished))

    def _sentence_write(self, code, key, op, student, value, now):
        return self._run("sentences", code, now, op, hash_key(key) if key else "", student, value)

    # ------------------------------------------------------------------------------------------- reads
    def _sentence_read(self, code, now):
        fields, sent = self._read(code, now, ("hmget", self._key(code), ["s_round", "s_prompt", "s_state", "s_figure"]),
                                  ("hgetall", self._key(code, ":sent")))
        number, prompt, state, figure = fields
        rows = sorted((json.loads(raw)["n"], sid, json.loads(raw)) for sid, raw in sent.items())
        return ((int(number or 0), prompt or "", state or "", figure or ""),
                [(sid, str(s["t"]), bool(s["h"])) for _n, sid, s in rows])

    def _homework_place(self, code, student, now):
        raw = self._read(code, now, ("hget", self._key(code, ":hw"), student))[0]
        place = json.loads(raw) if raw else {"s": 0, "f": 0}
        return int(place["s"]), bool(place["f"])

    def _homework_finished(self, code, now):
        places, students = self._read(code, now, ("hgetall", self._key(code, ":hw")),
                                      ("hkeys", self._key(code, ":students")))
        return sum(1 for sid, raw in places.items() if sid in set(students) and json.loads(raw)["f"])

    def _key_hash(self, code, now):
        try:
            return self._read(code, now, ("hget", self._key(code), "key_hash"))[0]
        except NoSuchRoom:
            return None

    def _room(self, code, now):
        try:
            (created, touched, version, locked, joinable), n = self._read(
                code, now, ("hmget", self._key(code), ["created", "touched", "version", "locked", "joinable"]),
                ("hlen", self._key(code, ":students")))
        except NoSuchRoom:
            return None
        return Room(code, float(created), float(touched), int(version), locked == "1", int(n), joinable != "0")

    def _view(self, code, now):
        version, text, locked = self._read(code, now, ("hmget", self._key(code), ["version", "view", "locked"]))[0]
        return int(version), text, locked == "1"

    def _version(self, code, now):
        return int(self._read(code, now, ("hget", self._key(code), "version"))[0])

    def _roster(self, code, now):
        return list(self._read(code, now, ("hgetall", self._key(code, ":students")))[0].items())

    def _joined(self, code, student, now):
        return bool(self._read(code, now, ("hexists", self._key(code, ":students"), student))[0])

    def _wrong_state(self, address, now, forget_s):
        tries, last = self.r.hmget(self.prefix + "wrong:" + address, ["tries", "last"])
        if tries is None or last is None or float(last) <= now - forget_s:
            return None
        return int(tries), float(last)

    def _votes(self, code: str, qid: str, round_: int) -> str:
        return self._key(code, f":q:{qid}" if round_ == 1 else f":q{round_}:{qid}")

    def _with_round(self, code, qid, now, call: str, *args) -> tuple[int, str, list]:
        """(round, state, [``call`` on each round's votes]) of a question, in one MULTI."""
        raw, *out = self._read(code, now, ("hget", self._key(code, ":polls"), qid),
                               *((call, self._votes(code, qid, r), *args) for r in range(1, ROUNDS + 1)))
        poll = json.loads(raw) if raw else {"r": 1, "s": OPEN}
        return int(poll["r"]), poll["s"], out

    def _poll(self, code, qid, now):
        round_, state, sizes = self._with_round(code, qid, now, "hlen")
        return round_, state, int(sizes[round_ - 1])

    def _counts(self, code, qid, round_, now):
        current, _, values = self._with_round(code, qid, now, "hvals")
        tally: dict[str, int] = {}
        for option in values[(round_ or current) - 1]:
            tally[option] = tally.get(option, 0) + 1
        return tally

    def _my_answer(self, code, qid, student, round_, now):
        current, _, mine = self._with_round(code, qid, now, "hget", student)
        return mine[(round_ or current) - 1]

    def _polls(self, code, now) -> dict[str, dict]:
        polls = self._read(code, now, ("hgetall", self._key(code, ":polls")))[0]
        return {q: json.loads(raw) for q, raw in polls.items()}

    def _my_answers(self, code, student, now):
        asked = [(q, r) for q in self._polls(code, now) for r in range(1, ROUNDS + 1)]
        pipe = self.r.pipeline(transaction=True)
        for q, r in asked:
            pipe.hget(self._votes(code, q, r), student)
        return [(q, r, option) for (q, r), option in zip(asked, pipe.execute()) if option is not None]

    def _questions(self, code, now):
        polls = sorted(self._polls(code, now).items(), key=lambda item: (item[1]["n"], item[0]))
        return [(q, int(p["r"]), p["s"], p["a"] or None) for q, p in polls]
