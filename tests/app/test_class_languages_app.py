"""AppTest of a class in three languages (issue 37): a teacher in Spanish runs a lesson; students in German,
English and Spanish follow. Each follower keeps the language it chose (the teacher's ``lang`` never reaches it),
the teacher's Next brings each the step in its own language, and the three votes, one cast in each language,
count once under one option id; the teacher's report reads in Spanish."""
import re

import pytest
from pagetest import click, english_left, page_texts, seat_of, session, texts
from streamlit.testing.v1 import AppTest

from explorer.classroom import normalise_code
from explorer.classroom import report as class_report
from explorer.lessons.folders import find
from explorer.ui import language
from explorer.ui.live import lesson_bar, membership
from explorer.words import i18n

pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py

SOURCE = "app:1-attention-in-20-minutes"
JOIN = {"de": "Beitreten", "en": "Join", "es": "Entrar"}


def joined(room: str, lang: str | None) -> AppTest:
    """A student's session in ``lang`` (its link's ``lang=``; None: no lang in the link, English) that joins."""
    student = session(**({"lang": lang} if lang else {}))
    student.switch_page("pages/classroom.py").run()
    student.text_input(key="_class_typed").input(room)
    return click(student, JOIN[lang or "en"])


def test_each_follower_keeps_its_language_and_three_languages_vote_under_one_option_id(downloads):
    """Each session's actions run under its own language (``i18n.language``): AppTest reads a widget's value back
    through the page's format function in the test's thread, where the page's translated labels must match."""
    lessons = {lang: find(SOURCE, {}, lang) for lang in ("en", "de", "es")}
    assert {lang: lesson.lang for lang, lesson in lessons.items()} == {"en": "en", "de": "de", "es": "es"}
    with i18n.language("es"):
        teacher = session(lang="es")
        click(teacher, "Empezar con una clase")   # Home, in Spanish: a class and step 1
        room = seat_of(teacher).room
        assert "paso **1 de 7**" in texts(teacher) and lessons["es"].steps[0].title in texts(teacher)
    students = {}
    for lang in ("de", "en", "es"):
        with i18n.language(lang):
            students[lang] = joined(room, None if lang == "en" else lang)
    qid = lessons["en"].question_id(0)
    assert {lesson.question_id(0) for lesson in lessons.values()} == {qid}   # one question, one id
    for lang, student in students.items():
        with i18n.language(lang):
            student.run()
            shown = texts(student)
            step = lessons[lang].steps[0]
            assert student.title[0].value == i18n._("Attention heatmaps")   # the teacher's page, in mine
            assert i18n._("**Step {n} of {total}** · {title}").format(n=1, total=7, title=step.title) in shown
            assert step.question.prompt in shown   # the class question in the student's own language
            assert student.query_params.get("lang", "en") == lang   # never the teacher's "es" (unless chosen)
            assert list(student.radio(key=f"{qid}_answer").options) == list(step.question.options)
            student.radio(key=f"{qid}_answer").set_value(step.question.answer).run()   # the right one, in its words
            click(student, i18n._("Commit my answer"))
    assert membership.store().counts(normalise_code(room), qid) == {"#0": 3}   # three votes, one option id

    with i18n.language("es"):
        teacher.run()
        assert "**3 de 3 han respondido**" in texts(teacher)
        click(teacher, "Mostrar respuestas")
        click(teacher, "Descubrir la respuesta")
        click(teacher, "Siguiente")   # the teacher's Next: each follower gets step 2 in its own language
    for lang, student in students.items():
        with i18n.language(lang):
            student.run()
            assert i18n._("**Step {n} of {total}** · {title}").format(
                n=2, total=7, title=lessons[lang].steps[1].title) in texts(student)
            assert lessons[lang].steps[1].question.prompt in texts(student)
            assert student.query_params.get("lang", "en") == lang

    with i18n.language("es"):   # the report, as the teacher (Spanish) downloads it
        reports = class_report.collect(membership.store(), normalise_code(room), seat_of(teacher).key)
        first = next(r for r in reports if r.asked.qid == qid)
        assert first.answers(1)[0] == (lessons["es"].steps[0].question.answer, 3)
        csv = class_report.csv_text(reports)
        teacher.switch_page("pages/classroom.py").run()
        [table] = teacher.dataframe
        table = table.value
    assert csv.splitlines()[0] == "pregunta,ronda,opción,recuento,correcta"
    assert f"{lessons['es'].steps[0].question.answer},3,sí" in csv
    assert downloads(".csv") == csv   # the teacher's download: the CSV above, in Spanish
    assert list(table.columns) == ["#", "pregunta", "respuesta correcta", "ronda 1", "ronda 2", "cambio"]
    assert table.iloc[0]["ronda 1"] == "3 de 3 correctas (100\xa0%)"   # CLDR: a space before % in Spanish


# ---------------------------------------------------------------------------------------------- nothing left English

ALLOWED = {"K7M", "QX", "Handout", "HTML", "CSV", "toml", "min", "TOML", "QR", "all", "MiniLM", "L6", "SmolLM2",
           "Instruct", "SmolLM", "no", *i18n.LANGUAGES.values()}   # the language menu names each in its own


def _classroom(view: str, lang: str) -> AppTest:
    at = session(lang=lang)
    at.switch_page("pages/classroom.py").run()
    if view == "teacher":
        click(at, {"en": "Start a class", "de": "Klasse starten", "es": "Empezar una clase"}[lang])
    return at


@pytest.mark.parametrize("lang", ("de", "es"))
@pytest.mark.parametrize("view", ("outside", "teacher", "lessons"))
def test_the_classroom_and_lessons_pages_leave_nothing_english(view, lang):
    def render(language: str) -> AppTest:
        if view == "lessons":
            at = session(lang=language)
            at.switch_page("pages/lessons.py").run()
            return at
        return _classroom(view, language)

    english = render("en")
    with i18n.language(lang):
        other = render(lang)
    assert not other.exception, other.exception
    room = seat_of(other).room or ""
    code = set(re.findall(r"[^\W\d_]{2,}", room))   # the room code's letters (the join link names it too)
    assert english_left(page_texts(english), page_texts(other), ALLOWED | code) == []


def test_a_teacher_who_switches_the_language_mid_lesson_gets_the_lessons_texts_in_it():
    """The lesson's own texts (title, step, question) follow the teacher's language menu, as the interface does;
    the class, the step and the question's id stay."""
    lessons = {lang: find(SOURCE, {}, lang) for lang in ("en", "de", "es")}
    with i18n.language("de"):
        teacher = session(lang="de")
        click(teacher, "Mit einer Klasse starten")
        click(teacher, "Weiter")
        room = seat_of(teacher).room
        assert lessons["de"].steps[1].title in texts(teacher)
    for lang in ("en", "es"):
        with i18n.language(lang):
            teacher.sidebar.selectbox(key=language.PICKED).select(lang).run()
            assert not teacher.exception, teacher.exception
            shown = texts(teacher)
            lesson, step = lessons[lang], lessons[lang].steps[1]
            assert i18n._("**{lesson}** · step **{n} of {total}**: {step}").format(
                lesson=lesson.title, n=2, total=7, step=step.title) in shown.replace("\\", ""), shown
            assert step.question.prompt in shown
            assert lessons["de"].steps[1].title not in shown
            assert seat_of(teacher).room == room
            assert teacher.session_state[lesson_bar.LESSON].question_id(1) == lessons["en"].question_id(1)
    with i18n.language("es"):
        click(teacher, "Siguiente")   # the lesson goes on in the new language
        assert lessons["es"].steps[2].title in texts(teacher)
