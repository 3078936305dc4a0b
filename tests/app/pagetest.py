"""The one way the AppTest files open a page with URL parameters (a helper module, not a test file)."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def open_page(path: str, *, timeout: float = 240, **params) -> AppTest:
    """AppTest of ``path`` (from the repository root: "pages/compare.py"), run once with ``params`` in its URL;
    the run must raise nothing."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, at.exception
    return at
