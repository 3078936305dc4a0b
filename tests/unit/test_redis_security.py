"""The classroom's Redis as deploy/cluster.py sets it up, on a real redis-server: a password (an ACL user with only
the store's commands and keys) and, for replicas on other machines, TLS with a private CA. Nobody without the
password gets in; the store works with the ACL user's URL, and nothing beyond it."""
import subprocess
from pathlib import Path

import pytest
import redis
from chromium import free_port
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis_server import need_redis_server

from deploy.cluster import REDIS_USER, redis_url, start_redis
from explorer.classroom import RedisStore, Removed


def has_tls(exe: str) -> bool:
    """Does this redis-server build speak TLS? A build without it rejects the tls-port directive itself."""
    done = subprocess.run([exe, "--port", "0", "--tls-port", str(free_port())], capture_output=True, text=True,
                          timeout=20, check=False)
    out = done.stdout + done.stderr
    return "No tls-cert-file configured" in out or "Failed to configure TLS" in out   # it got as far as the files


@pytest.fixture
def locked(tmp_path):
    need_redis_server()
    started = []

    def start(tls: bool = False):
        proc, url, password = start_redis(tmp_path / f"redis{len(started)}", tmp_path, free_port(), tls=tls)
        started.append(proc)
        return url, password
    yield start
    for proc in started:
        proc.stop()


def use_the_whole_store(store: RedisStore) -> None:
    """Every store operation once, so a command missing from the ACL fails here."""
    code, key = store.create_room()
    store.set_view(code, key, {"page": "p"})
    store.set_lock(code, key, True)
    store.join(code, "s0", "Ann", address="192.0.2.1")
    store.join(code, "s1", "Bob")
    store.answer(code, "q", "s0", "A")
    store.answer(code, "q2", "s1", "B")
    store.ask(code, key, "q2", "Which?", ["A", "B"], "B")
    store.show(code, key, "q2", round=1)
    store.again(code, key, "q2", round=1)
    assert store.answer(code, "q2", "s0", "B") == 2 and store.progress(code, "q2").answered == 1
    assert store.counts(code, "q2", round=1) == {"B": 1} and store.my_answers(code, "s1") == {"q2": {1: "B"}}
    assert [q.qid for q in store.questions(code)] == ["q", "q2"]
    store.reveal(code, key, "q")
    assert store.counts(code, "q") == {"A": 1} and store.my_answer(code, "q", "s0") == "A"
    assert store.revealed(code) == {"q"} and store.nicknames(code, key) == ["Ann", "Bob"]
    store.remove(code, key, ["s1"])
    store.set_joinable(code, key, False)
    assert store.joined(code, "s0") and not store.joined(code, "s1") and store.room(code).joinable is False
    assert store.view(code)[1] == {"page": "p", "locked": True} and store.version(code) == 6   # show and again too
    assert store.wrong_code("192.0.2.9") == 0 and store.code_wait("192.0.2.9") == 0
    assert store.expire() == 0
    store.close(code, key)
    assert store.room(code) is None


# a client that reports a refusal at once: redis-py's default retries a refused connection (an AuthenticationError
# is a ConnectionError) three times with ~1 s, 2 s, 4 s backoffs, the same error in the end (12 s of this file)
ONCE = Retry(NoBackoff(), 0)


def refused(url: str, **kw) -> Exception:
    """The error a client gets for a PING and a read of the store's index at ``url``."""
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3, retry=ONCE, **kw)
    for call in (client.ping, lambda: client.zcard("explorer:rooms")):
        with pytest.raises(redis.exceptions.RedisError) as info:
            call()
    client.close()
    return info.value


