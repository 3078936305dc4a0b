"""Fixtures the page tests share."""
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from explorer.ui.live import membership


@pytest.fixture
def fresh_store(tmp_path, monkeypatch):
    """A classroom file of this test's own (no server URL): every room, vote and lesson place starts empty."""
    monkeypatch.setenv("EXPLORER_CLASSROOM_DB", str(tmp_path / "classroom.sqlite3"))
    monkeypatch.delenv("EXPLORER_CLASSROOM_URL", raising=False)
    membership.store.clear()
    yield
    membership.store.clear()


@pytest.fixture
def downloads(monkeypatch):
    """``downloads(".csv")``: the file the app's latest download button of that kind holds (text), as the browser
    would fetch it."""
    files, real = [], MediaFileManager.add

    def add(self, data, mimetype, coordinates, file_name=None, is_for_static_download=False):
        if file_name:
            files.append((file_name, data))
        return real(self, data, mimetype, coordinates, file_name, is_for_static_download)
    monkeypatch.setattr(MediaFileManager, "add", add)
    return lambda ending: next(data for name, data in reversed(files) if name.endswith(ending)).decode("utf-8")
