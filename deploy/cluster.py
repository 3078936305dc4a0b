"""Several Streamlit replicas of the app behind one HAProxy with cookie affinity, on one machine.

    python deploy/cluster.py N [--port 8500] [--redis [--redis-host ADDR] [--redis-tls]] [--data-dir .cluster]

starts (with --redis) a redis-server with append-only persistence and hands its URL to every replica as
EXPLORER_CLASSROOM_URL, then N ``streamlit run app.py`` replicas on free loopback ports, waits until each
answers /_explorer/ready (up, both embedded models and the pages' imports loaded), then HAProxy in the
foreground on --port, and prints the URL. Ctrl+C or SIGTERM stops all.
Redis is locked: nobody can log in as its default user, and the one user ``explorer`` has a fresh random password
and may run only the store's commands on the store's keys (``acl_rule``). On a non-loopback --redis-host (replicas
on other machines) it also speaks only TLS, with a certificate from a private CA made here (openssl); clients
check it.
The replicas trust one proxy (EXPLORER_TRUSTED_PROXIES=1): HAProxy's X-Forwarded-For names each student's address.
Every child runs in its own process group (stopped as a group) and gets SIGTERM if the launcher itself dies.

Tests use it as a library: ``Cluster(n, port=None, redis=False, affinity=True).start()`` … ``.stop()``.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import ipaddress
import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Self
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:   # run as a script: deploy/ is on the path, the project root is not
    sys.path.insert(0, str(ROOT))
from explorer.classroom import acl_rule  # noqa: E402

REDIS_USER = "explorer"
TEMPLATE = Path(__file__).with_name("haproxy.cfg.template")
COOKIE = "EXPLORER_REPLICA"
COOKIE_BLOCK = f"""\
    # Affinity: HAProxy adds Set-Cookie {COOKIE}=<the replica's name> to a browser's first response.
    #   insert   HAProxy sets the cookie itself; Streamlit knows nothing about it
    #   indirect the cookie is stripped from requests before they reach a replica, and is only set again when
    #            the browser was (re)balanced, e.g. after its replica died
    #   nocache  a response that sets it is marked uncacheable, so no shared cache hands one pin to everyone
    #   httponly page scripts cannot read it
    cookie {COOKIE} insert indirect nocache httponly"""
NO_COOKIE_BLOCK = "    # Affinity OFF (tests only): every request goes to the next replica in turn; downloads break."


PRELOAD = "all-MiniLM-L6-v2,SmolLM2-135M-Instruct"   # the embedded models (explorer.model.registry.EMBEDDED)

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


try:
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl   # Linux; looked up here, not in the forked child
except (OSError, AttributeError):
    _PRCTL = None


def _die_with_parent():
    """In the child between fork and exec: ask the kernel for SIGTERM when the launcher dies (PR_SET_PDEATHSIG)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)


def haproxy_config(ports: list[int], bind: str, affinity: bool = True) -> str:
    """The HAProxy configuration text: a frontend on ``bind`` (host:port), one server line per replica port."""
    servers = "\n".join(f"    server r{i} 127.0.0.1:{p}" + (f" cookie r{i}" if affinity else "")
                        for i, p in enumerate(ports))
    return string.Template(TEMPLATE.read_text()).substitute(
        bind=bind, servers=servers, cookie_block=COOKIE_BLOCK if affinity else NO_COOKIE_BLOCK)


def check_config(path: Path) -> None:
    """Raise with HAProxy's own message when ``haproxy -c`` rejects the file."""
    done = subprocess.run(["haproxy", "-c", "-q", "-f", str(path)], check=False, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"haproxy -c rejected {path}:\n{done.stdout}{done.stderr}")


@dataclass
class Proc:
    """One child: its process, its port and its log file."""
    name: str
    port: int
    popen: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 10) -> None:
        """SIGTERM to the whole process group, SIGKILL after ``grace`` seconds."""
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
            if not self.alive():
                break
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.popen.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        self.popen.poll()


