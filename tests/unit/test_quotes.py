"""German and Spanish texts quote the way their readers write: „…“ in German, «…» in Spain's Spanish. An English
pair of straight quotes ("Watch it grow again") or English curly ones (“…”) in a translation is a copy left over:
lesson 6's German and Spanish notes once quoted the replay button that way. What a lesson file's author types as code
(a TOML value such as "page") is named in CODE."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from explorer.words import catalogues

ROOT = Path(__file__).resolve().parents[2]
CODE = ('"{own}"',)   # the lesson files' own value for a page's question, quoted as the file holds it
ENGLISH = {"de": re.compile(r'"|(?:^|[\s(])“'), "es": re.compile(r'"|[“”]')}


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


def english_quotes(text: str, lang: str) -> bool:
    for code in CODE:
        text = text.replace(code, "")
    return ENGLISH[lang].search(re.sub(r"\{[^{}]*\}", "", text)) is not None


@pytest.mark.parametrize("lang", ["de", "es"])
def test_lesson_translations_quote_the_languages_way(lang):
    found = [f"{path.name}: {text[:80]}" for path in sorted((ROOT / "lessons" / lang).glob("*.toml"))
             for text in _texts(tomllib.loads(path.read_text(encoding="utf-8"))) if english_quotes(text, lang)]
    assert not found, found


@pytest.mark.parametrize("lang", ["de", "es"])
def test_catalogue_translations_quote_the_languages_way(lang):
    found = [" ".join(t for t in tr if t)[:80] for _en, tr in catalogues.pairs(lang)
             if english_quotes(" ".join(t for t in tr if t), lang)]
    assert not found, found


def test_the_check_sees_english_quotes():
    assert english_quotes('spielt "Noch einmal wachsen sehen" ihn ab', "de")
    assert english_quotes("drück auf “Trainieren”", "de")
    assert not english_quotes("drück auf „Trainieren“", "de")
    assert english_quotes('pulsa "Verlo crecer de nuevo"', "es") and english_quotes("pulsa “Entrenar”", "es")
    assert not english_quotes("pulsa «Entrenar»", "es") and not english_quotes('o "{own}"', "es")
