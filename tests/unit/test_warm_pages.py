"""Server start imports what the pages import (explorer.ui.prefetch.warm), so that no page's first run in a
fresh process (a new replica's first follower) pays for the imports."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from explorer.ui import prefetch

ROOT = Path(__file__).resolve().parents[2]


def test_page_modules_reads_a_pages_imports_without_running_it():
    names = prefetch.page_modules([ROOT / "pages" / "heatmaps.py"])
    assert {"explorer.plots.attention", "explorer.ui.views.bertviz", "explorer.attention.matrices"} <= set(names)
    assert not any(n.startswith("streamlit") for n in names)   # only the project's own


@pytest.mark.slow   # a fresh interpreter importing torch and streamlit
def test_warm_imports_the_page_modules_in_a_fresh_process():
    code = ("import sys; from explorer.ui import prefetch; from pathlib import Path; "
            "assert 'explorer.ui.views.bertviz' not in sys.modules; "
            "prefetch.warm([Path('pages/heatmaps.py')]); "
            "assert 'explorer.ui.views.bertviz' in sys.modules and 'PIL.PngImagePlugin' in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
