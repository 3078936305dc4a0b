"""Moving between pages through app.py keeps the student's model and text."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_text_follows_the_student_across_pages():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/heatmaps.py").run()
    at.text_area(key="text").input("the cat sat on the mat").run()
    at.switch_page("pages/lab_worked_example.py").run()   # a page without the text box
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert at.text_area(key="text").value == "the cat sat on the mat"
    at.switch_page("pages/heatmaps.py").run()
    assert at.text_area(key="text").value == "the cat sat on the mat"
    at.switch_page("pages/compare.py").run()   # straight from a page whose text box has the same key
    assert at.text_area(key="text").value == "the cat sat on the mat"


def test_the_navigation_is_the_table_of_pages(monkeypatch):
    """app.py hands st.navigation the table's sections, in its order, each page with its title and icon."""
    import streamlit as st

    from explorer.sitemap.table import SECTIONS

    seen = []
    real = st.navigation

    def recording(pages, **kwargs):
        seen.append({section: [(p.title, p.icon, p.url_path) for p in entries] for section, entries in pages.items()})
        return real(pages, **kwargs)

    monkeypatch.setattr(st, "navigation", recording)
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    assert seen[-1] == {section.title: [(p.title, p.icon, "" if p.default else Path(p.file).stem)
                                        for p in section.pages] for section in SECTIONS}
    assert list(seen[-1]) == ["Start", "Explore real models", "Concepts"]
