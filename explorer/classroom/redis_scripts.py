"""The Redis classroom store's Lua scripts: every write is one script, so it is atomic. ``RedisStore`` (in
``redis_store.py``) loads them; ``polls.next_state`` is the Python twin of TEACHER's show / again / reveal, and
the loops over a question's rounds run to 2 (``polls.ROUNDS``; a test checks)."""
from __future__ import annotations

# KEYS: room hash, rooms zset. ARGV: now, cutoff (= now - ttl, from Python so every backend compares the same
# doubles; Lua's tostring would round them), code. Defines live(), touch(), drop(room, code).
PRELUDE = """
local R, IDX = KEYS[1], KEYS[2]
local now, cutoff, code = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local function live()
  local t = redis.call('HGET', R, 'touched')
  return t and tonumber(t) > cutoff
end
local P = R .. ':polls'
local function votes(room, q, r)   -- the hash of a round's votes
  if r == 1 then return room .. ':q:' .. q end
  return room .. ':q' .. r .. ':' .. q
end
local function touch()
  redis.call('HSET', R, 'touched', ARGV[1])
  redis.call('ZADD', IDX, ARGV[1], code)  -- a string: Lua numbers reach Redis as integers
  local ms = math.floor((now - cutoff) * 1000)
  for _, k in ipairs({R, R .. ':students', P, R .. ':addr', R .. ':removed', R .. ':hw', R .. ':sent'}) do
    redis.call('PEXPIRE', k, ms)
  end
  for _, q in ipairs(redis.call('HKEYS', P)) do
    for r = 1, 2 do redis.call('PEXPIRE', votes(R, q, r), ms) end
  end
end
local function drop(room, c)
  for _, q in ipairs(redis.call('HKEYS', room .. ':polls')) do
    for r = 1, 2 do redis.call('DEL', votes(room, q, r)) end
  end
  redis.call('DEL', room, room .. ':students', room .. ':polls', room .. ':addr', room .. ':removed', room .. ':hw',
             room .. ':sent')
  redis.call('ZREM', IDX, c)
end
local function poll(q)   -- a question's poll, made (round 1, open; numbered after the others) when new
  local raw = redis.call('HGET', P, q)
  if raw then return cjson.decode(raw) end
  local p = {r = 1, s = 'open', n = redis.call('HLEN', P) + 1, a = ''}
  redis.call('HSET', P, q, cjson.encode(p))
  return p
end
"""
# ARGV[4] key_hash, ARGV[5] max_rooms
CREATE = PRELUDE + """
if redis.call('EXISTS', R) == 1 then return {'taken', 0} end
if redis.call('ZCOUNT', IDX, '(' .. ARGV[2], '+inf') >= tonumber(ARGV[5]) then return {'toomany', 0} end
redis.call('HSET', R, 'key_hash', ARGV[4], 'created', ARGV[1], 'version', 0, 'locked', 0, 'view', '{}',
           'joinable', 1)
touch()
return {'ok', 0}
"""
# ARGV[4] key_hash, ARGV[5] op (view|lock|remove|joinable|close|ask|show|again|reveal), ARGV[6] value (remove: JSON
# list of ids; ask: JSON [qid, question]; show, again, reveal: JSON [qid, round or null])
TEACHER = PRELUDE + """
if not live() then return {'noroom', 0} end
if redis.call('HGET', R, 'key_hash') ~= ARGV[4] then return {'notteacher', 0} end
local op = ARGV[5]
if op == 'close' then drop(R, code) return {'ok', 0} end
if op == 'joinable' then
  redis.call('HSET', R, 'joinable', ARGV[6])
  touch()
  return {'ok', tonumber(redis.call('HGET', R, 'version'))}
end
if op == 'ask' then   -- kept as it was once a round has closed (unless none was stored); the version stays
  local a = cjson.decode(ARGV[6])
  local p = poll(a[1])
  if (p.r == 1 and p.s == 'open') or p.a == '' then
    p.a = a[2]
    redis.call('HSET', P, a[1], cjson.encode(p))
  end
  touch()
  return {'ok', tonumber(redis.call('HGET', R, 'version'))}
end
if op == 'view' then redis.call('HSET', R, 'view', ARGV[6])
elseif op == 'lock' then redis.call('HSET', R, 'locked', ARGV[6])
elseif op == 'remove' then
  local open = {}
  for _, q in ipairs(redis.call('HKEYS', P)) do
    if cjson.decode(redis.call('HGET', P, q)).s ~= 'revealed' then open[#open + 1] = q end
  end
  for _, sid in ipairs(cjson.decode(ARGV[6])) do
    redis.call('HDEL', R .. ':students', sid)
    redis.call('HDEL', R .. ':addr', sid)
    redis.call('SADD', R .. ':removed', sid)
    redis.call('HDEL', R .. ':sent', sid)
    for _, q in ipairs(open) do
      for r = 1, 2 do redis.call('HDEL', votes(R, q, r), sid) end
    end
  end
else   -- show | again | reveal: polls.next_state, in Lua
  local a = cjson.decode(ARGV[6])
  local p, expected = poll(a[1]), a[2]
  if p.s ~= 'revealed' and (expected == cjson.null or expected == p.r or op == 'reveal') then
    if op == 'reveal' then p.s = 'revealed'
    elseif op == 'show' and p.s == 'open' then
      if p.r >= 2 then p.s = 'revealed' else p.s = 'shown' end
    elseif op == 'again' and p.s == 'shown' and p.r < 2 then p.r = p.r + 1; p.s = 'open' end
  end
  redis.call('HSET', P, a[1], cjson.encode(p))
end
local v = redis.call('HINCRBY', R, 'version', 1)
touch()
return {'ok', v}
"""
# ARGV[4] student, ARGV[5] nickname, ARGV[6] max_students, ARGV[7] address hash ('' unknown), ARGV[8] seats/address
JOIN = PRELUDE + """
if not live() then return {'noroom', 0} end
local S, A = R .. ':students', R .. ':addr'
if redis.call('SISMEMBER', R .. ':removed', ARGV[4]) == 1 then return {'removed', 0} end
if redis.call('HEXISTS', S, ARGV[4]) == 0 then
  if redis.call('HGET', R, 'joinable') == '0' then return {'closed', 0} end
  if redis.call('HLEN', S) >= tonumber(ARGV[6]) then return {'full', 0} end
  local cap = tonumber(ARGV[8])
  if ARGV[7] ~= '' and cap > 0 then
    local n = 0
    for _, a in ipairs(redis.call('HVALS', A)) do if a == ARGV[7] then n = n + 1 end end
    if n >= cap then return {'fromaddress', 0} end
  end
  redis.call('HSET', A, ARGV[4], ARGV[7])
end
redis.call('HSET', S, ARGV[4], ARGV[5])
touch()
return {'ok', 0}
"""
# ARGV[4] student, ARGV[5] question id, ARGV[6] option
ANSWER = PRELUDE + """
if not live() then return {'noroom', 0} end
if redis.call('HEXISTS', R .. ':students', ARGV[4]) == 0 then return {'notjoined', 0} end
local p = poll(ARGV[5])
if p.s == 'revealed' then return {'revealed', 0} end
if p.s ~= 'open' then return {'roundclosed', 0} end
redis.call('HSET', votes(R, ARGV[5], p.r), ARGV[4], ARGV[6])
touch()
return {'ok', p.r}
"""
# Homework (explorer.classroom.homework). ARGV[4] op (answer|step), ARGV[5] student; answer: ARGV[6] question id,
# ARGV[7] option (round 1's vote, once: HSETNX); step: ARGV[6] step, ARGV[7] finished (0|1), the larger ones kept
# in the room's ':hw' hash (student -> {"s": step, "f": finished}).
HOMEWORK = PRELUDE + """
if not live() then return {'noroom', 0} end
local op = ARGV[4]
if op == 'answer' then
  local view = cjson.decode(redis.call('HGET', R, 'view'))
  if type(view) ~= 'table' or view['homework'] == nil then return {'nothomework', 0} end
end
if redis.call('HEXISTS', R .. ':students', ARGV[5]) == 0 then return {'notjoined', 0} end
if op == 'answer' then
  local raw = redis.call('HGET', P, ARGV[6])
  if not raw then return {'unknownq', 0} end
  local p = cjson.decode(raw)
  if p.a == '' then return {'unknownq', 0} end
  local a = cjson.decode(p.a)
  if not a.typed then
    local found = false
    for i, o in ipairs(a.options) do if o == ARGV[7] or ('#' .. (i - 1)) == ARGV[7] then found = true end end
    if not found then return {'unknownq', 0} end
  end
  if redis.call('HSETNX', votes(R, ARGV[6], 1), ARGV[5], ARGV[7]) == 0 then return {'answered', 0} end
else
  local H = R .. ':hw'
  local s, f = tonumber(ARGV[6]), tonumber(ARGV[7])
  local old = redis.call('HGET', H, ARGV[5])
  if old then
    local o = cjson.decode(old)
    s, f = math.max(s, o.s), math.max(f, o.f)
  end
  redis.call('HSET', H, ARGV[5], cjson.encode({s = s, f = f}))
end
touch()
return {'ok', 0}
"""
# The class's sentences (explorer.classroom.sentences). ARGV[4] op (open|close|show|hide: the teacher's; write: a
# student's), ARGV[5] key_hash (teacher) or '', ARGV[6] student ('' for open, close, show), ARGV[7] value (open: the
# prompt; show: the figure's JSON; write: the sentence). The round lives in the room hash (s_round, s_prompt, s_state,
# s_figure, s_next); the sentences in ':sent' (student -> {"t": text, "n": order, "h": 0|1}).
SENTENCES = PRELUDE + """
if not live() then return {'noroom', 0} end
local op, T = ARGV[4], R .. ':sent'
if op == 'write' then
  if redis.call('HEXISTS', R .. ':students', ARGV[6]) == 0 then return {'notjoined', 0} end
  if redis.call('HGET', R, 's_state') ~= 'open' then return {'sclosed', 0} end
  local old = redis.call('HGET', T, ARGV[6])
  local n = tonumber(redis.call('HINCRBY', R, 's_next', 1))
  if old then
    local o = cjson.decode(old)
    if o.h == 1 then return {'shidden', 0} end
    n = o.n
  end
  redis.call('HSET', T, ARGV[6], cjson.encode({t = ARGV[7], n = n, h = 0}))
  touch()
  return {'ok', 0}
end
if redis.call('HGET', R, 'key_hash') ~= ARGV[5] then return {'notteacher', 0} end
if op == 'open' then
  redis.call('DEL', T)
  redis.call('HINCRBY', R, 's_round', 1)
  redis.call('HSET', R, 's_prompt', ARGV[7], 's_state', 'open', 's_figure', '', 's_next', 0)
elseif op == 'close' then
  if redis.call('HGET', R, 's_state') == 'open' then redis.call('HSET', R, 's_state', 'closed') end
elseif op == 'show' then
  if redis.call('HGET', R, 's_state') then redis.call('HSET', R, 's_state', 'shown', 's_figure', ARGV[7]) end
else   -- hide
  local old = redis.call('HGET', T, ARGV[6])
  if old then
    local o = cjson.decode(old)
    o.h = 1
    redis.call('HSET', T, ARGV[6], cjson.encode(o))
  end
end
local v = redis.call('HINCRBY', R, 'version', 1)
touch()
return {'ok', v}
"""
# KEYS[1] the address's key. ARGV: now, forget_s. A try more than forget_s after the last one starts again at 1.
WRONG = """
local last = tonumber(redis.call('HGET', KEYS[1], 'last'))
local tries = 1
if last and last > tonumber(ARGV[1]) - tonumber(ARGV[2]) then
  tries = tonumber(redis.call('HGET', KEYS[1], 'tries')) + 1
end
redis.call('HSET', KEYS[1], 'tries', tries, 'last', ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[2]) * 1000))
return tries
"""
# ARGV[4] key prefix; deletes every room with touched <= cutoff
EXPIRE = PRELUDE + """
local gone = redis.call('ZRANGEBYSCORE', IDX, '-inf', ARGV[2])
for _, c in ipairs(gone) do drop(ARGV[4] .. 'room:{' .. c .. '}', c) end
return {'ok', #gone}
"""
