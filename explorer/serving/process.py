"""Settings for a whole server process, read from the environment: some only take effect if made before numpy and
torch are imported (app.py calls :func:`server_defaults` first thing; so does the benchmark that times the server's
rerun), others are read where they apply (:func:`forward_queue_on`); and what the server does with the C
allocator's memory (:func:`release_memory`). Imports neither numpy nor torch."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Mapping, MutableMapping

OFF = {"0", "false", "no", "off"}   # how a switch is turned off (case and spaces ignored)


def forward_queue_on(env: Mapping[str, str] | None = None) -> bool:
    """Whether forward passes on a session's text go through the server's one fair queue (the default), or run in
    the page's own thread (``EXPLORER_FORWARD_QUEUE=0``, kept to measure the difference). Read at each call, so a
    test or a benchmark can switch it. ``env``: a mapping in place of ``os.environ``."""
    env = os.environ if env is None else env
    return env.get("EXPLORER_FORWARD_QUEUE", "1").strip().lower() not in OFF


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def forward_threads(limit: int | None = None, env: Mapping[str, str] | None = None) -> int:
    """Threads for one forward pass: ``EXPLORER_TORCH_THREADS``, else half the cores this process may use (at most
    ``limit``). A Streamlit server runs several sessions at once, and their pages (numpy, plotly, the websocket)
    need a core too. On a busy 2-core machine two torch threads made a 17 ms forward pass take 0.2–1.2 s (each
    thread spin-waits for the other, which the OS has parked); one thread stays at 17 ms. ``env``: a mapping in
    place of ``os.environ``."""
    wanted = (os.environ if env is None else env).get("EXPLORER_TORCH_THREADS", "").strip()
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    half = max(1, usable_cores() // 2)
    return half if limit is None else max(1, min(limit, half))


def server_defaults(env: MutableMapping[str, str] | None = None) -> None:
    """Environment defaults for the server (each one an operator sets wins), in ``os.environ`` or ``env`` (the
    environment a server will be started with):

    - ``NUMPY_MADVISE_HUGEPAGE=0``: numpy asks the kernel for transparent huge pages for every array of 4 MB or
      more. A server keeps its results, so a long text's weights land in memory never touched before, and on a
      machine whose memory is fragmented each 2 MB page waited on the kernel's compaction: a 512-token result's
      75 MB took 0.2 s to fill, 0.04 s in 4 kB pages.
    - ``OMP_NUM_THREADS`` = :func:`forward_threads`: Streamlit runs every script run in a new thread, and the first
      matrix product torch computes in a new thread starts an OpenMP team of the default size (every core): 2-7 ms
      each rerun on a 2-core machine for a page that multiplies one head's queries and keys (the fidelity badge),
      0.2 ms with a team of one. Torch's forward pass already uses this many threads (``torch.set_num_threads``).
      numpy's OpenBLAS and scikit-learn read the same variable: the head-geometry t-SNE (``bench/geometry.py``
      G4, 3,000 points) took 4.19 s unset and 4.07 s with one thread on this 2-core machine.
    """
    env = os.environ if env is None else env
    env.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    env.setdefault("OMP_NUM_THREADS", str(forward_threads(env=env)))


@functools.cache
def _libc():
    """glibc, or None elsewhere (musl, macOS, Windows): the calls below are then no-ops."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def release_memory() -> bool:
    """Hand the C allocator's free pages back to the kernel (glibc's ``malloc_trim(0)``) -> whether it could.

    glibc returns freed memory to the kernel by itself only from the top of a heap; memory freed below a block
    still in use stays in the process, counted in its resident size, until a later allocation reuses it. Loading
    a model and reading its first text leave tens of megabytes of such holes (the tokenizer's files parsed, the
    weights' headers and names, the first forward's temporaries): with both embedded models shown, 54 MB of the
    server's 457 MB of anonymous memory was free inside the allocator, and ``malloc_trim(0)`` gave 40 MB of it
    back (docs/benchmarks.md, "Where a server's memory goes"). It walks every arena once: ~1 ms, paid after each
    model load, never on a page's rerun."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(ctypes.c_size_t(0))
    return True
