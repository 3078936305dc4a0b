"""Process-wide settings that app.py makes before the server imports anything else."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASK = ("import os, app, explorer.model.loading, numpy._core.multiarray as m, torch; "
       "print(m._get_madvise_hugepage(), os.environ['OMP_NUM_THREADS'], torch.get_num_threads())")

pytestmark = pytest.mark.unit


def after_importing_app(**env) -> list[str]:
    """numpy's madvise setting, OMP_NUM_THREADS and torch's threads in a fresh process that imported app.py."""
    base = {k: v for k, v in os.environ.items()
            if k not in {"NUMPY_MADVISE_HUGEPAGE", "OMP_NUM_THREADS", "EXPLORER_TORCH_THREADS"}}
    out = subprocess.run([sys.executable, "-c", ASK], cwd=ROOT, env={**base, **env}, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1].split()


def test_the_server_asks_numpy_for_no_huge_pages_and_openmp_for_the_forward_passs_threads():
    # numpy reads NUMPY_MADVISE_HUGEPAGE once, when it is first imported, and OpenMP reads OMP_NUM_THREADS when torch
    # loads it: app.py must set both before its own imports (explorer.web.compress imports numpy). On Linux numpy's
    # default is True; OpenMP's is every core, torch's one thread per physical core
    huge, omp, torch_threads = after_importing_app(EXPLORER_TORCH_THREADS="3")
    assert (huge, omp, torch_threads) == ("False", "3", "3")


def test_what_an_operator_sets_wins():
    assert after_importing_app(NUMPY_MADVISE_HUGEPAGE="1", OMP_NUM_THREADS="2", EXPLORER_TORCH_THREADS="1") \
        == ["True", "2", "1"]


@pytest.mark.parametrize("value, on", [(None, True), ("1", True), ("0", False), (" Off ", False), ("no", False),
                                       ("false", False), ("yes", True)])
def test_the_forward_queue_setting_is_read_in_one_place(value, on):
    from explorer.serving import process

    assert process.forward_queue_on({} if value is None else {"EXPLORER_FORWARD_QUEUE": value}) is on

