"""A following student's run is a replay (``explorer.ui.live.replayed``): on every step of every shipped lesson,
after the teacher's Next and after the reveal of the step's question, in English and in German, the second
follower of a view gets the first one's page replayed, and it equals the page the first one drew (figures' JSON,
texts, widgets); its figures are a fresh session's on the step's link. A replayed follower's run executes nothing
of the page (no page file, no view module, no model code); nothing private to one session reaches another."""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from pagetest import SHOW, click, join, open_page, seat_of, session, texts
from streamlit.testing.v1 import AppTest

from explorer.lessons import catalogue
from explorer.lessons.pages import STEP_PAGES
from explorer.lessons.run import place
from explorer.ui import drawn_once
from explorer.ui.live import class_question, membership, replayed
from explorer.words import i18n

pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("title", "header", "subheader", "markdown", "caption", "latex", "info", "warning", "success", "error")
WIDGETS = ("button", "checkbox", "toggle", "radio", "selectbox", "slider", "select_slider", "text_input",
           "text_area", "number_input", "expander")
LESSONS = catalogue({})[0]
JOIN = {"de": "Beitreten", "en": "Join"}


def drawn(at: AppTest) -> dict:
    """What a page showed: every chart's JSON, every text element, every widget's label, metrics."""
    return {"charts": [c.proto.spec for c in at.get("plotly_chart")],
            "texts": [(kind, str(e.value)) for kind in KINDS for e in getattr(at, kind)],
            "widgets": [(kind, getattr(w, "label", None) or getattr(w.proto, "label", "")) for kind in WIDGETS
                        for w in at.get(kind)],
            "metrics": [(m.label, m.value) for m in at.metric]}


def follower(room: str, lang: str, nickname: str) -> AppTest:
    at = session(**({"lang": lang} if lang != "en" else {}))
    at.switch_page("pages/classroom.py").run()
    at.text_input(key="_class_typed").input(room)
    at.text_input(key="_class_nick").input(nickname)
    return click(at, JOIN[lang])


def publish(room: str, key: str, lesson, i: int, started: float) -> None:
    """The teacher's Next, as ``following.publish`` writes it (bench/lesson_bench.py does the same)."""
    step = lesson.steps[i]
    membership.store().set_view(room, key, {"page": step.page, "params": dict(step.params), "opts": {},
                                            "lesson": place(lesson, i, started, time.time())})


def question_of(lesson, i: int, started: float) -> str | None:
    step = lesson.steps[i]
    where = place(lesson, i, started, started)
    return class_question.poll_key(STEP_PAGES[step.page].quiz, where) if step.page_question else where.get("qid")


def page_asked(follower: AppTest, lesson, i: int, started: float) -> str | None:
    """The poll of the page's own question if the step's page asked it of ``follower`` (a step whose own question
    the model cannot compute leaves the page's: its own poll, which the teacher reveals)."""
    quiz = STEP_PAGES[lesson.steps[i].page].quiz
    poll = quiz and class_question.poll_key(quiz, place(lesson, i, started, started))
    return poll if poll and any(r.key == f"{poll}_answer" for r in follower.radio) else None


def unframed(spec: str) -> dict:
    """A chart's JSON without the head it frames (``layout.meta``): a follower's charts are the class's, nobody
    clicks them, and the frame is drawn beside them (``chart_text.show_frame``)."""
    figure = json.loads(spec)
    figure.get("layout", {}).pop("meta", None)
    return figure


