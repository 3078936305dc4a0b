"""Lesson files: the shipped lessons validate, each kind of error gives one message naming file, step and field and
nothing of that file is used, a lesson written out reads back the same, the handout escapes and prints its join
QR, and a lesson's place kept in the room's view survives a store reopen on SQLite and on Redis."""
import json
from pathlib import Path

import pytest
from lesson_files import heatmap_step, lesson_text

from explorer.classroom import open_store
from explorer.lessons import Lesson, LessonError, Step, catalogue, dump, parse
from explorer.lessons.files import MAX_BYTES, MAX_STEPS
from explorer.lessons.handout import handout_html
from explorer.lessons.pages import STEP_PAGES, shareable
from explorer.lessons.run import ended, place, resume
from explorer.model.registry import EMBEDDED, EMBEDDED_DECODER, EMBEDDED_ENCODER

ROOT = Path(__file__).resolve().parents[2]
GOOD = lesson_text("Tiny", heatmap_step("Heatmap", "say this", layer=5, head=11,
                                         question=("Rows sum to?", ["1", "2"], "1", "softmax")))


def error_of(text: str, name: str = "bad.toml") -> LessonError:
    with pytest.raises(LessonError) as caught:
        parse(text, name)
    return caught.value


def test_shipped_lessons_validate_and_fit_in_25_minutes():
    lessons, errors = catalogue({})
    assert errors == []
    titles = {lesson.title: lesson for lesson in lessons}
    assert set(titles) == {"Attention in 20 minutes", "How a decoder writes", "Is attention an explanation?",
                           "How a model copies: induction heads", "Where does one score come from?",
                           "Watch a circuit grow", "Where is the answer carried?"}
    for lesson in lessons:
        assert lesson.minutes <= 25, lesson.title
        for step in lesson.steps:
            assert step.notes, (lesson.title, step.title)
            assert step.question or step.page_question or step.computed, (lesson.title, step.title)   # asks
    pages = [s.page for s in titles["Attention in 20 minutes"].steps]
    assert pages == ["pages/heatmaps.py", "pages/flip.py", "pages/lab_worked_example.py", "pages/lab_softmax.py",
                     "pages/lab_permutation.py", "pages/lab_positions.py", "pages/lab_masks.py"]


def test_worked_example_step_uses_the_worked_numbers():
    """The worked example's question and notes quote the seed's numbers, which our maths reproduces."""
    import numpy as np

    from explorer import maths

    lesson = next(x for x in catalogue({})[0] if x.source == "app:1-attention-in-20-minutes")
    step = next(s for s in lesson.steps if s.page == "pages/lab_worked_example.py")
    s = maths.attention_steps(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V)
    weights, output = np.round(s["weights"][0], 3), np.round(s["output"][0], 3)
    assert list(weights) == [0.401, 0.198, 0.401] and list(output) == [0.802, 0.797]
    assert step.question.answer == "[0.802, 0.797]" and "[0.401, 0.198, 0.401]" in step.question.prompt
    assert "5.056" in step.notes and f"{s['exp_sum'][0]:.3f}" == "5.056"


def test_model_sizes_read_from_the_configs_match_the_registry_labels():
    """Layer and head ranges come from each embedded model's config (config.json, or the GGUF's header), read
    without loading a weight; the menus' labels say the same numbers."""
    from explorer.model.embedded import layers_and_heads

    for name, spec in EMBEDDED.items():
        layers, heads = layers_and_heads(name)
        assert f"{layers} layers × {heads} heads" in spec.label
    assert layers_and_heads(EMBEDDED_ENCODER) == (6, 12) and layers_and_heads(EMBEDDED_DECODER) == (30, 9)


