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
