"""The teacher's view a class follows is typed (``classroom.TeacherView``): it goes into a store as plain JSON and
comes back equal, on SQLite and a real redis-server; what a store holds that is no view (a homework's, a field of
the wrong kind) reads as no page; and the prefix under which a page parameter is kept across pages is spelled once
(``ui/params.py``)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from explorer.classroom import TeacherView, open_store

ROOT = Path(__file__).resolve().parents[2]
VIEW = TeacherView("pages/heatmaps.py", {"model": "minilm", "layer": "3", "head": "7"}, {"opt_hide_first": True},
                   {"source": "app:1-attention", "step": 2, "of": 7})


@pytest.fixture
def store(classroom_env):
    return open_store(classroom_env)


def test_a_view_goes_into_the_store_and_comes_back_equal(store):
    code, key = store.create_room()
    store.set_view(code, key, VIEW.to_json())
    _version, stored = store.view(code)
    assert TeacherView.from_json(stored) == VIEW
    store.set_view(code, key, TeacherView("pages/flip.py").to_json())
    assert TeacherView.from_json(store.view(code)[1]) == TeacherView("pages/flip.py", {}, {}, None)


@pytest.mark.parametrize("raw", [{}, None, "pages/heatmaps.py", {"homework": {"source": "app:1"}},
                                 {"page": 3, "params": ["a"], "opts": "yes", "lesson": 7}])
def test_what_is_no_view_reads_as_no_page(raw):
    assert TeacherView.from_json(raw) == TeacherView()


def test_values_read_back_as_the_kinds_a_page_sets():
    view = TeacherView.from_json({"page": "pages/heatmaps.py", "params": {"layer": 3}, "opts": {"opt_x": 1}})
    assert view.params == {"layer": "3"} and view.opts == {"opt_x": True} and view.lesson is None


def test_the_kept_parameter_prefix_is_spelled_once():
    files = [*ROOT.glob("explorer/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    spelled = sorted(p.relative_to(ROOT).as_posix() for p in files
                     if re.search(r"""["']_kept_""", p.read_text(encoding="utf-8")))
    assert spelled == ["explorer/ui/params.py"]
