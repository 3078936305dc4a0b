"""Test servers forked from a parent with the heavy libraries imported (tests/preloaded.py) are real servers with
their own settings, and a server whose settings the parent's imports could have read is started cold."""
import json
import os
import subprocess
import urllib.request

from chromium import Server
from preloaded import Forked, eligible

BASE = {"PATH": "/usr/bin", "HF_HUB_OFFLINE": "1", "HOME": "/root"}


def test_only_settings_read_after_the_fork_may_differ():
    assert eligible(BASE, dict(BASE))
    assert eligible(BASE, {**BASE, "EXPLORER_CLASSROOM_DB": "/tmp/x", "STREAMLIT_THEME_BASE": "dark",
                           "PYTEST_CURRENT_TEST": "t.py::test (call)", "MPLBACKEND": "Agg"})
    assert not eligible(BASE, {**BASE, "OMP_NUM_THREADS": "2"})   # OpenMP reads it when torch loads it
    assert not eligible(BASE, {**BASE, "HF_HUB_OFFLINE": "0"})          # huggingface_hub reads it at import
    assert not eligible(BASE, {**BASE, "PYTHONPATH": "/elsewhere"})
    assert not eligible(BASE, {k: v for k, v in BASE.items() if k != "HOME"})   # a setting removed differs too
    assert not eligible({**BASE, "EXPLORER_X": "1"}, {**BASE, "EXPLORER_X": "1", "TORCH_HOME": "/t"})


def test_a_forked_server_reads_its_own_settings_and_stops():
    server = Server(env={"EXPLORER_RESULT_CACHE_MB": "7"}, log_prefix="preloaded")
    try:
        assert isinstance(server.proc, Forked)   # the test process forks its servers (tests/conftest.py)
        stats = json.loads(urllib.request.urlopen(server.url + "/_explorer/stats", timeout=30).read())
        assert stats["regions"]["results"]["max_bytes"] == 7 * 2**20, stats["regions"]["results"]
    finally:
        server.stop()
    assert server.proc.poll() is not None and not os.path.exists(f"/proc/{server.proc.pid}/stat")


def test_a_server_the_imports_could_differ_for_is_started_cold():
    # the parent always starts offline (chromium.server_env): a server asked to go online differs from it wherever
    # this runs, and huggingface_hub reads the setting when it is imported
    server = Server(env={"HF_HUB_OFFLINE": "0"}, wait=False, log_prefix="preloaded-cold")
    try:
        assert isinstance(server.proc, subprocess.Popen)
    finally:
        server.stop()
