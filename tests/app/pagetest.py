"""What the AppTest files share (a helper module, not a test file): open a page with URL parameters, and read
back what it wrote and drew; a browser session of app.py (``session``), a button click, a student joining a class."""
import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")   # the whole app, navigation included
MESSAGES = ("markdown", "caption", "info", "warning", "success", "error")   # what texts() reads


def open_page(path: str, *, timeout: float = 300, **params) -> AppTest:
    """AppTest of ``path`` (from the repository root: "pages/compare.py"), run once with ``params`` in its URL;
    the run must raise nothing. A test file binds its page once: ``run = partial(open_page, "pages/flip.py")``."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest, *, raw: bool = False) -> str:
    """Everything the page wrote (markdown, captions and the four message boxes), one element a line; the
    backslashes ``ui.text.literal`` puts before markdown characters are taken out unless ``raw`` (to find
    ``literal(...)`` itself, or an unescaped tag)."""
    out = "\n".join(str(e.value) for kind in MESSAGES for e in getattr(at, kind))
    return out if raw else out.replace("\\", "")


def notes(at: AppTest) -> str:
    """The link notes (shown as st.info, markdown escapes taken out)."""
    return " ".join(str(i.value) for i in at.info).replace("\\", "")


def figures(at: AppTest) -> dict[str, dict]:
    """Every plotly chart on the page, as the JSON it sends, by title (without its subtitle after ``<br>``)."""
    out = {}
    for element in at.get("plotly_chart"):
        spec = json.loads(element.proto.spec)
        title = (spec["layout"].get("title") or {}).get("text") or ""
        out[title.split("<br>")[0]] = spec
    return out


def array(value) -> np.ndarray:
    """A plotly array from a figure's JSON: a list (None as NaN), or a typed array {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return out.reshape([int(s) for s in str(shape).split(",")]) if shape else out
    return np.asarray(value, dtype=float)


def in_app(path: str, *, timeout: float = 300) -> AppTest:
    """AppTest of app.py switched to page ``path`` ("pages/compare.py"), so that its links to other pages resolve
    (a page run on its own shows them as plain text); the run must raise nothing."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout).run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def session(**params) -> AppTest:
    """One browser session of app.py (its default page, Home), opened with ``params`` in its URL and run once; the
    run must raise nothing. The classroom and lesson tests keep one per teacher and per student."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, label: str, nth: int = 0) -> AppTest:
    """Click the ``nth`` button labelled ``label`` and run; the run must raise nothing."""
    [b for b in at.button if b.label == label][nth].click().run()
    assert not at.exception, at.exception
    return at


SHOW = "Show me without predicting"   # a question's button that unfolds what it folds, for the rest of the session


def unfolded(at: AppTest) -> AppTest:
    """``at`` after a click on each question's "Show me without predicting" (the parts of the page each question
    folds are then drawn, as they are after a prediction); the run must raise nothing."""
    for _ in range(5):   # one question a click: a lesson's, then its page's own
        if not any(b.label == SHOW for b in at.button):
            break
        click(at, SHOW)
    return at


def classroom_page(**params) -> AppTest:
    """A session switched to the classroom page."""
    at = session(**params)
    at.switch_page("pages/classroom.py").run()
    assert not at.exception, at.exception
    return at


def join(room: str, nickname: str = "", typed: str | None = None) -> AppTest:
    """A new student's session that joins ``room`` on the classroom page (typing ``typed``, else the code)."""
    student = classroom_page()
    student.text_input(key="_class_typed").input(typed or room)
    student.text_input(key="_class_nick").input(nickname)
    return click(student, "Join")


BREAKDOWN_LINK = "apart on the heatmap page"   # the label's end of every "Take “it” → “animal” apart" link


def breakdown_links(at: AppTest) -> list[tuple[str, dict[str, str]]]:
    """(label, address parameters) of each link that opens the heatmap page with a score taken apart."""
    from urllib.parse import parse_qs

    return [(e.proto.label, {k: v[0] for k, v in parse_qs(e.proto.query_string).items()})
            for e in at.get("page_link") if e.proto.label.endswith(BREAKDOWN_LINK)
            and "heatmaps" in e.proto.page]


def breakdown_weight(at: AppTest) -> float:
    """The weight the heatmap page's open breakdown shows ("weight = softmax of the row at this key = **w**")."""
    import re

    unfolded(at)   # the breakdown's question folds the score until it is answered
    found = re.search(r"weight = softmax of the row at this key = \*\*([0-9.]+)\*\*", texts(at, raw=True))
    assert found, "no breakdown on the page"
    return float(found.group(1))
