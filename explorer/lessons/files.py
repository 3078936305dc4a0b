"""Lesson files (TOML): reading one with every check, writing one back, and the catalogue of lessons.

A file with any error gives ONE :class:`LessonError` whose message names the file, the step and the field, and
nothing of that file is used. The checks: size (MAX_BYTES), TOML syntax, unknown or missing keys, types, lengths,
HTML markup and control characters in any text, the page (one of ``pages.STEP_PAGES``), its parameters (names and
ranges), the question (2-6 options, the answer among them) and the planned minutes.

    title = "Attention in 20 minutes"
    about = "One line for the list of lessons."
    [[step]]
    title = "A head's heatmap"
    page = "pages/heatmaps.py"
    minutes = 3
    notes = "What to say (only on the teacher's screen)."
    params = { model = "all-MiniLM-L6-v2", layer = 2, head = 3 }
    question = { prompt = "...", options = ["a", "b"], answer = "a", explain = "..." }   # or question = "page"
    check = "rows_sum_to_one"          # optional: claims measured on the model (a name or a list of names)

or a question computed on the step's model: ``question = { computed = "logit_lens_first_top" }``. The names are
those of ``explorer.lessons.computed`` (COMPUTED, CHECKS), each for the pages it reads the parameters of.

A lesson in another language is a file of the same name in the folder named by the language (``lessons/de/``,
``lessons/es/``) holding only its texts, in the same order: the title, ``about``, and each step's title, notes
and question (prompt, options, answer, explain). The steps, pages, parameters, minutes and checks are the English
file's, once; ``translated`` merges the texts onto the English lesson and refuses a translation with another
number of steps or options, another right answer (its place among the options) or a text the English has
missing. A lesson without a file in the session's language is shown in English (``Lesson.lang`` says which).
"""
from __future__ import annotations

import json
import os
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from explorer.words import i18n, numbers
from explorer.words.i18n import N_, Later, _

from .computed import CHECKS, COMPUTED, known
from .model import PAGE_QUESTION, Lesson, Step, StepQuestion
from .pages import PAGE_QUESTIONS, STEP_PAGES, check_params

APP_DIR = Path(__file__).resolve().parents[2] / "lessons"   # the app's own lessons, at the repository root
ENV_DIR = "EXPLORER_LESSONS_DIR"   # a folder of the deployer's lessons
MAX_BYTES = 64_000
MAX_STEPS = 30
MAX_FILES = 50   # lesson files read from one folder
MAX_MINUTES = 25.0   # one step
LONGEST = {"title": 120, "about": 400, "notes": 2_000, "prompt": 400, "option": 120, "explain": 1_000}
TOP_KEYS = {"title", "about", "step"}
STEP_KEYS = {"title", "page", "minutes", "notes", "params", "question", "check"}
QUESTION_KEYS = {"prompt", "options", "answer", "explain", "computed"}
TRANSLATED_STEP_KEYS = {"title", "notes", "question"}   # what a translation file's step holds: texts only
TABLE = Later(N_("must be a table ([[step]])"))
_MARKUP = re.compile(r"<\s*[A-Za-z!/?]")
_BAD_CHARS = {"Cc", "Cf", "Cs", "Co"}


class LessonError(ValueError):
    """A lesson file that cannot be used; ``str()`` is the one message to show."""

    def __init__(self, file: str, why: str | Later, step: int | None = None, field: str | None = None):
        self.file, self.why, self.step, self.field = file, why, step, field
        super().__init__(file, why, step, field)

    def __str__(self) -> str:
        """In the reader's language: the catalogue of lessons, errors included, is read once for every session."""
        where = [i18n._("lesson file {file}").format(file=repr(self.file))]
        if self.step is not None:
            where.append(i18n._("step {n}").format(n=self.step))
        if self.field is not None:
            where.append(i18n._("field {field}").format(field=repr(self.field)))
        return f"{', '.join(where)}: {self.why}."


def _too_big(size: int) -> Later:
    return Later(N_("is {n} bytes; a lesson file is at most {most}"), n=numbers.integer(size),
                 most=numbers.integer(MAX_BYTES))