def _spawn(name: str, port: int, argv: list[str], logs: Path, env: dict | None = None) -> Proc:
    log = logs / f"{name}-{port}.log"
    with open(log, "w") as out:
        popen = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, start_new_session=True,   # own process group: stopped as one
                                 preexec_fn=_die_with_parent)  # noqa: PLW1509 - only a prctl call, no locks
    return Proc(name, port, popen, log)


def _wait(ready, proc: Proc, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{what} exited with {proc.popen.returncode}; see {proc.log}")
        if ready():
            return
        time.sleep(0.3)
    raise RuntimeError(f"{what} not ready after {timeout:.0f} s; see {proc.log}")


def healthy(url: str) -> bool:
    """The replica (or HAProxy in front of one) answers app.py's readiness route: up, and its preload done."""
    try:
        return urllib.request.urlopen(url + "/_explorer/ready", timeout=2).read() == b"ready"
    except OSError:   # HTTPError (503 "loading") included
        return False


def redis_ping(url: str) -> bool:
    """The server at ``url`` answers PING to this user (password, TLS and certificate checked)."""
    import redis
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.exceptions.RedisError, OSError):
        return False


def _openssl(*args: str | Path) -> None:
    done = subprocess.run(["openssl", *map(str, args)], check=False, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"openssl {args[0]} failed:\n{done.stderr}")


