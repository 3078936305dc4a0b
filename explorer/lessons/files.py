"""Lesson files (TOML): reading one with every check.

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
A lesson's texts in another language are ``translations``; ``writing`` writes a lesson back as a file, ``folders``
reads the lesson folders.
"""
from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Mapping

from explorer.words import i18n, numbers
from explorer.words.i18n import N_, Later

from .computed import CHECKS, COMPUTED, known
from .model import PAGE_QUESTION, Lesson, Step, StepQuestion
from .pages import PAGE_QUESTIONS, STEP_PAGES, check_params

MAX_BYTES = 64_000
MAX_STEPS = 30
MAX_MINUTES = 25.0   # one step
LONGEST = {"title": 120, "about": 400, "notes": 2_000, "prompt": 400, "option": 120, "explain": 1_000}
TOP_KEYS = {"title", "about", "step"}
STEP_KEYS = {"title", "page", "minutes", "notes", "params", "question", "check"}
QUESTION_KEYS = {"prompt", "options", "answer", "explain", "computed"}
NOT_A_TABLE = Later(N_("must be a table ([[step]])"))
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


def too_big(size: int) -> Later:
    """Why a lesson file of ``size`` bytes is refused."""
    return Later(N_("is {n} bytes; a lesson file is at most {most}"), n=numbers.integer(size),
                 most=numbers.integer(MAX_BYTES))


def checked_text(value: object, what: str, fail, longest: int, required: bool = True) -> str:
    """``value`` stripped, when it is text of at most ``longest`` characters without markup or control
    characters (empty allowed unless ``required``); else ``fail(what, why)``."""
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
    prompt = checked_text(raw.get("prompt"), "question.prompt", fail, LONGEST["prompt"])
    options = raw.get("options")
    if not isinstance(options, list) or not 2 <= len(options) <= 6:
        fail("question.options", Later(N_("must be a list of 2 to 6 options")))
    options = tuple(checked_text(o, "question.options", fail, LONGEST["option"]) for o in options)
    if len(set(options)) != len(options):
        fail("question.options", Later(N_("holds the same option twice")))
    answer = checked_text(raw.get("answer"), "question.answer", fail, LONGEST["option"])
    if answer not in options:
        fail("question.answer", Later(N_("{answer} is not one of the options"), answer=repr(answer[:40])))
    explain = checked_text(raw.get("explain"), "question.explain", fail, LONGEST["explain"])
    return StepQuestion(prompt, options, answer, explain), False


def _step(raw: object, number: int, fail) -> Step:
    def bad(what, why):
        fail(what, why, number)

    if not isinstance(raw, Mapping):
        bad(None, NOT_A_TABLE)
    unknown = sorted(set(raw) - STEP_KEYS)
    if unknown:
        bad(unknown[0], Later(N_("unknown key (a step has {keys})"), keys=", ".join(sorted(STEP_KEYS))))
    title = checked_text(raw.get("title"), "title", bad, LONGEST["title"])
    page = raw.get("page")
    if not isinstance(page, str) or page not in STEP_PAGES:
        bad("page", Later(N_("{page} is not a page of the app (pages: {pages})"), page=repr(str(page)[:60]),
                          pages=", ".join(STEP_PAGES)) if page is not None else Later(N_("missing")))
    minutes = raw.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not 0.5 <= minutes <= MAX_MINUTES:
        bad("minutes", Later(N_("must be a number of minutes from 0.5 to {most}"), most=numbers.number(MAX_MINUTES))
            if minutes is not None else Later(N_("missing")))
    notes = checked_text(raw.get("notes"), "notes", bad, LONGEST["notes"], required=False)
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


def checked_table(text: str | bytes, fail) -> dict:
    """A lesson file's TOML table: at most MAX_BYTES, UTF-8, valid TOML, only the keys a lesson has."""
    if len(text) > MAX_BYTES:
        fail(None, too_big(len(text)))
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

    raw = checked_table(text, fail)
    title = checked_text(raw.get("title"), "title", fail, LONGEST["title"])
    about = checked_text(raw.get("about"), "about", fail, LONGEST["about"], required=False)
    steps = raw.get("step")
    if not isinstance(steps, list) or not steps:
        fail("step", Later(N_("missing: a lesson has at least one [[step]]")))
    if len(steps) > MAX_STEPS:
        fail("step", Later(N_("{n} steps; a lesson has at most {most}"), n=len(steps), most=MAX_STEPS))
    return Lesson(title, tuple(_step(s, n, fail) for n, s in enumerate(steps, 1)), about, source)
