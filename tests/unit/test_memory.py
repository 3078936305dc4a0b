"""What the server does with the C allocator's free memory (explorer.serving.process.release_memory)."""
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.model import loading
from explorer.serving import process

ROOT = Path(__file__).resolve().parents[2]

# In a fresh process: 150 MB in 1,500 blocks of 100 kB (under glibc's 128 kB mmap threshold, so they come from the
# heap), one block allocated after them so that the freed ones are a hole below a block in use, not the heap's top
# (which glibc would give back by itself). Prints the anonymous resident memory after freeing them, then after
# release_memory(), in kB.
HOLE = """
import ctypes, ctypes.util
from explorer.serving import process
def anon():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon"))
ctypes.CDLL(ctypes.util.find_library("c")).mallopt(-1, 1 << 30)   # M_TRIM_THRESHOLD: no trimming but ours
blocks = [b"x" * 100_000 for _ in range(1500)]
pin = b"y" * 100_000
del blocks
freed = anon()
print(freed, anon() if not process.release_memory() else anon())
"""


def test_release_memory_gives_a_hole_in_the_heap_back_to_the_kernel():
    if not sys.platform.startswith("linux") or process._libc() is None:
        pytest.skip("glibc's malloc_trim only")
    out = subprocess.run([sys.executable, "-c", HOLE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    freed, released = map(int, out.stdout.split())
    # 150 MB were freed into the allocator: at least 100 MB of it must leave the process's resident memory
    assert freed - released > 100_000, (freed, released)


def test_loading_a_model_releases_what_the_load_freed(tiny_folder, monkeypatch):
    calls = []
    monkeypatch.setattr(process, "release_memory", lambda: calls.append(1) or True)
    loading.load_model(str(tiny_folder("gpt2")), device="cpu")
    assert calls == [1]
