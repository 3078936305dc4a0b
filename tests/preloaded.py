"""A Python that has imported the server's heavy libraries once and forks a ``streamlit run`` from itself for each
test server: the import of torch, transformers, Streamlit, plotly and pandas was 4.5 of the 5.4 s of CPU a server took
to be ready, and the test suite starts about thirty. The same idea as gunicorn's ``preload_app`` or Python's own
``forkserver``.

Each forked child is the real server: it sets its own environment, folder and log, then runs Streamlit's own command
line (``streamlit run ...``) as ``python -m streamlit`` does. The parent starts with the environment a server gets
(``chromium.server_env``: with the settings app.py makes before numpy and torch are imported) and imports only
libraries, never the app's package ``explorer`` (it reads EXPLORER_* settings). A server whose environment differs
from the parent's in anything the imports could have read (``eligible``) is started cold, as are all the benchmarks'
servers: they time a cold start.

Run as a script, this file is the parent: it prints its environment once imported, then reads one JSON request a
line on stdin and answers each with the child's process id.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HEAVY = ("torch", "transformers", "transformers.models.bert.modeling_bert", "transformers.models.llama.modeling_llama",
         "safetensors.torch", "streamlit.web.cli", "plotly.graph_objects", "pandas", "babel.numbers")
# What a forked child may differ from its parent in: settings read after the fork (the app's, Streamlit's), pytest's own
# (PYTEST_CURRENT_TEST changes with each test), and variables that libraries set for themselves at import, in the
# test process as in a server (Streamlit: MPLBACKEND; scikit-learn: KMP_DUPLICATE_LIB_OK, KMP_INIT_AT_FORK; the app's
# explorer.model.loading: TOKENIZERS_PARALLELISM).
FREE = ("EXPLORER_", "STREAMLIT_", "PYTEST_")
SET_BY_IMPORTS = {"MPLBACKEND", "KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK", "TOKENIZERS_PARALLELISM"}


def eligible(base: dict, env: dict) -> bool:
    """Whether a server with environment ``env`` may fork from a parent whose environment after its imports is
    ``base``."""
    changed = {k for k in base.keys() | env.keys() if base.get(k) != env.get(k)}
    return all(k.startswith(FREE) or k in SET_BY_IMPORTS for k in changed)


class Forked:
    """The part of ``subprocess.Popen`` that ``Server`` uses, for a process that is the parent's child, not ours
    (the parent reaps it: once it has exited, its process id is gone)."""

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self):
        try:
            os.kill(self.pid, 0)   # until the parent has reaped it (at once: ``_reap``)
        except ProcessLookupError:
            self.returncode = 0   # it has exited; its exit status went to the parent that reaped it
        return self.returncode

    def wait(self, timeout: float | None = None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(["streamlit"], timeout)
            time.sleep(0.05)
        return self.returncode

    def send_signal(self, sig):
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)


class Parent:
    """The forking parent, started with environment ``env`` on first use and ended with the test process (its stdin
    closes)."""

    def __init__(self, env: dict, cwd: Path):
        self.env, self.cwd, self.proc, self.base, self.lock = dict(env), cwd, None, {}, threading.Lock()

    def _started(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         cwd=self.cwd, env=self.env, text=True, bufsize=1)
            self.base = json.loads(self.proc.stdout.readline())   # its environment after its imports

    def takes(self, env: dict) -> bool:
        """Whether a server with environment ``env`` can be forked from this parent (``eligible``)."""
        with self.lock:
            self._started()
            return eligible(self.base, env)

    def launch(self, args: list[str], env: dict, cwd: Path, log: str) -> Forked:
        with self.lock:
            self._started()
            self.proc.stdin.write(json.dumps({"args": args, "env": env, "cwd": str(cwd), "log": log}) + "\n")
            return Forked(int(self.proc.stdout.readline()))


def _reap(*_):
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _child(request: dict):
    """In the forked child: become ``streamlit run`` with the request's environment, folder and log; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)   # the server's own children (a training run) are its own
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, 1 << 16)   # the parent's pipes to the test process among them
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = request["cwd"]   # as ``python -m`` sets it
        sys.argv = ["streamlit", *request["args"]]
        import numpy
        numpy.random.seed()   # Python's ``random`` reseeds itself in a forked child; numpy's global one does not
        from streamlit.web import cli
        cli.main(args=request["args"], prog_name="streamlit")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main():
    for name in HEAVY:
        importlib.import_module(name)
    # a fork copies only the thread that calls it: a library thread started at import would be missing in each child
    assert threading.active_count() == 1, threading.enumerate()
    signal.signal(signal.SIGCHLD, _reap)
    print(json.dumps(dict(os.environ)), flush=True)   # ready, and the environment the imports left
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(pid, flush=True)


if __name__ == "__main__":
    main()