def _text(value: object, what: str, fail, longest: int, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        fail(what, Later(N_("missing")) if value is None else Later(N_("must be text")))
    if required and not value.strip():
        fail(what, Later(N_("must not be empty")))
    if len(value) > longest:
        fail(what, Later(N_("is {n} characters long; at most {most}"), n=numbers.integer(len(value)),
                         most=numbers.integer(longest)))
    if _MARKUP.search(value):
        fail(what, Later(N_("holds markup (something like <tag>); write plain text")))
    if any(unicodedata.category(ch) in _BAD_CHARS for ch in value if ch not in "\n\t"):
        fail(what, Later(N_("holds control or invisible formatting characters")))
    return value.strip()


def _param(value: object) -> str | None:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return numbers.number(value)
    return value if isinstance(value, str) else None


def _named(name: object, table: Mapping, page: str, what: str, fail) -> str:
    if not isinstance(name, str) or name not in table:
        fail(what, Later(N_("{value} is not one of {known}"), value=repr(str(name)[:60]), known=known(table)))
    if page not in table[name].pages:
        fail(what, Later(N_("{name} reads the parameters of {pages}, not of {page}"), name=name,
                         pages=", ".join(table[name].pages), page=page))
    return name


def _checks(raw: object, page: str, fail) -> tuple[str, ...]:
    names = [] if raw is None else [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list):
        fail("check", Later(N_("must be a check's name or a list of names")))
    return tuple(dict.fromkeys(_named(n, CHECKS, page, "check", fail) for n in names))


def _question(raw: object, page: str, fail, params: Mapping[str, str]) -> tuple[StepQuestion | str | None, bool]:
    """(the question written here, or the name of a computed one, or None; whether it is the page's own)."""
    if raw is None:
        return None, False
    if raw == PAGE_QUESTION:
        if page not in PAGE_QUESTIONS:
            fail("question", Later(N_("{page} asks no question of its own; write the question here instead"),
                                   page=page))
        needs = STEP_PAGES[page].quiz_needs if page in STEP_PAGES else None
        if needs and params.get(needs[0]) != needs[1]:
            fail("question", Later(N_("{page} asks its own question only with {name} = {value} in the step's params"),
                                   page=page, name=needs[0], value=needs[1]))
        return None, True
    if not isinstance(raw, Mapping):
        fail("question", Later(N_('must be a table (prompt, options, answer, explain) or "{own}"'), own=PAGE_QUESTION))
    if "computed" in raw:
        if set(raw) != {"computed"}:
            fail("question", Later(N_("a computed question takes its prompt, options and answer from the model: give "
                                      "only its name (computed = ...)")))
        return _named(raw["computed"], COMPUTED, page, "question.computed", fail), False
    unknown = sorted(set(raw) - QUESTION_KEYS)
    if unknown:
        fail(f"question.{unknown[0]}", Later(N_("unknown key (a question has {keys})"),
                                             keys=", ".join(sorted(QUESTION_KEYS))))
    prompt = _text(raw.get("prompt"), "question.prompt", fail, LONGEST["prompt"])
    options = raw.get("options")
    if not isinstance(options, list) or not 2 <= len(options) <= 6:
        fail("question.options", Later(N_("must be a list of 2 to 6 options")))
    options = tuple(_text(o, "question.options", fail, LONGEST["option"]) for o in options)
    if len(set(options)) != len(options):
        fail("question.options", "holds the same option twice")
    answer = _text(raw.get("answer"), "question.answer", fail, LONGEST["option"])
    if answer not in options:
        fail("question.answer", Later(N_("{answer} is not one of the options"), answer=repr(answer[:40])))
    explain = _text(raw.get("explain"), "question.explain", fail, LONGEST["explain"])
    return StepQuestion(prompt, options, answer, explain), False


def _step(raw: object, number: int, fail) -> Step:
    def bad(what, why):
        fail(what, why, number)

    if not isinstance(raw, Mapping):
        bad(None, TABLE)
    unknown = sorted(set(raw) - STEP_KEYS)
    if unknown:
        bad(unknown[0], Later(N_("unknown key (a step has {keys})"), keys=", ".join(sorted(STEP_KEYS))))
    title = _text(raw.get("title"), "title", bad, LONGEST["title"])
    page = raw.get("page")
    if not isinstance(page, str) or page not in STEP_PAGES:
        bad("page", Later(N_("{page} is not a page of the app (pages: {pages})"), page=repr(str(page)[:60]),
                          pages=", ".join(STEP_PAGES)) if page is not None else Later(N_("missing")))
    minutes = raw.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not 0.5 <= minutes <= MAX_MINUTES:
        bad("minutes", Later(N_("must be a number of minutes from 0.5 to {most}"), most=numbers.number(MAX_MINUTES))
            if minutes is not None else Later(N_("missing")))
    notes = _text(raw.get("notes"), "notes", bad, LONGEST["notes"], required=False)
    given = raw.get("params", {})
    if not isinstance(given, Mapping):
        bad("params", Later(N_("must be a table of the page's URL parameters")))
    params = {}
    for name, value in given.items():
        text = _param(value)
        if text is None:
            bad(f"params.{name}", Later(N_("must be text or a number")))
        params[str(name)] = text
    wrong = check_params(page, params)
    if wrong:
        bad(f"params.{wrong[0]}", wrong[1])
    question, own = _question(raw.get("question"), page, bad, params)
    checks = _checks(raw.get("check"), page, bad)
    computed = question if isinstance(question, str) else ""
    return Step(title, page, float(minutes), notes, params, None if computed else question, own, computed, checks)


def _table(text: str | bytes, fail) -> dict:
    """A lesson file's TOML table: at most MAX_BYTES, UTF-8, valid TOML, only the keys a lesson has."""
    if len(text) > MAX_BYTES:
        fail(None, _too_big(len(text)))
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            fail(None, Later(N_("is not UTF-8 text")))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        fail(None, Later(N_("is not valid TOML ({error})"), error=str(err)))
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        fail(unknown[0], Later(N_("unknown key (a lesson has {keys})"), keys=", ".join(sorted(TOP_KEYS))))
    return raw


def parse(text: str | bytes, file: str, source: str = "own") -> Lesson:
    """The lesson in ``text`` (TOML); LessonError (one message) for anything wrong."""
    file = str(file)[:80]

    def fail(what, why, step=None):
        raise LessonError(file, why, step, what)

    raw = _table(text, fail)
    title = _text(raw.get("title"), "title", fail, LONGEST["title"])
    about = _text(raw.get("about"), "about", fail, LONGEST["about"], required=False)
    steps = raw.get("step")
    if not isinstance(steps, list) or not steps:
        fail("step", Later(N_("missing: a lesson has at least one [[step]]")))
    if len(steps) > MAX_STEPS:
        fail("step", Later(N_("{n} steps; a lesson has at most {most}"), n=len(steps), most=MAX_STEPS))
    return Lesson(title, tuple(_step(s, n, fail) for n, s in enumerate(steps, 1)), about, source)


# ---------------------------------------------------------------------------------------------- languages

def _translated_question(raw: object, english: StepQuestion, fail) -> StepQuestion:
    if not isinstance(raw, Mapping):
        fail("question", Later(N_("missing: the English step asks a question; translate its prompt, options, answer "
                                  "and explain")))
    unknown = sorted(set(raw) - (QUESTION_KEYS - {"computed"}))
    if unknown:
        fail(f"question.{unknown[0]}", Later(N_("unknown key (a translated question has answer, explain, options, "
                                                "prompt)")))
    prompt = _text(raw.get("prompt"), "question.prompt", fail, LONGEST["prompt"])
    options = raw.get("options")
    if not isinstance(options, list) or len(options) != len(english.options):
        fail("question.options", Later(N_("must be a list of {n} options, as in the English file"),
                                       n=len(english.options)))
    options = tuple(_text(o, "question.options", fail, LONGEST["option"]) for o in options)
    if len(set(options)) != len(options):
        fail("question.options", "holds the same option twice")
    answer = _text(raw.get("answer"), "question.answer", fail, LONGEST["option"])
    if answer not in options or options.index(answer) != english.options.index(english.answer):
        fail("question.answer", Later(N_("must be option {n}, as in the English file"),
                                      n=english.options.index(english.answer) + 1))
    return StepQuestion(prompt, options, answer, _text(raw.get("explain"), "question.explain", fail,
                                                       LONGEST["explain"]))


def translated(lesson: Lesson, text: str | bytes, file: str, lang: str) -> Lesson:
    """``lesson`` (its English file, parsed) with the texts of its translation ``text`` (TOML) in ``lang``: the same
    steps, pages, parameters and question ids. LessonError (one message) when the translation does not fit."""
    file = str(file)[:80]

    def fail(what, why, step=None):
        raise LessonError(file, why, step, what)

    raw = _table(text, fail)
    steps = raw.get("step")
    if not isinstance(steps, list) or len(steps) != len(lesson.steps):
        fail("step", Later(N_("must hold {n} steps, as the English file does"), n=len(lesson.steps)))
    merged = []
    for number, (given, step) in enumerate(zip(steps, lesson.steps), 1):
        def bad(what, why, number=number):
            fail(what, why, number)

        if not isinstance(given, Mapping):
            bad(None, TABLE)
        extra = sorted(set(given) - TRANSLATED_STEP_KEYS)
        if extra:
            bad(extra[0], Later(N_("is the English file's to set (a translation holds title, notes and question "
                                   "only)")))
        notes = _text(given.get("notes"), "notes", bad, LONGEST["notes"], required=bool(step.notes))
        question = step.question
        if step.question is not None:
            question = _translated_question(given.get("question"), step.question, bad)
        elif "question" in given:
            bad("question", Later(N_("the English step asks no question of its own")))
        merged.append(Step(_text(given.get("title"), "title", bad, LONGEST["title"]), step.page, step.minutes,
                           notes, step.params, question, step.page_question, step.computed, step.checks))
    about = _text(raw.get("about"), "about", fail, LONGEST["about"], required=bool(lesson.about))
    return Lesson(_text(raw.get("title"), "title", fail, LONGEST["title"]), tuple(merged), about, lesson.source,
                  lang, tuple(lesson.question_id(i) for i in range(len(lesson.steps))))


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


# ---------------------------------------------------------------------------------------------- writing

def _toml_value(value) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)   # a JSON string is a TOML basic string


