"""Fixtures the page tests share."""
import pytest

from explorer.ui.live import membership


@pytest.fixture
def fresh_store(tmp_path, monkeypatch):
    """A classroom file of this test's own (no server URL): every room, vote and lesson place starts empty."""
    monkeypatch.setenv("EXPLORER_CLASSROOM_DB", str(tmp_path / "classroom.sqlite3"))
    monkeypatch.delenv("EXPLORER_CLASSROOM_URL", raising=False)
    membership.store.clear()
    yield
    membership.store.clear()
