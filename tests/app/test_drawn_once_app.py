"""Same page, same pixels: what a session gets replayed from the render store (``explorer.ui.drawn_once``) equals
what a fresh session draws for the same link, on every step of every shipped lesson; a view is drawn once and
replayed; nothing private to one session (a vote, a typed text) reaches another through the store.

Each step is first drawn with the store emptied (a fresh session, nothing to replay); then each page's default
view and every step of every lesson are drawn into one store, and each step is drawn again from it: a view that
shared a key with another one (a part missing from its key) would show the other's figures here."""
from __future__ import annotations

import pytest
from pagetest import open_page, texts
from streamlit.testing.v1 import AppTest

from explorer.lessons import catalogue
from explorer.ui import drawn_once

KINDS = ("title", "header", "subheader", "markdown", "caption", "latex", "info", "warning", "success", "error")
# other views of the lessons' pages, drawn into the store before the steps (links a teacher could send)
OTHER_VIEWS = {"pages/heatmaps.py": [{"layer": 0, "head": 1, "query": 3}, {"model": "SmolLM2-135M-Instruct"}],
               "pages/flip.py": [{"layer": 1, "head": 2}, {"model": "SmolLM2-135M-Instruct"}],
               "pages/lab_positions.py": [{"pos_n": 40, "pos_d": 32, "pos_at": 3}],
               "pages/write.py": [{"lm": "SmolLM2-135M-Instruct", "prompt": "Once upon a time", "new": 3}],
               "pages/explain.py": [{"model": "all-MiniLM-L6-v2"}]}
STEPS = [(lesson.source, i, step) for lesson in catalogue({})[0] for i, step in enumerate(lesson.steps, 1)]


def drawn(at) -> dict:
    """What the page showed: every chart's JSON and config, in order, and every text element's value."""
    return {"charts": [(c.proto.spec, c.proto.config) for c in at.get("plotly_chart")],
            "texts": [(kind, str(e.value)) for kind in KINDS for e in getattr(at, kind)],
            "metrics": [(m.label, m.value) for m in at.metric]}


def step_page(step):
    return open_page(step.page, timeout=600, **step.params)


@pytest.fixture(scope="module")
def fresh() -> dict:
    """Each step drawn by a session with nothing to replay; then every step drawn into one store."""
    out = {}
    for source, i, step in STEPS:
        drawn_once.STORE.clear()
        out[source, i] = drawn(step_page(step))
    drawn_once.STORE.clear()
    for page in dict.fromkeys(step.page for _, _, step in STEPS):   # other views of each page first, its default next
        for params in [*OTHER_VIEWS.get(page, []), {}]:
            open_page(page, timeout=600, **params)
    for _, _, step in STEPS:
        step_page(step)
    return out


@pytest.mark.parametrize("source,i,step", STEPS, ids=[f"{s.split(':')[-1]}-{i}" for s, i, _ in STEPS])
def test_a_replayed_step_equals_a_fresh_session(fresh, source, i, step):
    assert drawn(step_page(step)) == fresh[source, i]


def _counted_page():
    import streamlit as st

    from explorer.ui.drawn_once import drawn_once

    def draw():
        st.session_state["drew"] = st.session_state.get("drew", 0) + 1
        st.markdown(f"Drawn for {st.query_params.get('n', '?')}")

    drawn_once(("counted", st.query_params.get("n", "?")), draw)


def test_a_view_is_drawn_by_the_first_session_and_replayed_to_the_next():
    drawn_once.STORE.clear()
    sessions = [AppTest.from_function(_counted_page) for _ in range(3)]
    for at in sessions:
        at.query_params["n"] = "7"
        at.run()
    assert [at.session_state["drew"] if "drew" in at.session_state else 0 for at in sessions] == [1, 0, 0]
    assert all(texts(at) == "Drawn for 7" for at in sessions)
    other = AppTest.from_function(_counted_page)
    other.query_params["n"] = "8"   # another view: drawn, not replayed
    other.run()
    assert other.session_state["drew"] == 1 and texts(other) == "Drawn for 8"


def test_with_a_budget_of_zero_every_session_draws(monkeypatch):
    monkeypatch.setattr(drawn_once.STORE, "max_bytes", 0)
    sessions = [AppTest.from_function(_counted_page) for _ in range(2)]
    for at in sessions:
        at.run()
    assert [at.session_state["drew"] for at in sessions] == [1, 1]


def test_a_students_vote_and_typed_text_stay_in_their_own_session():
    """Two students on the softmax lab: one commits a prediction and types a sentence of their own; the other,
    opening the same link after, sees the lab's default sentence and no prediction, from the same store."""
    drawn_once.STORE.clear()
    first = open_page("pages/lab_softmax.py")
    first.radio(key=next(r.key for r in first.radio if r.label == "Your prediction")).set_value("about 16").run()
    next(b for b in first.button if b.label == "Commit my answer").click().run()
    box = next(t for t in first.text_input if t.label == "Sentence")
    box.set_value("Zebras quietly juggle marmalade.").run()
    assert "Right: about 16" in texts(first)
    assert any("quietly" in str(c.proto.spec) for c in first.get("plotly_chart"))   # its tokens, lower-cased
    second = open_page("pages/lab_softmax.py")
    assert "Right: about 16" not in texts(second) and "Commit my answer" in [b.label for b in second.button]
    assert not any("quietly" in str(c.proto.spec) or "quietly" in str(e.value)
                   for c in second.get("plotly_chart") for e in [*second.markdown, *second.caption])
    assert drawn_once.STORE.hits > 0   # the second student's charts did come from the store