def make_tls_files(folder: Path, hosts: list[str], days: int = 825) -> dict[str, Path]:
    """A private CA and a server certificate for ``hosts`` (IP addresses or DNS names), made with the openssl CLI in
    ``folder`` (mode 700) -> paths {"ca", "cert", "key"}. Replicas trust only this CA; copy ca.crt to them."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    f = {name: folder / name for name in ("ca.key", "ca.crt", "redis.key", "redis.csr", "redis.crt", "san.ext")}
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", f["ca.key"], "-out", f["ca.crt"], "-days", str(days),
             "-subj", "/CN=attention-explorer classroom CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _openssl("req", "-new", *ec, "-keyout", f["redis.key"], "-out", f["redis.csr"],
             "-subj", "/CN=attention-explorer classroom redis")

    def san(host: str) -> str:
        try:
            return f"IP:{ipaddress.ip_address(host)}"
        except ValueError:
            return f"DNS:{host}"
    f["san.ext"].write_text(f"subjectAltName={','.join(san(h) for h in dict.fromkeys(hosts))}\n"
                            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                            "extendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", f["redis.csr"], "-CA", f["ca.crt"], "-CAkey", f["ca.key"], "-CAcreateserial",
             "-out", f["redis.crt"], "-days", str(days), "-extfile", f["san.ext"])
    for key in (f["ca.key"], f["redis.key"]):
        key.chmod(0o600)
    return {"ca": f["ca.crt"], "cert": f["redis.crt"], "key": f["redis.key"]}


def redis_conf(port: int, host: str, data: Path, password: str, tls: dict[str, Path] | None = None,
               prefix: str = "explorer:") -> str:
    """redis.conf text: persistence, a default user nobody can log in as, one ACL user for the store (its password
    only as a sha256 digest), and with ``tls`` (make_tls_files) TLS only: no plain-text port at all.

    The default user keeps all rights but has no password at all (``resetpass``: no AUTH opens it, and a new
    connection is no longer logged in as it). It is neither switched ``off`` nor stripped of commands: Redis 7.0
    replays the append-only file as the default user and re-checks each MULTI/EXEC block (our scripts' effects)
    against its rights, so every room silently vanished on a restart (redis/redis#14541, valkey#3983; the restart
    test catches it). A ``user`` line starts from ``reset``, so its rights are spelled out."""
    digest = hashlib.sha256(password.encode()).hexdigest()
    lines = [f"bind {host}", "protected-mode yes", f'dir "{data}"', "appendonly yes", "appendfsync everysec",
             'save ""', "user default on resetpass ~* &* +@all", f"user {REDIS_USER} {acl_rule(digest, prefix)}"]
    if tls:
        lines += ["port 0", f"tls-port {port}", f'tls-cert-file "{tls["cert"]}"', f'tls-key-file "{tls["key"]}"',
                  f'tls-ca-cert-file "{tls["ca"]}"', "tls-auth-clients no"]
    else:
        lines.append(f"port {port}")
    return "\n".join(lines) + "\n"


def redis_url(host: str, port: int, password: str, ca: Path | None = None) -> str:
    """The store's URL for this user: ``redis://`` or, with the CA that signed the server's certificate,
    ``rediss://…?ssl_ca_certs=…`` (the client checks the certificate and the host name)."""
    auth = f"{REDIS_USER}:{quote(password, safe='')}@"
    where = f"[{host}]" if ":" in host else host
    if ca is None:
        return f"redis://{auth}{where}:{port}/0"
    return f"rediss://{auth}{where}:{port}/0?ssl_ca_certs={quote(str(ca), safe='/')}"


def start_redis(folder: Path, logs: Path, port: int, host: str = "127.0.0.1", tls: bool = False,
                password: str | None = None, timeout: float = 20) -> tuple[Proc, str, str]:
    """Start a locked-down redis-server (redis_conf) with its data, config and TLS files under ``folder``
    -> (process, the store's URL, password). A non-loopback ``host`` always gets TLS."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    tls = tls or not ipaddress.ip_address(host).is_loopback
    password = password or secrets.token_urlsafe(32)
    files = make_tls_files(folder / "tls", ["127.0.0.1", "localhost", host]) if tls else None
    conf = folder / "redis.conf"
    conf.write_text(redis_conf(port, host, folder, password, files))
    conf.chmod(0o600)
    url = redis_url(host, port, password, files["ca"] if files else None)
    proc = _spawn("redis", port, ["redis-server", str(conf)], logs)
    _wait(lambda: redis_ping(url), proc, "redis-server", timeout)
    return proc, url, password


class Cluster:
    """``n`` replicas + HAProxy (+ redis). ``url`` is HAProxy's; ``replicas`` are [Proc] with .port and .pid."""

    def __init__(self, n: int, port: int | None = None, redis: bool = False, affinity: bool = True,
                 data_dir: str | Path | None = None, env: dict | None = None, start_timeout: float = 180,
                 host: str = "127.0.0.1", redis_host: str = "127.0.0.1", redis_tls: bool = False):
        self.n, self.affinity, self.use_redis, self.host = n, affinity, redis, host
        self.redis_host, self.redis_tls, self.redis_password = redis_host, redis_tls, None
        self.port = port or free_port()
        self.url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{self.port}"
        self.dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="explorer-cluster-"))
        self.logs = self.dir / "logs"
        # its own HAProxy; a replica says ready once both embedded models are loaded (a lesson's first step on it
        # costs what a later one does), unless the caller's EXPLORER_PRELOAD says otherwise
        self.env = {"EXPLORER_PRELOAD": PRELOAD, **os.environ, "EXPLORER_TRUSTED_PROXIES": "1", **(env or {})}
        self.start_timeout = start_timeout
        self.replicas: list[Proc] = []
        self.redis: Proc | None = None
        self.haproxy: Proc | None = None
        self.redis_port = free_port() if redis else None

    # ----------------------------------------------------------------------------------------------- start
    def start(self) -> Self:
        if not shutil.which("haproxy"):
            raise RuntimeError("haproxy is not installed (apt-get install haproxy)")
        self.logs.mkdir(parents=True, exist_ok=True)
        try:
            if self.use_redis:
                self._start_redis()
            for i in range(self.n):   # all launched at once: they import torch and load the model in parallel
                self.replicas.append(self._spawn_replica(i, free_port()))
            for r in self.replicas:
                _wait(lambda r=r: healthy(f"http://127.0.0.1:{r.port}"), r, r.name, self.start_timeout)
            self._start_haproxy()
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn_replica(self, i: int, port: int) -> Proc:
        argv = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                "--server.address", "127.0.0.1", "--server.headless", "true"]
        return _spawn(f"replica{i}", port, argv, self.logs, self.env)

    def _start_redis(self) -> None:
        """Start (or start again, with the same password) the locked-down redis-server; its URL -> the replicas."""
        self.redis, url, self.redis_password = start_redis(self.dir / "redis", self.logs, self.redis_port,
                                                           self.redis_host, self.redis_tls, self.redis_password)
        self.env["EXPLORER_CLASSROOM_URL"] = url
        url_file = self.dir / "redis" / "url"
        url_file.write_text(url + "\n")   # for replicas on other machines; in a folder only this user can open
        url_file.chmod(0o600)

    def _start_haproxy(self) -> None:
        cfg = self.dir / "haproxy.cfg"
        cfg.write_text(haproxy_config([r.port for r in self.replicas], f"{self.host}:{self.port}", self.affinity))
        check_config(cfg)
        self.haproxy = _spawn("haproxy", self.port, ["haproxy", "-db", "-f", str(cfg)], self.logs)
        _wait(lambda: healthy(self.url), self.haproxy, "haproxy", 20)

    # ----------------------------------------------------------------------------------------------- control
    def kill_replica(self, i: int) -> None:
        """SIGKILL replica ``i`` (a crash, not a clean shutdown); HAProxy's checks take it out."""
        r = self.replicas[i]
        if r.alive():
            os.killpg(r.pid, signal.SIGKILL)
            r.popen.wait(10)

    def restart_replica(self, i: int) -> None:
        """Start replica ``i`` again on its old port (HAProxy's server line still points there)."""
        old = self.replicas[i]
        old.stop()
        self.replicas[i] = new = self._spawn_replica(i, old.port)
        _wait(lambda: healthy(f"http://127.0.0.1:{new.port}"), new, new.name, self.start_timeout)

    def restart_redis(self) -> None:
        """Stop redis (SIGTERM: it writes its append-only file) and start it on the same port and data dir."""
        if not self.use_redis:
            raise RuntimeError("this cluster runs without redis")
        self.redis.stop()
        self._start_redis()

    def stop(self) -> None:
        """Stop HAProxy first (no new traffic), then the replicas, then redis."""
        for p in [self.haproxy, *self.replicas, self.redis]:
            if p is not None:
                p.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="number of Streamlit replicas")
    ap.add_argument("--port", type=int, default=8500, help="HAProxy's port (default 8500)")
    ap.add_argument("--host", default="127.0.0.1", help="HAProxy's address (0.0.0.0 to serve a classroom LAN)")
    ap.add_argument("--redis", action="store_true", help="also run redis-server for the classroom store")
    ap.add_argument("--redis-host", default="127.0.0.1",
                    help="redis-server's address (a LAN address for replicas on other machines: TLS is then on)")
    ap.add_argument("--redis-tls", action="store_true", help="TLS for redis-server even on a loopback address")
    ap.add_argument("--data-dir", default=str(ROOT / ".cluster"), help="logs, haproxy.cfg and redis data")
    args = ap.parse_args(argv)
    cluster = Cluster(args.n, port=args.port, redis=args.redis, data_dir=args.data_dir, host=args.host,
                      redis_host=args.redis_host, redis_tls=args.redis_tls)

    def stop(signum, _frame):
        raise KeyboardInterrupt   # unwinds to the finally below, in the main thread
    signal.signal(signal.SIGTERM, stop)
    try:
        print(f"starting {args.n} replicas (logs in {cluster.logs}) …", flush=True)
        cluster.start()
        for r in cluster.replicas:
            print(f"  {r.name}: http://127.0.0.1:{r.port} (pid {r.pid})")
        if cluster.redis:
            shown = cluster.env["EXPLORER_CLASSROOM_URL"].replace(cluster.redis_password, "***")
            print(f"  redis: {shown} (data in {cluster.dir / 'redis'}; full URL with its password in "
                  f"{cluster.dir / 'redis' / 'url'})")
        print(f"open {cluster.url}  (Ctrl+C stops everything)", flush=True)
        while cluster.haproxy.alive():
            time.sleep(1)
        print(f"haproxy exited with {cluster.haproxy.popen.returncode}; see {cluster.haproxy.log}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopping …", flush=True)
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
