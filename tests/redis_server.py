"""A real redis-server for tests: loopback, free port, its own folder, append-only file on; never a fake."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from chromium import free_port

REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server")
                                                else None)


def need_redis_server() -> str:
    """Path of redis-server; fail when it is missing under CI (env CI set), else skip."""
    if REDIS_SERVER is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed, and CI is set: the Redis backend must be tested")
        pytest.skip("redis-server is not installed")
    return REDIS_SERVER


class RedisServer:
    """One redis-server process; stop() then start() again keeps port and folder (so the data come back)."""

    def __init__(self, folder: Path):
        self.exe, self.folder, self.port, self.proc = need_redis_server(), Path(folder), free_port(), None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, wait_s: float = 15.0) -> "RedisServer":
        import redis
        log = open(self.folder / "redis.log", "ab")
        self.proc = subprocess.Popen(
            [self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder), "--save", "",
             "--appendonly", "yes"], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        client, end = redis.Redis(port=self.port, socket_connect_timeout=1), time.monotonic() + wait_s
        while True:
            try:
                if client.ping():
                    client.close()
                    return self
            except redis.exceptions.RedisError:
                if self.proc.poll() is not None or time.monotonic() > end:
                    self.stop()
                    log_text = (self.folder / "redis.log").read_text()
                    raise RuntimeError("redis-server did not start:\n" + log_text) from None
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM: redis-server flushes its append-only file and exits."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


