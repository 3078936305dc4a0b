"""Lessons in German and Spanish: each shipped lesson has a translation in lessons/de/ and lessons/es/ that fits its
English file (same steps, same number of options, the same right answer's place, every text the English has), with
the English file's question ids; the worked example's numbers are the same in every language; a lesson without a
translation runs in English and says so (``untranslated``)."""
import re
from pathlib import Path

import pytest
from lesson_files import heatmap_step, lesson_text

from explorer.lessons import APP_DIR, LessonError, parse
from explorer.lessons.folders import catalogue
from explorer.lessons.translations import in_language, translated, translation_path, untranslated

LANGS = ("de", "es")
SHIPPED = sorted(APP_DIR.glob("*.toml"))
_DECIMAL = re.compile(r"\d+\.\d+")


def _texts(lesson):
    yield "title", lesson.title
    yield "about", lesson.about
    for n, step in enumerate(lesson.steps, 1):
        yield f"step {n} title", step.title
        yield f"step {n} notes", step.notes
        if step.question:
            q = step.question
            yield from ((f"step {n} {k}", v) for k, v in
                        (("prompt", q.prompt), ("answer", q.answer), ("explain", q.explain)))
            yield from ((f"step {n} option {i}", o) for i, o in enumerate(q.options, 1))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_lesson_has_a_translation_that_fits_its_english_file(path: Path, lang: str):
    english = parse(path.read_bytes(), path.name, f"app:{path.stem}")
    other = translation_path(APP_DIR, path.name, lang)
    assert other.is_file(), f"{other} is missing"
    lesson = translated(english, other.read_bytes(), other.name, lang)   # LessonError when it does not fit
    assert lesson.lang == lang and lesson.source == english.source
    assert [lesson.question_id(i) for i in range(len(lesson.steps))] == \
           [english.question_id(i) for i in range(len(english.steps))]   # one question, one id, every language
    assert [(s.page, s.params, s.minutes, s.computed, s.checks) for s in lesson.steps] == \
           [(s.page, s.params, s.minutes, s.computed, s.checks) for s in english.steps]
    theirs = dict(_texts(lesson))
    for where, text in _texts(english):
        assert bool(theirs[where]) == bool(text), f"{other.name}: {where} is missing"
        # the worked example's numbers (and every other decimal) are the English file's, exactly, written with the
        # reader's decimal mark (numbers.in_text: "0,401" in German and Spanish)
        assert sorted(_DECIMAL.findall(theirs[where].replace(",", "."))) == sorted(_DECIMAL.findall(text)), \
            f"{other.name}: {where}"
        assert not _DECIMAL.findall(theirs[where]), f"{other.name}: {where} writes a decimal point"
    changed = sum(theirs[w] != t for w, t in _texts(english) if t)
    assert changed > len(english.steps), f"{other.name} looks untranslated"


ENGLISH = lesson_text("Rows", heatmap_step("A heatmap", "Point at a row.", layer=2, head=3, minutes=3, question=(
    "What does a row add up to?", ["exactly 1", "the number of words", "it depends"], "exactly 1", "A softmax.")),
    about="One line.")
GERMAN = """title = "Zeilen"
about = "Eine Zeile."
[[step]]
title = "Eine Heatmap"
notes = "Zeig auf eine Zeile."
[step.question]
prompt = "Was ergibt eine Zeile zusammen?"
options = ["genau 1", "die Anzahl der Wörter", "es kommt darauf an"]
answer = "genau 1"
explain = "Eine Softmax."
"""


def _english():
    return parse(ENGLISH, "rows.toml", "app:rows")


def test_a_translation_takes_its_texts_and_keeps_the_english_ids_and_view():
    lesson = translated(_english(), GERMAN, "de/rows.toml", "de")
    assert lesson.title == "Zeilen" and lesson.steps[0].question.answer == "genau 1"
    assert lesson.steps[0].params == {"model": "all-MiniLM-L6-v2", "layer": "2", "head": "3"}
    assert lesson.question_id(0) == _english().question_id(0)


@pytest.mark.parametrize("broken, why", [
    (GERMAN.replace('answer = "genau 1"', 'answer = "es kommt darauf an"'), "must be option 1"),
    (GERMAN.replace(', "es kommt darauf an"', ""), "3 options"),
    (GERMAN + '\n[[step]]\ntitle = "Noch einer"\n', "1 steps"),
    (GERMAN.replace('notes = "Zeig auf eine Zeile."\n', ""), "notes"),
    (GERMAN.replace('explain = "Eine Softmax."\n', ""), "explain"),
    (GERMAN.replace('notes = "Zeig auf eine Zeile."', 'notes = "x"\nminutes = 9'), "English file's to set"),
])
def test_a_translation_that_does_not_fit_is_refused(broken, why):
    with pytest.raises(LessonError, match=why):
        translated(_english(), broken, "de/rows.toml", "de")


def test_a_lesson_without_its_language_falls_back_to_english_and_says_so(tmp_path):
    (tmp_path / "rows.toml").write_text(ENGLISH)
    (tmp_path / "de").mkdir()
    (tmp_path / "de" / "rows.toml").write_text(GERMAN)
    lesson = _english()
    assert in_language(lesson, tmp_path, "rows.toml", "de").title == "Zeilen"
    spanish = in_language(lesson, tmp_path, "rows.toml", "es")   # no es/rows.toml
    assert spanish.title == "Rows" and untranslated(spanish, "es") and not untranslated(spanish, "en")
    lessons, errors = catalogue({"EXPLORER_LESSONS_DIR": str(tmp_path)}, lang="de")
    assert not errors and [x.title for x in lessons if x.source == "dir:rows"] == ["Zeilen"]


def test_the_untranslated_note_names_the_language_as_a_sentence_does():
    """"traducida al español", not the menu's "al Español"; German keeps its capital."""
    from explorer.lessons.translations import untranslated_sentence
    from explorer.words import i18n
    with i18n.language("es"):
        assert "aún no está traducida al español:" in untranslated_sentence()
    with i18n.language("de"):
        assert "noch nicht auf Deutsch übersetzt" in untranslated_sentence()
