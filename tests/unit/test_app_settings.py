"""Process-wide settings that app.py makes before the server imports anything else."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASK = "import app, numpy._core.multiarray as m; print(m._get_madvise_hugepage())"

pytestmark = pytest.mark.unit


def huge_pages_after_importing_app(**env) -> str:
    base = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run([sys.executable, "-c", ASK], cwd=ROOT, env={**base, **env}, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_the_server_asks_numpy_for_no_huge_pages():
    # numpy reads NUMPY_MADVISE_HUGEPAGE once, when it is first imported: app.py must set it before its own imports
    # (explorer.web.compress imports numpy); on Linux numpy's default is True
    assert huge_pages_after_importing_app() == "False"


def test_an_operator_can_turn_huge_pages_back_on():
    assert huge_pages_after_importing_app(NUMPY_MADVISE_HUGEPAGE="1") == "True"
