"""The app's words in the class's language: English in the code, German and Spanish from gettext catalogues.

Every text the app shows is written in English inside ``_()`` (or ``N_()`` where a table holds it and the
translation happens where it is shown); the English text is the message's id. ``explorer/words/locale/<lang>.po``
holds one language's translations, sorted by id and without source lines, so two changes that add different
messages merge cleanly. Babel reads the catalogues (``babel.messages.pofile``) and builds one
``babel.support.Translations`` per language, once per process.

The language is per session, never per process: gettext's ``install()`` would let one student's choice change
another's page on a shared server. ``_()`` asks, in this order: a language set for this thread with ``language()``
(tests; a job, which carries the language it was asked in and enters it where it runs: ``jobs.worker.Jobs``,
``serving.fairqueue.FairQueue``), then the session's language held for this thread at the top of a page's run
(``hold``, so a run's hundreds of texts do not each ask the session's state), then the UI's resolver
(registered by the app's start, ``explorer.ui.language.register``, never by an import; it reads the running
session's choice), then English.

Placeholders are ``str.format`` fields, ``_("Layer {layer}").format(layer=2)``; a test formats every translation
with the English fields (``tests/unit/test_catalogues.py``). An f-string cannot be translated: its text is not
known until it runs.
"""
from __future__ import annotations

import contextlib
import io
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

SOURCE = "en"
LANGUAGES = {"en": "English", "de": "Deutsch", "es": "Español"}   # code -> its own name, as the picker shows it
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_chosen: ContextVar[str | None] = ContextVar("explorer_language", default=None)
_resolver: Callable[[], str | None] | None = None
_held: ContextVar[str | None] = ContextVar("explorer_session_language", default=None)   # see hold()


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / f"{lang}.po"


@lru_cache(maxsize=len(LANGUAGES))
def translations(lang: str) -> NullTranslations:
    """``lang``'s messages (English: the ids themselves). Built once per process from the .po file."""
    if lang == SOURCE or not catalogue_path(lang).exists():
        return NullTranslations()
    with catalogue_path(lang).open("rb") as po:
        catalog = read_po(po, locale=lang)
    mo = io.BytesIO()
    write_mo(mo, catalog, use_fuzzy=False)
    mo.seek(0)
    return Translations(mo)


@lru_cache(maxsize=len(LANGUAGES))
def _sources(lang: str) -> dict[str, str]:
    """``lang``'s translations -> the English texts they translate (the first id, where two share one)."""
    if lang == SOURCE or not catalogue_path(lang).exists():
        return {}
    with catalogue_path(lang).open("rb") as po:
        catalog = read_po(po, locale=lang)
    found: dict[str, str] = {}
    for message in catalog:
        if message.id and isinstance(message.id, str) and isinstance(message.string, str) and message.string:
            found.setdefault(message.string, message.id)
    return found


def source_text(text: str, lang: str) -> str | None:
    """The English text whose translation into ``lang`` is ``text`` (a translated widget label read back to its
    English id, for the glossary's lookup), or None."""
    return _sources(lang).get(text)


def spoken(lang: object) -> str | None:
    """``lang`` as a language the app speaks ("de", "de-AT", "es_MX" -> "de", "es"), or None."""
    if not isinstance(lang, str):
        return None
    if lang in LANGUAGES:   # the common case, asked at every text a page makes
        return lang
    code = lang.strip().replace("_", "-").split("-")[0].lower()
    return code if code in LANGUAGES else None


def set_resolver(resolver: Callable[[], str | None] | None) -> None:
    """The UI's way of naming the running session's language (None outside a session)."""
    global _resolver
    _resolver = resolver


def current() -> str:
    """The language of the text being made now: a ``language`` block's, else the one ``hold`` kept for this
    thread, else what the resolver says."""
    chosen = _chosen.get()
    if chosen is None:
        chosen = _held.get()
    if chosen is None and _resolver is not None:
        chosen = _resolver()
    return spoken(chosen) or SOURCE


def hold(lang: str | None) -> None:
    """Keep ``lang`` as this thread's language until the next ``hold`` (None: ask the resolver again). The UI
    holds the session's language at the top of each run of a page and where its picker changes it, so ``_()``
    (a page's run makes hundreds of texts) reads it here instead of asking the session's state every time."""
    _held.set(spoken(lang) if lang is not None else None)


@contextlib.contextmanager
def language(lang: str) -> Iterator[None]:
    """Make text in ``lang`` inside the block (this thread only)."""
    token = _chosen.set(spoken(lang) or SOURCE)
    try:
        yield
    finally:
        _chosen.reset(token)


def _(message: str) -> str:
    """``message`` (English) in the current language."""
    return translations(current()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n``, in the current language (German and Spanish: two forms)."""
    return translations(current()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` where the same English needs two translations ("Head" a noun on an axis, ...)."""
    return translations(current()).pgettext(context, message)


def NP_(context: str, message: str) -> str:
    """``N_`` with a context, for a table's texts shown through ``pgettext(context, text)`` (the glossary's term
    names: "value" the term is "Value" in German, where a table's "value" column is "Wert")."""
    return message


def N_(message: str) -> str:
    """Marks ``message`` for the catalogues without translating it now: for tables made at import time, whose
    texts are passed through ``_()`` where they are shown."""
    return message


class Later:
    """A text translated when it is shown, not when it is made: ``str(Later(N_("{n} tokens"), n=3))`` formats the
    message in the language current at that moment. Work that runs for every session at once (a shared job, a
    cached result) keeps these instead of sentences, and raises errors with one as their message, so that each
    session reads them in its own language."""
    __slots__ = ("message", "fields")

    def __init__(self, message: str, /, **fields: object) -> None:
        self.message, self.fields = message, fields

    def __str__(self) -> str:
        return _(self.message).format(**{k: str(v) if isinstance(v, Later) else v for k, v in self.fields.items()})

    def __repr__(self) -> str:
        return f"Later({self.message!r}, {self.fields!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Later) and (self.message, self.fields) == (other.message, other.fields)

    def __hash__(self) -> int:
        return hash(self.message)

    def __contains__(self, part: str) -> bool:   # ``"word" in note`` reads the English, as tests do
        with language(SOURCE):
            return part in str(self)
