"""The table of terms (explorer/words/terms.toml) against the catalogues: every message whose English holds a term
uses that term's one translation, no message uses a rendering the table names as drift, and the glossary's names
are the words the pages' labels use, so that the glossary search finds the term a label names."""
from __future__ import annotations

import re

import pytest

from explorer.words import catalogues, glossary, i18n, terms

OTHER_LANGUAGES = [lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE]
SHORT = 50   # a label: a short message that does not end as a sentence does
ELSEWHERE = {   # labels where a glossary name's word means something else (a table's "value" column: "Wert")
    "value": ("value", "values"), "top-k": ("Top k words removed",), "seed": ("The seed's numpy block",),
}


def messages(lang: str) -> list[tuple[tuple[str, ...], tuple[str, ...], str | None]]:
    out = []
    for m in catalogues.read(lang):
        if m.id:
            ids = tuple(m.id) if isinstance(m.id, (tuple, list)) else (m.id,)
            strings = tuple(m.string) if isinstance(m.string, (tuple, list)) else (m.string,)
            out.append((ids, strings, m.context))
    return out


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_every_message_uses_the_tables_words(lang):
    found = terms.drift(catalogues.pairs(lang), lang)   # what `catalogues check` runs too
    assert found == [], "\n".join(found[:20])


def test_another_rendering_or_a_drift_fails():
    assert terms.drift([(("Hide special tokens",), ("Sondertoken ausblenden",))], "de")   # not the table's word
    assert terms.drift([(("Hide special tokens",), ("Spezial-Tokens ausblenden",))], "de") == []
    assert terms.drift([(("Pick the token",), ("Wähle den Token",))], "de")             # der Token: masculine
    assert terms.drift([(("Pick the token",), ("Wähle das Token",))], "de") == []
    assert terms.drift([(("before the softmax",), ("antes del softmax",))], "es")        # one gender: la softmax
    assert terms.drift([(("before the softmax",), ("antes de la softmax",))], "es") == []
    assert terms.drift([(("{model} runs",), ("{model} läuft",))], "de") == []            # a placeholder is no term
    assert terms.drift([(("the seed's numpy block",), ("der Block der Vorlage",))], "de") == []   # named as skip


def test_every_language_has_one_translation_per_term():
    table = terms.table()
    assert len({t.en for t in table}) == len(table)   # each term once
    for term in table:
        assert set(term.words) == set(OTHER_LANGUAGES), term.en
        assert all(term.words[lang][0] for lang in OTHER_LANGUAGES), term.en


def _stems(name: str) -> list[str]:
    """The words of a glossary name as a label may inflect them ("Bezugswort" in "Bezugswörter")."""
    return [w[:max(4, len(w) - 3)] for w in re.split(r"[\s-]+", glossary._plain(name).casefold()) if len(w) >= 4]


def _flat(text: str) -> str:
    return re.sub(r"[\s-]+", " ", text.casefold())


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_the_glossary_names_are_the_words_the_pages_labels_use(lang):
    """A label that names a glossary term (in English) holds the glossary's name for it in ``lang`` too, so the
    glossary search with the label's word finds the term; and the table's terms are the glossary's names."""
    found = []
    with i18n.language(lang):
        for name, term in glossary.TERMS.items():
            shown = i18n.pgettext(glossary.TERM, name)
            assert term in glossary.matching(glossary._plain(shown)), (lang, name, shown)
            longer = [f for other in glossary.TERMS.values() if other is not term for f in other.forms
                      if re.search(terms._pattern(name), f, re.IGNORECASE)]
            for ids, strings, context in messages(lang):
                english = re.sub(r"\{[^{}]*\}", " ", ids[0])
                if context or len(english) > SHORT or english.rstrip().endswith((".", "?", "…")) or any(
                        piece.casefold() in english.casefold() for piece in ELSEWHERE.get(name, ())):
                    continue
                for other in longer:
                    english = re.sub(terms._pattern(other), " ", english, flags=re.IGNORECASE)
                if re.search(terms._pattern(name), english, re.IGNORECASE) and not all(
                        stem in _flat(strings[0]) for stem in _stems(shown)):
                    found.append(f"{name!r} is {shown!r} in the glossary: {ids[0]!r} -> {strings[0]!r}")
        for term in terms.table():
            if term.en in glossary.TERMS:
                assert _flat(i18n.pgettext(glossary.TERM, term.en)) == _flat(term.translation(lang)), term.en
    assert found == [], "\n".join(found)


def _lesson_texts(english, translated) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(English text, its translation) of every text a lesson translation holds."""
    out = [((english.title,), (translated.title,)), ((english.about,), (translated.about,))]
    for a, b in zip(english.steps, translated.steps):
        out += [((a.title,), (b.title,)), ((a.notes,), (b.notes,))]
        if a.question and b.question:
            out += [((a.question.prompt,), (b.question.prompt,)), ((a.question.explain,), (b.question.explain,))]
            out += [((x,), (y,)) for x, y in zip(a.question.options, b.question.options)]
    return out


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_every_lesson_translation_uses_the_tables_words(lang):
    from explorer.lessons import catalogue
    english = {lesson.source: lesson for lesson in catalogue({}, i18n.SOURCE)[0]}
    found = [f"{lesson.source}: {line}" for lesson in catalogue({}, lang)[0] if lesson.lang == lang
             for line in terms.drift(_lesson_texts(english[lesson.source], lesson), lang)]
    assert found == [], "\n".join(found)