@pytest.mark.parametrize("text, step, field, words", [
    (GOOD.replace("pages/heatmaps.py", "pages/nope.py"), 1, "page", "not a page"),
    (GOOD.replace('page = "pages/heatmaps.py"\n', ""), 1, "page", "missing"),
    (GOOD.replace('"layer" = "5"', '"layer" = "6"'), 1, "params.layer", "out of range"),
    (GOOD.replace('"head" = "11"', '"head" = "99"'), 1, "params.head", "out of range"),
    (GOOD.replace('"layer" = "5"', '"colour" = "5"'), 1, "params.colour", "takes no parameter"),
    (GOOD.replace('"model" = "all-MiniLM-L6-v2"', '"model" = "gpt2"'), 1, "params.model", "not an embedded model"),
    (GOOD.replace("minutes = 2.0", "minutes = 2.0\nsurprise = 1"), 1, "surprise", "unknown key"),
    (GOOD.replace('title = "Tiny"', 'title = "Tiny"\nauthor = "x"'), None, "author", "unknown key"),
    (GOOD.replace("minutes = 2.0", "minutes = 90"), 1, "minutes", "from 0.5"),
    (GOOD.replace('answer = "1"', 'answer = "3"'), 1, "question.answer", "not one of the options"),
    (GOOD.replace('explain = "softmax"', 'explain = "softmax"\nhint = "x"'), 1, "question.hint", "unknown key"),
    (GOOD.replace('notes = "say this"', 'notes = "<script>alert(1)</script>"'), 1, "notes", "markup"),
    (GOOD.replace('prompt = "Rows sum to?"', 'prompt = "<img src=x onerror=alert(1)>"'), 1, "question.prompt",
     "markup"),
    (GOOD.replace('notes = "say this"', 'notes = "a\\u202eb"'), 1, "notes", "control"),
    (GOOD.replace('notes = "say this"', f'notes = "{"x" * 3000}"'), 1, "notes", "at most 2,000"),
    (GOOD.replace('title = "Tiny"\n', ""), None, "title", "missing"),
    ('title = "t"', None, "step", "missing"),
    ("title = [", None, None, "not valid TOML"),
    (GOOD + "\n[[step]]\ntitle = 'x'\npage = 'pages/lab_softmax.py'\nminutes = 1\nquestion = 'page'\n"
     "[[step]]\ntitle = 'y'\npage = 'pages/flip.py'\nminutes = 1\nquestion = 'page'\n", 3, "question",
     "asks no question of its own"),
    (GOOD + "\n[[step]]\ntitle = 'y'\npage = 'pages/heatmaps.py'\nminutes = 1\nquestion = 'page'\n", 2, "question",
     "only with breakdown = 1"),
])
def test_each_error_is_one_message_naming_file_step_and_field(text, step, field, words):
    err = error_of(text)
    message = str(err)
    assert message.startswith("lesson file 'bad.toml'") and words in message, message
    assert (f"step {step}" in message) == (step is not None) and err.step == step
    assert err.field == field and (field is None or f"field {field!r}" in message)
    assert message.count("\n") == 0


def test_an_error_reads_in_each_readers_language_though_it_was_made_once():
    """The catalogue of lessons, errors included, is read once for every session: an error keeps its reason's
    message and values and is put into words when shown, in the language of whoever reads it."""
    from explorer.words.i18n import language

    err = error_of(GOOD.replace('"layer" = "5"', '"layer" = "6"'))
    with language("de"):
        german = str(err)
    with language("es"):
        spanish = str(err)
    assert str(err) == "lesson file 'bad.toml', step 1, field 'params.layer': 6 is out of range (0–5)."
    assert german == "Lektionsdatei 'bad.toml', Schritt 1, Feld 'params.layer': 6 liegt außerhalb des Bereichs (0–5)."
    assert spanish == "archivo de lección 'bad.toml', paso 1, campo 'params.layer': 6 está fuera del rango (0–5)."
    with language("de"):
        assert str(error_of(GOOD.replace('answer = "1"', 'answer = "3"'))).endswith(
            "Feld 'question.answer': '3' ist keine der Optionen.")


def test_ten_megabytes_and_too_many_steps_are_refused_before_parsing():
    huge = GOOD.replace('notes = "say this"', 'notes = "' + "x" * 10_000_000 + '"')
    assert "at most 64,000" in str(error_of(huge)) and len(huge) > MAX_BYTES
    many = 'title = "t"\n' + "".join("[[step]]\ntitle = 'x'\npage = 'pages/lab_softmax.py'\nminutes = 1\n"
                                     for _ in range(MAX_STEPS + 1))
    assert f"at most {MAX_STEPS}" in str(error_of(many))
    assert "not UTF-8" in str(error_of(b"title = '\xff'"))


