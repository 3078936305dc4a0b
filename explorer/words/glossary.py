"""Every term the pages use, each with a short definition in plain words, grouped by idea.

A ``Term``'s ``name`` is how the pages write it; an abbreviation carries what it stands for in ``expands``, so
that its title spells it out once ("MLP (multilayer perceptron)"). ``also`` lists other ways the pages write the
same idea ("ablation" for knockout, "KV cache" for key/value cache); ``lookup`` finds a term by any of them.

The terms are data, ``glossary.toml`` beside this file, read once. Names, expansions, meanings and group titles are
written there in English; ``messages`` hands them to the catalogues (a name in the context ``TERM``). ``title`` and
``shown_meaning`` give them in the session's language, with the English term beside a translated one
("Aufmerksamkeitsgewicht (attention weight)"), so a student can match it to English texts. ``lookup`` finds a term
by a widget's label in English or in the session's language (a translated label is read back to its English id).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from explorer.words import i18n
from explorer.words.i18n import _, pgettext

TABLE = Path(__file__).with_name("glossary.toml")
TERM = "glossary"   # the context of the terms' names (pgettext): their own translations


@dataclass(frozen=True)
class Term:
    name: str                   # as the pages write it: "softmax", "MLP"
    meaning: str                # the definition, one to three plain sentences
    expands: str = ""           # what an abbreviation stands for: "multilayer perceptron"
    also: tuple[str, ...] = ()  # other ways the pages write it (lookup finds the term by these too)

    @property
    def title(self) -> str:
        """The name in the session's language, with what an abbreviation stands for and, when the name was
        translated, the English term: "MLP (multilayer perceptron)", "Schicht (layer)"."""
        name = pgettext(TERM, self.name)
        beside = [_(self.expands)] if self.expands else []
        if name.casefold() != self.name.casefold():
            beside.append(self.name)
        return f"{name} ({'; '.join(beside)})" if beside else name

    @property
    def shown_meaning(self) -> str:
        """The definition in the session's language."""
        return _(self.meaning)

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.name, *((self.expands,) if self.expands else ()), *self.also)

    @property
    def shown_forms(self) -> tuple[str, ...]:
        """The forms in the session's language (the name and expansion translated), for a search box."""
        return (pgettext(TERM, self.name), *((_(self.expands),) if self.expands else ()))


def _groups(path: Path = TABLE) -> dict[str, tuple[Term, ...]]:
    """``glossary.toml``'s groups, in its order: title -> its terms."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))["group"]
    return {group["title"]: tuple(Term(t["name"], t["meaning"], t.get("expands", ""), tuple(t.get("also", ())))
                                  for t in group["term"]) for group in raw}


GROUPS: dict[str, tuple[Term, ...]] = _groups()
TERMS: dict[str, Term] = {term.name: term for terms in GROUPS.values() for term in terms}


def _plain(text: str) -> str:
    """``text`` lower-cased, without a trailing parenthesis or symbol ("Top-k (0: off)" → "top-k",
    "Temperature T" → "temperature"), spaces collapsed."""
    text = re.sub(r"\s*\(.*\)\s*$", "", text.strip().lower())
    text = re.sub(r"\s+[a-z]$", "", text)
    return re.sub(r"\s+", " ", text)


_BY_FORM = {_plain(form): term for term in TERMS.values() for form in reversed(term.forms)}
_BY_FORM.update({_plain(term.name): term for term in TERMS.values()})   # a name wins over another term's alias


@lru_cache(maxsize=len(i18n.LANGUAGES))
def _by_translated_form(lang: str) -> dict[str, Term]:
    """``lang``'s names and expansions of the terms -> term (a widget label that is a term's translated name)."""
    with i18n.language(lang):
        return {_plain(form): term for term in reversed(TERMS.values()) for form in term.shown_forms}


def lookup(word: str) -> Term | None:
    """The term ``word`` names (its name, expansion or another form, any case), or None. ``word`` may be in the
    session's language: a widget label translated from English ("Schicht", "Top-k (0: aus)") is read back to
    the English text it translates, and a term's translated name is found as itself."""
    found = _BY_FORM.get(_plain(word))
    lang = i18n.current()
    if found is not None or lang == i18n.SOURCE:
        return found
    english = i18n.source_text(word, lang)
    if english is not None and (found := _BY_FORM.get(_plain(english))) is not None:
        return found
    return _by_translated_form(lang).get(_plain(word))


def matching(query: str) -> list[Term]:
    """Terms whose name, forms or meaning contain ``query`` (any case), in English or the session's language, in
    glossary order; all for ''."""
    q = query.strip().lower()
    return [t for t in TERMS.values()
            if not q or any(q in f.lower() for f in (*t.forms, t.meaning, *t.shown_forms, t.shown_meaning))]


def messages(path: Path = TABLE) -> dict[str | tuple[str, str], str]:
    """The English messages of the glossary at ``path`` as the catalogues key them: ``(TERM, name)`` for a term's
    name, the text itself for a meaning, an expansion or a group's title."""
    found: dict[str | tuple[str, str], str] = {}
    for title, terms in _groups(path).items():
        found[title] = title
        for term in terms:
            found[(TERM, term.name)] = term.name
            found.update({text: text for text in (term.meaning, term.expands) if text})
    return found
