"""A lesson's texts in another language.

A lesson in another language is a file of the same name in the folder named by the language (``lessons/de/``,
``lessons/es/``) holding only its texts, in the same order: the title, ``about``, and each step's title, notes
and question (prompt, options, answer, explain). The steps, pages, parameters, minutes and checks are the English
file's, once; ``translated`` merges the texts onto the English lesson and refuses a translation with another
number of steps or options, another right answer (its place among the options) or a text the English has
missing. A lesson without a file in the session's language is shown in English (``Lesson.lang`` says which).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from explorer.words import i18n
from explorer.words.i18n import N_, Later, _
from explorer.words.numbers import in_text

from .files import LONGEST, NOT_A_TABLE, QUESTION_KEYS, LessonError, checked_table, checked_text
from .model import Lesson, Step, StepQuestion

TRANSLATED_STEP_KEYS = {"title", "notes", "question"}   # what a translation file's step holds: texts only


def _translated_question(raw: object, english: StepQuestion, fail) -> StepQuestion:
    if not isinstance(raw, Mapping):
        fail("question", Later(N_("missing: the English step asks a question; translate its prompt, options, answer "
                                  "and explain")))
    unknown = sorted(set(raw) - (QUESTION_KEYS - {"computed"}))
    if unknown:
        fail(f"question.{unknown[0]}", Later(N_("unknown key (a translated question has answer, explain, options, "
                                                "prompt)")))
    prompt = checked_text(raw.get("prompt"), "question.prompt", fail, LONGEST["prompt"])
    options = raw.get("options")
    if not isinstance(options, list) or len(options) != len(english.options):
        fail("question.options", Later(N_("must be a list of {n} options, as in the English file"),
                                       n=len(english.options)))
    options = tuple(checked_text(o, "question.options", fail, LONGEST["option"]) for o in options)
    if len(set(options)) != len(options):
        fail("question.options", Later(N_("holds the same option twice")))
    answer = checked_text(raw.get("answer"), "question.answer", fail, LONGEST["option"])
    if answer not in options or options.index(answer) != english.options.index(english.answer):
        fail("question.answer", Later(N_("must be option {n}, as in the English file"),
                                      n=english.options.index(english.answer) + 1))
    return StepQuestion(prompt, options, answer, checked_text(raw.get("explain"), "question.explain", fail,
                                                       LONGEST["explain"]))


def translated(lesson: Lesson, text: str | bytes, file: str, lang: str) -> Lesson:
    """``lesson`` (its English file, parsed) with the texts of its translation ``text`` (TOML) in ``lang``: the same
    steps, pages, parameters and question ids, its numbers written the way ``lang`` writes them. LessonError (one
    message) when the translation does not fit."""
    file = str(file)[:80]

    def fail(what, why, step=None):
        raise LessonError(file, why, step, what)

    raw = checked_table(text, fail)
    steps = raw.get("step")
    if not isinstance(steps, list) or len(steps) != len(lesson.steps):
        fail("step", Later(N_("must hold {n} steps, as the English file does"), n=len(lesson.steps)))
    merged = []
    for number, (given, step) in enumerate(zip(steps, lesson.steps), 1):
        def bad(what, why, number=number):
            fail(what, why, number)

        if not isinstance(given, Mapping):
            bad(None, NOT_A_TABLE)
        extra = sorted(set(given) - TRANSLATED_STEP_KEYS)
        if extra:
            bad(extra[0], Later(N_("is the English file's to set (a translation holds title, notes and question "
                                   "only)")))
        notes = checked_text(given.get("notes"), "notes", bad, LONGEST["notes"], required=bool(step.notes))
        question = step.question
        if step.question is not None:
            question = _in_numbers(_translated_question(given.get("question"), step.question, bad), lang)
        elif "question" in given:
            bad("question", Later(N_("the English step asks no question of its own")))
        merged.append(Step(in_text(checked_text(given.get("title"), "title", bad, LONGEST["title"]), lang), step.page,
                           step.minutes, in_text(notes, lang), step.params, question, step.page_question,
                           step.computed, step.checks))
    about = in_text(checked_text(raw.get("about"), "about", fail, LONGEST["about"], required=bool(lesson.about)), lang)
    return Lesson(in_text(checked_text(raw.get("title"), "title", fail, LONGEST["title"]), lang), tuple(merged), about,
                  lesson.source, lang, tuple(lesson.question_id(i) for i in range(len(lesson.steps))))


def _in_numbers(question: StepQuestion, lang: str) -> StepQuestion:
    """A translated question with its numbers written the way ``lang`` writes them (``numbers.in_text``: a
    translation file keeps the English file's numbers, so a check can compare them; a reader gets "0,401")."""
    return StepQuestion(in_text(question.prompt, lang), tuple(in_text(o, lang) for o in question.options),
                        in_text(question.answer, lang), in_text(question.explain, lang))


def translation_path(folder: Path, name: str, lang: str) -> Path:
    """Where lesson file ``name`` of ``folder`` is kept in ``lang``: ``folder/lang/name``."""
    return folder / lang / name


def in_language(lesson: Lesson, folder: Path, name: str, lang: str) -> Lesson:
    """``lesson`` (read from ``folder/name``) in ``lang`` when its translation is there and fits, else as it is
    (English: the page then says so, ``untranslated``)."""
    if lang == i18n.SOURCE:
        return lesson
    path = translation_path(folder, name, lang)
    try:
        return translated(lesson, path.read_bytes(), f"{lang}/{name}", lang) if path.is_file() else lesson
    except (OSError, LessonError):   # a broken translation: English, as without one (the unit tests catch it)
        return lesson


def untranslated(lesson: Lesson, lang: str | None = None) -> bool:
    """A catalogue lesson shown in English to a session in another language (its translation is missing)."""
    lang = lang or i18n.current()
    return lesson.source.startswith(("app:", "dir:")) and lesson.lang != lang and lang != i18n.SOURCE


# a language's name inside a sentence ("traducida al español"), where the menu writes it as a name ("Español")
IN_A_SENTENCE = {"en": N_("English"), "de": N_("German"), "es": N_("Spanish")}


def untranslated_sentence() -> str:
    """The sentence that says a lesson runs in English, naming the session's language as a sentence does."""
    name = IN_A_SENTENCE.get(i18n.current(), IN_A_SENTENCE["en"])
    return _("This lesson is not yet translated into {language}: its texts are shown in English.").format(
        language=_(name))