def subsequence(inner: list, outer: list) -> bool:
    it = iter(outer)
    return all(any(x == y for y in it) for x in inner)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_step_of_every_lesson_a_replayed_follower_equals_a_follower_that_drew_it(lang):
    drawn_once.STORE.clear()
    with i18n.language(lang):
        store = membership.store()
        room, key = store.create_room()
        first, second = follower(room, lang, "Ada"), follower(room, lang, "Bo")
        checked = 0
        for lesson in LESSONS:
            started = time.time()
            for i, step in enumerate(lesson.steps):
                publish(room, key, lesson, i, started)
                qid = question_of(lesson, i, started)
                moments = ["next", "reveal"] if qid else ["next"]
                while moments:
                    moment = moments.pop(0)
                    if moment == "reveal":
                        store.reveal(room, key, qid)
                    ran = sum(replayed.COUNTS.values())
                    first.run()
                    before = dict(replayed.COUNTS)
                    second.run()
                    assert not first.exception and not second.exception, (lesson.source, i, moment)
                    if qid is None and (asked := page_asked(second, lesson, i, started)):
                        qid, moments = asked, ["reveal"]   # the page's own question on a step without one
                    where = (lesson.source, i + 1, moment)
                    if sum(before.values()) == ran:
                        assert drawn(second) == drawn(first), where
                        continue   # the step's question folds the page: no page drawn, none replayed
                    assert replayed.COUNTS["replayed"] == before["replayed"] + 1, where   # the second replayed
                    assert replayed.COUNTS["page"] == before["page"], where   # and ran no page
                    assert drawn(second) == drawn(first), where
                    checked += 1
                    if moment == "reveal" or not qid:   # the page unfolded: the figures of a fresh session
                        link = {k: v for k, v in second.query_params.items()
                                if k not in membership.PRIVATE}   # the follower's address, its lang= too
                        fresh = open_page(step.page, timeout=600, **link)
                        for _ in range(3):
                            if any(b.label == i18n._(SHOW) for b in fresh.button):
                                click(fresh, i18n._(SHOW))
                        charts = [unframed(c) for c in drawn(fresh)["charts"]]
                        assert charts and subsequence(charts, [unframed(c) for c in drawn(second)["charts"]]), where
    assert checked >= sum(len(lesson.steps) for lesson in LESSONS)


def test_a_replayed_followers_run_executes_nothing_of_the_page():
    """The second follower's run, profiled: no function of the teacher's page (pages/heatmaps.py),
    explorer/ui/views/, explorer/model/ or explorer/attention/ is called (the first follower's run, profiled the
    same way, calls many)."""
    drawn_once.STORE.clear()
    lesson = LESSONS[0]
    room, key = membership.store().create_room()
    first, second = follower(room, "en", "Ada"), follower(room, "en", "Bo")
    step = next(i for i, s in enumerate(lesson.steps) if s.page == "pages/heatmaps.py")
    store = membership.store()
    publish(room, key, lesson, step + 1, time.time())   # both on the class's page, then the teacher's Back
    first.run()
    second.run()
    publish(room, key, lesson, step, time.time())
    qid = question_of(lesson, step, time.time())
    if qid:
        store.reveal(room, key, qid)
    # (not the rest of pages/: AppTest starts each run in Streamlit's folder mode, on the page its session was
    # switched to, the classroom page, whose first line sends the run through app.py)
    watched = tuple(str(ROOT / part) for part in ("pages/heatmaps.py", "explorer/ui/views", "explorer/model",
                                                  "explorer/attention"))

    def called(at: AppTest) -> set[str]:
        seen: set[str] = set()

        def profile(frame, event, _arg):
            if event == "call" and frame.f_code.co_filename.startswith(watched):
                seen.add(f"{Path(frame.f_code.co_filename).relative_to(ROOT)}:{frame.f_code.co_name}")
        threading.setprofile(profile)
        sys.setprofile(profile)
        try:
            at.run()
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
        assert not at.exception
        return seen
    assert any(name.startswith("pages/heatmaps.py") for name in called(first))
    assert called(second) == set()
    assert drawn(second) == drawn(first)


def test_nothing_private_crosses_from_one_follower_or_the_teacher_to_another():
    """A teacher with notes on screen; two students who differ in nickname, vote and typed text: the second
    follower's page (replayed) shows its own nickname-free banner and its own vote state, never the first's vote,
    text or nickname, nor the teacher's notes or private link."""
    drawn_once.STORE.clear()
    lesson = LESSONS[0]
    teacher = session()
    click(teacher, "Start with a class")   # step 1: the heatmaps, its class question on the teacher's screen
    room = seat_of(teacher).room
    link = seat_of(teacher).key
    ada, bo = join(room, "Ada Lovelace"), join(room, "Bo Private")
    qid = lesson.question_id(0)
    ada.run()
    ada.radio(key=f"{qid}_answer").set_value("exactly 1").run()
    click(ada, "Commit my answer")
    click(teacher, "Show answers")
    click(teacher, "Reveal the answer")
    teacher.run()
    before = dict(replayed.COUNTS)
    ada.run()
    bo.run()
    assert replayed.COUNTS["replayed"] > before["replayed"]
    mine, theirs = texts(ada), texts(bo)
    assert "exactly 1" in mine and "You did not answer" in theirs   # each its own vote
    assert "You did not answer" not in mine
    for secret in ("Ada Lovelace", "Bo Private", link, lesson.steps[0].notes.split("\n")[0]):
        assert secret not in theirs and not any(secret in c.proto.spec for c in bo.get("plotly_chart"))
    # Ada types a sentence of her own while following (her page is drawn for her alone, under a key that holds
    # her text, before the teacher's view is applied again): never replayed to Bo
    drawn_once.STORE.clear()   # hers is the first page drawn after: were her text not in its key, Bo got it
    ada.text_area(key="text").set_value("Zebras quietly juggle marmalade.").run()
    bo.run()
    assert not any("quietly" in c.proto.spec for c in bo.get("plotly_chart"))
    assert "quietly" not in texts(bo) and "quietly" not in str(bo.text_area(key="text").value)


