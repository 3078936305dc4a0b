"""Redis backend of the classroom store (redis-py 8.1, any Redis >= 6).

Keys of one room share the hash tag ``{CODE}`` (one cluster slot):
    <prefix>room:{CODE}              hash  key_hash, created, touched, version, locked, view (JSON)
    <prefix>room:{CODE}:students     hash  student id -> nickname
    <prefix>room:{CODE}:questions    set   question ids that have answers
    <prefix>room:{CODE}:q:<qid>      hash  student id -> option
    <prefix>room:{CODE}:revealed     set   revealed question ids
    <prefix>rooms                    zset  code -> touched (counts rooms, finds idle ones)
Every write is one Lua script (atomic); it refreshes a 12 h TTL on all the room's keys, a backstop for
``expire``. Liveness is judged from ``touched`` and the caller's ``now`` so both backends expire alike.
"""
from __future__ import annotations

import redis

from .store import (
    ClassroomStore,
    NoSuchRoom,
    Room,
    _frozen,
    _full,
    _no_room,
    _not_joined,
    _not_teacher,
    _now,
    _too_many,
    hash_key,
)

# KEYS: room hash, rooms zset. ARGV: now, cutoff (= now - ttl, from Python so every backend compares the same
# doubles; Lua's tostring would round them), code. Defines live(), touch(), drop(room, code).
_PRELUDE = """
local R, IDX = KEYS[1], KEYS[2]
local now, cutoff, code = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local function live()
  local t = redis.call('HGET', R, 'touched')
  return t and tonumber(t) > cutoff
end
local function touch()
  redis.call('HSET', R, 'touched', ARGV[1])
  redis.call('ZADD', IDX, ARGV[1], code)  -- a string: Lua numbers reach Redis as integers
  local ms = math.floor((now - cutoff) * 1000)
  for _, k in ipairs({R, R .. ':students', R .. ':questions', R .. ':revealed'}) do redis.call('PEXPIRE', k, ms) end
  for _, q in ipairs(redis.call('SMEMBERS', R .. ':questions')) do redis.call('PEXPIRE', R .. ':q:' .. q, ms) end
end
local function drop(room, c)
  for _, q in ipairs(redis.call('SMEMBERS', room .. ':questions')) do redis.call('DEL', room .. ':q:' .. q) end
  redis.call('DEL', room, room .. ':students', room .. ':questions', room .. ':revealed')
  redis.call('ZREM', IDX, c)
end
"""
# ARGV[4] key_hash, ARGV[5] max_rooms
_CREATE = _PRELUDE + """
if redis.call('EXISTS', R) == 1 then return {'taken', 0} end
if redis.call('ZCOUNT', IDX, '(' .. ARGV[2], '+inf') >= tonumber(ARGV[5]) then return {'toomany', 0} end
redis.call('HSET', R, 'key_hash', ARGV[4], 'created', ARGV[1], 'version', 0, 'locked', 0, 'view', '{}')
touch()
return {'ok', 0}
"""
# ARGV[4] key_hash, ARGV[5] op (view|lock|reveal|close), ARGV[6] value
_TEACHER = _PRELUDE + """
if not live() then return {'noroom', 0} end
if redis.call('HGET', R, 'key_hash') ~= ARGV[4] then return {'notteacher', 0} end
local op = ARGV[5]
if op == 'close' then drop(R, code) return {'ok', 0} end
if op == 'view' then redis.call('HSET', R, 'view', ARGV[6])
elseif op == 'lock' then redis.call('HSET', R, 'locked', ARGV[6])
else redis.call('SADD', R .. ':revealed', ARGV[6]) end
local v = redis.call('HINCRBY', R, 'version', 1)
touch()
return {'ok', v}
"""
# ARGV[4] student, ARGV[5] nickname, ARGV[6] max_students
_JOIN = _PRELUDE + """
if not live() then return {'noroom', 0} end
local S = R .. ':students'
if redis.call('HEXISTS', S, ARGV[4]) == 0 and redis.call('HLEN', S) >= tonumber(ARGV[6]) then return {'full', 0} end
redis.call('HSET', S, ARGV[4], ARGV[5])
touch()
return {'ok', 0}
"""
# ARGV[4] student, ARGV[5] question id, ARGV[6] option
_ANSWER = _PRELUDE + """
if not live() then return {'noroom', 0} end
if redis.call('HEXISTS', R .. ':students', ARGV[4]) == 0 then return {'notjoined', 0} end
if redis.call('SISMEMBER', R .. ':revealed', ARGV[5]) == 1 then return {'revealed', 0} end
redis.call('HSET', R .. ':q:' .. ARGV[5], ARGV[4], ARGV[6])
redis.call('SADD', R .. ':questions', ARGV[5])
touch()
return {'ok', 0}
"""
# ARGV[4] key prefix; deletes every room with touched <= cutoff
_EXPIRE = _PRELUDE + """
local gone = redis.call('ZRANGEBYSCORE', IDX, '-inf', ARGV[2])
for _, c in ipairs(gone) do drop(ARGV[4] .. 'room:{' .. c .. '}', c) end
return {'ok', #gone}
"""