def dump(lesson: Lesson) -> str:
    """The lesson as a TOML file that ``parse`` reads back to the same lesson."""
    lines = [f"title = {_toml_value(lesson.title)}"]
    if lesson.about:
        lines.append(f"about = {_toml_value(lesson.about)}")
    for step in lesson.steps:
        lines += ["", "[[step]]", f"title = {_toml_value(step.title)}", f"page = {_toml_value(step.page)}",
                  f"minutes = {_toml_value(step.minutes)}"]
        if step.notes:
            lines.append(f"notes = {_toml_value(step.notes)}")
        if step.params:
            lines.append("params = { " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}"
                                                   for k, v in step.params.items()) + " }")
        if step.checks:
            lines.append(f"check = {_toml_value(step.checks)}")
        if step.page_question:
            lines.append(f"question = {_toml_value(PAGE_QUESTION)}")
        elif step.computed:
            lines.append(f"question = {{ computed = {_toml_value(step.computed)} }}")
        elif step.question:
            q = step.question
            lines += ["", "[step.question]", f"prompt = {_toml_value(q.prompt)}",
                      f"options = {_toml_value(q.options)}", f"answer = {_toml_value(q.answer)}",
                      f"explain = {_toml_value(q.explain)}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- the catalogue

def folders(env: Mapping[str, str] = os.environ) -> list[tuple[str, Path]]:
    """(source prefix, folder): the app's own lessons, then the deployer's ($EXPLORER_LESSONS_DIR) if set."""
    found = [("app", APP_DIR)]
    if env.get(ENV_DIR, "").strip():
        found.append(("dir", Path(env[ENV_DIR]).expanduser()))
    return found


def catalogue(env: Mapping[str, str] = os.environ, lang: str | None = None
              ) -> tuple[list[Lesson], list[LessonError]]:
    """Every lesson file (``*.toml``) of the lesson folders, sorted by file name within each folder -> (lessons
    that validated, one error per file that did not), each in ``lang`` (default: the session's language) where its
    translation is there, else in English."""
    lang = i18n.spoken(lang) or i18n.current()
    lessons, errors = [], []
    for prefix, folder in folders(env):
        try:
            files = sorted(folder.glob("*.toml"))[:MAX_FILES]
        except OSError:
            continue
        for path in files:
            try:
                if path.stat().st_size > MAX_BYTES:
                    raise LessonError(path.name, _too_big(path.stat().st_size))
                other = translation_path(folder, path.name, lang)
                lessons.append(_read(str(path), _stamp(path), f"{prefix}:{path.stem}", lang, _stamp(other)))
            except LessonError as err:
                errors.append(err)
            except OSError as err:
                errors.append(LessonError(path.name, Later(N_("cannot be read ({error})"), error=err.strerror)))
    return lessons, errors


def _stamp(path: Path) -> tuple[int, int] | None:
    """What changes when a file changes (its modification time and size), or None when there is none."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


@lru_cache(maxsize=256)
def _read(path: str, stamp: tuple, source: str, lang: str, translated_stamp: tuple | None) -> Lesson:
    """The lesson file at ``path`` in ``lang``, read once per version of the file and of its translation (a
    follower's run reads the teacher's lesson again in its own language: a lookup, not a parse)."""
    file = Path(path)
    return in_language(parse(file.read_bytes(), file.name, source), file.parent, file.name, lang)


def find(source: str, env: Mapping[str, str] = os.environ, lang: str | None = None) -> Lesson | None:
    """The catalogue's lesson whose source is ``source`` ("app:attention-20"), or None; in ``lang`` (default: the
    session's language) where its translation is there."""
    return next((lesson for lesson in catalogue(env, lang)[0] if lesson.source == source), None)