def test_a_followers_sentence_panel_is_its_own_and_follows_the_round_on_a_replayed_classroom_page():
    """Followers on the Classroom page (the teacher's view) get it replayed, but the sentence panel and the recap are
    each student's own and the room's state: a round the teacher opens reaches both (the view did not change), and
    Ada's sentence never reaches Bo's page."""
    drawn_once.STORE.clear()
    store = membership.store()
    room, key = store.create_room()
    store.set_view(room, key, {"page": "pages/classroom.py", "params": {}, "opts": {}})
    ada, bo = follower(room, "en", "Ada"), follower(room, "en", "Bo")
    store.open_sentences(room, key, "Write a sentence with it.")
    before = dict(replayed.COUNTS)
    ada.run()
    bo.run()
    assert replayed.COUNTS["replayed"] > before["replayed"]   # one of them was a replay
    assert "Write a sentence with it" in texts(ada) and "Write a sentence with it" in texts(bo)
    ada.text_input(key="_sent_mine_1").input("Zebras juggle it quietly.")
    click(ada, "Send my sentence")
    drawn_once.STORE.clear()   # Ada's page is the first drawn after: were her panel in the recording, Bo got it
    ada.run()
    bo.run()
    assert "Zebras" in texts(ada) and "Zebras" not in texts(bo)
    assert bo.text_input(key="_sent_mine_1").value in (None, "")


def test_a_german_follower_never_gets_the_english_recording_of_the_same_view():
    """The language is part of a replay's key: on one server, an English follower draws a view first; a German
    follower of the same view then gets the page in German (drawn anew), and a second German follower the German
    recording, replayed."""
    drawn_once.STORE.clear()
    lesson = LESSONS[0]
    room, key = membership.store().create_room()
    english, german, other = follower(room, "en", "Ada"), follower(room, "de", "Bo"), follower(room, "de", "Cy")
    step = next(i for i, s in enumerate(lesson.steps) if s.page == "pages/heatmaps.py")
    publish(room, key, lesson, step + 1, time.time())   # every follower on the class's page, then the teacher's Back
    for at in (english, german, other):
        at.run()
    publish(room, key, lesson, step, time.time())
    qid = question_of(lesson, step, time.time())
    if qid:   # revealed: the page is drawn, not folded behind the class question
        membership.store().reveal(room, key, qid)
    english.run()
    before = replayed.COUNTS["replayed"]
    german.run()
    assert replayed.COUNTS["replayed"] == before   # no German recording yet: drawn, not replayed
    other.run()
    assert replayed.COUNTS["replayed"] == before + 1
    assert not english.exception and not german.exception and not other.exception
    english_title = english.title[-1].value
    with i18n.language("de"):
        german_title = i18n._(english_title)
    assert german_title != english_title
    assert german.title[-1].value == german_title == other.title[-1].value
    assert drawn(other) == drawn(german) != drawn(english)


def test_a_follower_drops_a_page_parameter_the_next_view_leaves_out():
    """Lesson 7: step 2 sets pt_ask=0 (its question is the lesson's), step 3 names no pt_ask (the page asks its own,
    by default). A follower that kept step 2's value saw step 3's maps unasked; as a freshly opened link it asks."""
    lesson = next(l for l in LESSONS if l.source == "app:7-where-is-the-answer-carried")
    assert lesson.steps[1].params.get("pt_ask") == "0" and "pt_ask" not in lesson.steps[2].params
    store = membership.store()
    room, key = store.create_room()
    student, started = follower(room, "en", "Ada"), time.time()
    for i in (1, 2):
        publish(room, key, lesson, i, started)
        student.run(timeout=600)
        assert not student.exception, student.exception
    assert any(r.key and r.key.startswith("patch_where") for r in student.radio), "step 3's page question not asked"