class RedisStore(ClassroomStore):
    def __init__(self, client: redis.Redis | str, *, prefix: str = "explorer:", **limits):
        super().__init__(**limits)
        if isinstance(client, str):
            client = redis.Redis.from_url(client, decode_responses=True, socket_timeout=10, socket_connect_timeout=5)
        self.r, self.prefix = client, prefix
        self._scripts = {name: client.register_script(src) for name, src in
                         dict(create=_CREATE, teacher=_TEACHER, join=_JOIN, answer=_ANSWER, expire=_EXPIRE).items()}

    def _key(self, code: str, part: str = "") -> str:
        return f"{self.prefix}room:{{{code}}}{part}"

    def _run(self, name: str, code: str, now: float, *args) -> int:
        status, value = self._scripts[name](keys=[self._key(code), self.prefix + "rooms"],
                                            args=[repr(now), repr(now - self.ttl_s), code, *args])
        status = status.decode() if isinstance(status, bytes) else status
        if status in ("ok", "taken"):
            return int(value) if status == "ok" else -1
        raise {"noroom": _no_room, "notteacher": _not_teacher, "toomany": _too_many, "notjoined": _not_joined,
               "revealed": _frozen, "full": lambda: _full(self.max_students)}[status]()

    def _read(self, code: str, now: float, *calls) -> list:
        """Run HGET touched plus ``calls`` (name, key, *args) in one MULTI; NoSuchRoom unless the room is live."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hget(self._key(code), "touched")
        for name, key, *args in calls:
            getattr(pipe, name)(key, *args)
        touched, *out = pipe.execute()
        if touched is None or float(touched) <= now - self.ttl_s:
            raise _no_room()
        return out

    # ------------------------------------------------------------------------------------------- writes
    def expire(self, now: float | None = None) -> int:
        return self._run("expire", "", _now(now), self.prefix)

    def _create(self, code, key_hash, now):
        return self._run("create", code, now, key_hash, self.max_rooms) == 0

    def _teacher_write(self, code, key, now, op, value):
        # The base class already checked the key with compare_digest; the script re-checks the digest atomically.
        return self._run("teacher", code, now, hash_key(key), op, value)

    def _close(self, code, key, now):
        self._run("teacher", code, now, hash_key(key), "close", "")

    def _join(self, code, student, nickname, now):
        self._run("join", code, now, student, nickname, self.max_students)

    def _answer(self, code, qid, student, option, now):
        self._run("answer", code, now, student, qid, option)

    # ------------------------------------------------------------------------------------------- reads
    def _key_hash(self, code, now):
        try:
            return self._read(code, now, ("hget", self._key(code), "key_hash"))[0]
        except NoSuchRoom:
            return None

    def _room(self, code, now):
        try:
            (created, touched, version, locked), n = self._read(
                code, now, ("hmget", self._key(code), ["created", "touched", "version", "locked"]),
                ("hlen", self._key(code, ":students")))
        except NoSuchRoom:
            return None
        return Room(code, float(created), float(touched), int(version), locked == "1", int(n))

    def _view(self, code, now):
        version, text, locked = self._read(code, now, ("hmget", self._key(code), ["version", "view", "locked"]))[0]
        return int(version), text, locked == "1"

    def _version(self, code, now):
        return int(self._read(code, now, ("hget", self._key(code), "version"))[0])

    def _nicknames(self, code, now):
        return self._read(code, now, ("hvals", self._key(code, ":students")))[0]

    def _counts(self, code, qid, now):
        tally: dict[str, int] = {}
        for option in self._read(code, now, ("hvals", self._key(code, ":q:" + qid)))[0]:
            tally[option] = tally.get(option, 0) + 1
        return tally

    def _my_answer(self, code, qid, student, now):
        return self._read(code, now, ("hget", self._key(code, ":q:" + qid), student))[0]

    def _revealed(self, code, now):
        return set(self._read(code, now, ("smembers", self._key(code, ":revealed")))[0])