def test_without_the_password_nobody_reads_or_writes_and_the_acl_user_can_only_use_the_store(locked):
    url, password = locked()
    store = RedisStore(url)
    use_the_whole_store(store)
    code, _ = store.create_room()
    host_port = url.split("@")[1].split("/")[0]
    assert isinstance(refused(f"redis://{host_port}/0"), redis.exceptions.AuthenticationError)   # no password
    for wrong in ("wrong", password[:-1], ""):
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis.from_url(redis_url("127.0.0.1", int(host_port.split(":")[1]), wrong or "x"), retry=ONCE).ping()
    for guess in (password, "", "default"):   # the default user has no password left: no AUTH opens it
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=int(host_port.split(":")[1]), username="default", password=guess or "x",
                        retry=ONCE).ping()
    # The ACL user itself: the store's commands on the store's keys, nothing else.
    r = redis.Redis.from_url(url, decode_responses=True)
    assert r.ping() and r.hget(f"explorer:room:{{{code}}}", "version") == "0"
    denied = [lambda: r.keys("*"), r.flushall, lambda: r.config_get("dir"), lambda: r.get("explorer:x"),
              lambda: r.set("explorer:x", "1"), lambda: r.hget("other:room", "view"),
              lambda: r.hset("other:room", "view", "x"), lambda: r.eval("return 1", 0), r.acl_list,
              lambda: r.publish("explorer:chan", "hi"), r.shutdown]
    for call in denied:
        with pytest.raises(redis.exceptions.NoPermissionError):
            call()
    sha = r.script_load("return redis.call('FLUSHALL')")   # a script runs with the user's rights, no more
    with pytest.raises(redis.exceptions.ResponseError, match="can't run this command"):
        r.evalsha(sha, 0)
    assert store.room(code) is not None   # nothing was flushed


def test_tls_between_machines_checks_the_certificate_and_still_needs_the_password(locked):
    exe = need_redis_server()
    if not has_tls(exe):
        pytest.skip(f"{exe} was built without TLS (it rejects --tls-port)")
    url, password = locked(tls=True)
    assert url.startswith(f"rediss://{REDIS_USER}:") and "ssl_ca_certs=" in url
    use_the_whole_store(RedisStore(url))
    plain = url.replace("rediss://", "redis://").split("?")[0]
    assert isinstance(refused(plain), redis.exceptions.ConnectionError)   # no plain-text port at all
    unverified = refused(url.split("?")[0])   # TLS, but not trusting our CA: the certificate is refused
    assert "CERTIFICATE_VERIFY_FAILED" in str(unverified)
    no_password = url.replace(f"{REDIS_USER}:{password}@", "")
    assert isinstance(refused(no_password), redis.exceptions.AuthenticationError)
    ca = Path(url.split("ssl_ca_certs=")[1])
    assert ca.name == "ca.crt" and (ca.parent / "redis.key").stat().st_mode & 0o077 == 0   # the key: owner only
    assert (ca.parent.parent / "redis.conf").stat().st_mode & 0o077 == 0
    assert password not in (ca.parent.parent / "redis.conf").read_text()   # only its sha256 digest is stored


def test_a_restart_of_the_locked_redis_keeps_every_room(tmp_path):
    """Redis 7.0 replays its append-only file as the default user and re-checks each MULTI/EXEC block (our
    scripts' effects) against that user: with the default user switched off, every room vanished on a restart."""
    need_redis_server()
    port, folder = free_port(), tmp_path / "redis"
    proc, url, password = start_redis(folder, tmp_path, port)
    try:
        store = RedisStore(url)
        code, key = store.create_room()
        store.set_view(code, key, {"page": "p"})
        store.join(code, "s0", "Ann", address="192.0.2.1")
        store.answer(code, "q", "s0", "A")
        store.remove(code, key, ["gone"])
        store.set_joinable(code, key, False)
    finally:
        proc.stop()
    proc, again_url, _ = start_redis(folder, tmp_path, port, password=password)
    try:
        again = RedisStore(again_url)
        assert again_url == url and again.view(code) == (2, {"page": "p", "locked": False})
        assert again.roster(code, key) == [("s0", "Ann")] and again.counts(code, "q") == {"A": 1}
        assert again.room(code).joinable is False
        with pytest.raises(Removed):
            again.join(code, "gone", "back")
    finally:
        proc.stop()
