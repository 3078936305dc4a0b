"""Shared AppTest steps for the concept labs: run a page, answer its predict-then-reveal question."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

TIMEOUT = 180
ROOT = Path(__file__).resolve().parents[1]


def run_page(page: str, **params) -> AppTest:
    """``page`` run once with the URL parameters ``params`` (a lab's tab: ``pos_tab="Learned table"``)."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    at.query_params.update({k: str(v) for k, v in params.items()})
    at.run()
    assert not at.exception, at.exception
    return at


def answer(at: AppTest, option: str) -> AppTest:
    """Commit ``option`` as the prediction and reveal the computed answer."""
    at.radio(key=next(r.key for r in at.radio if r.label == "Your prediction")).set_value(option).run()
    next(b for b in at.button if b.label == "Commit my answer").click().run()
    assert not at.exception, at.exception
    return at