def test_a_folder_with_one_bad_file_keeps_the_good_ones(tmp_path):
    (tmp_path / "good.toml").write_text(GOOD)
    (tmp_path / "bad.toml").write_text(GOOD.replace('"layer" = "5"', '"layer" = "60"'))
    (tmp_path / "huge.toml").write_text("#" * (MAX_BYTES + 1))
    lessons, errors = catalogue({"EXPLORER_LESSONS_DIR": str(tmp_path)})
    mine = [x for x in lessons if x.source.startswith("dir:")]
    assert [x.source for x in mine] == ["dir:good"]
    assert sorted(e.file for e in errors) == ["bad.toml", "huge.toml"]
    assert len(lessons) == 8   # the app's seven and the good one


def test_dump_reads_back_the_same_lesson():
    for lesson in catalogue({})[0]:
        assert parse(dump(lesson), "again.toml", lesson.source) == lesson
    tricky = parse(GOOD.replace('notes = "say this"', 'notes = "quote \\" backslash \\\\ **b** $x$"'), "t.toml")
    assert parse(dump(tricky), "t.toml") == tricky


def test_shareable_keeps_only_what_the_page_takes():
    url = {"model": "all-MiniLM-L6-v2", "layer": "3", "head": "40", "room": "ABCDEF", "junk": "1"}
    assert shareable("pages/heatmaps.py", url) == {"model": "all-MiniLM-L6-v2", "layer": "3"}
    assert shareable("pages/home.py", url) == {}
    assert all(p.startswith("pages/") and (ROOT / p).is_file() for p in STEP_PAGES)


def test_handout_lists_steps_questions_escaped_and_the_join_qr():
    hostile = parse(GOOD.replace('"Rows sum to?"', '"Is 1 & 2 > 0?"'), "h.toml")
    page = handout_html(hostile, "http://school.example/classroom?join=K7M2QX", "K7M-2QX")
    assert "Is 1 &amp; 2 &gt; 0?" in page and "Heatmap" in page and "<svg" in page and "K7M-2QX" in page
    assert "@media print" in page and "<script" not in page
    plain = handout_html(catalogue({})[0][0])
    assert "<svg" not in plain and plain.count("<li><b>") == 7


def test_place_resumes_every_step_and_an_own_lesson():
    for lesson in catalogue({})[0]:
        for i in range(len(lesson.steps)):
            where = json.loads(json.dumps(place(lesson, i, 10.0, 20.0)))
            assert resume(where, {}) == (lesson, i)
            assert "toml" not in where   # an app lesson is found again by its source
    own = parse(GOOD, "mine.toml")
    where = place(own, 0, 1.0, 1.0)
    assert where["question"]["answer"] == "1" and where["qid"] == own.question_id(0)
    assert resume(where, {}) == (own, 0)
    assert resume({"source": "app:gone", "step": 0}, {}) is None
    assert resume({**where, "step": 5}, {}) is None and resume("junk", {}) is None


@pytest.fixture
def env(classroom_env):
    """A fresh, empty classroom backend: SQLite, then Redis (``classroom_env`` in conftest)."""
    return classroom_env


def test_lesson_step_survives_a_store_reopen(env):
    """The teacher's view carries the lesson's place; a new store object (a restarted server) reads the same step,
    which resumes to the same lesson and step, and a student joining then reads it too."""
    lesson = next(x for x in catalogue({})[0] if x.source == "app:2-how-a-decoder-writes")
    first = open_store(env)
    code, key = first.create_room()
    step = lesson.steps[2]
    first.set_view(code, key, {"page": step.page, "params": step.params, "opts": {},
                               "lesson": place(lesson, 2, 100.0, 200.0)})
    del first
    again = open_store(env)
    again.join(code, "late", "Late")
    view = again.view(code)[1]
    assert view["page"] == "pages/write.py" and view["params"] == step.params
    assert view["lesson"]["step"] == 2 and view["lesson"]["n"] == 5 and view["lesson"]["started"] == 100.0
    assert resume(view["lesson"], {}) == (lesson, 2)


def test_a_finished_lessons_view_names_its_questions_and_resumes_nothing():
    lesson = catalogue({})[0][0]
    where = ended(lesson, ["q1", "q2"])
    assert where == {"source": lesson.source, "title": lesson.title, "ended": True, "qids": ["q1", "q2"]}
    assert resume(json.loads(json.dumps(where))) is None


def test_planned_until_adds_the_steps_up_to_and_including_this_one():
    steps = tuple(Step(f"s{i}", "pages/lab_softmax.py", m) for i, m in enumerate((2, 3, 5)))
    lesson = Lesson("Clock", steps)
    assert [lesson.planned_until(i) for i in range(3)] == [2, 5, 10] and lesson.minutes == 10
