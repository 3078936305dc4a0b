"""The table of terms as data (``terms.toml`` beside this file; docs/translating.md explains it): one translation of
each term per language, and the check that every catalogue message whose English holds a term uses that term's
translation in its own (a translation that uses another rendering, or a rendering the table names as drift, fails).

A term's English matches as a whole word or phrase, in any case, a hyphen or a space between its words, with an
"s" for the plural; occurrences inside a longer term the entry names (``inside``) do not count, and messages where
the word means something else are named by a piece of their English (``skip``). A language's entry lists the
translation first, then the forms it takes (plurals, cases, compounds); ``avoid`` lists renderings that fail
wherever they appear in that language's catalogue ("der Token": German says das Token)."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("terms.toml")


@dataclass(frozen=True)
class Term:
    en: str
    words: dict[str, tuple[str, ...]]               # language -> (translation, its other forms…)
    inside: tuple[str, ...] = ()                    # longer English terms whose occurrences are theirs, not this one's
    skip: tuple[str, ...] = ()                      # pieces of English messages where the word means something else
    avoid: dict[str, tuple[str, ...]] = field(default_factory=dict)   # language -> regexes of drift

    def translation(self, lang: str) -> str:
        return self.words[lang][0]

    def held_by(self, english: str) -> bool:
        """Whether an English message holds this term (outside the longer terms named in ``inside``)."""
        if any(piece.casefold() in english.casefold() for piece in self.skip):
            return False
        english = re.sub(r"\{[^{}]*\}|`[^`]*`|'[^' ]*'", " ", english)   # placeholders, code, quoted tokens
        for longer in self.inside:
            english = re.sub(_pattern(longer), " ", english, flags=re.IGNORECASE)
        return re.search(_pattern(self.en), english, flags=re.IGNORECASE) is not None

    def used_in(self, lang: str, translated: str) -> bool:
        return any(form.casefold() in translated.casefold() for form in self.words[lang])


def _pattern(phrase: str) -> str:
    words = [re.escape(w) for w in re.split(r"[\s-]+", phrase.strip())]
    return r"(?<![\w-])" + r"[\s-]?".join(words) + r"(?:s|es)?(?![\w-])"


@cache
def table() -> tuple[Term, ...]:
    """The terms of ``terms.toml``, in its order."""
    raw = tomllib.loads(TABLE.read_text(encoding="utf-8"))["term"]
    out = []
    for entry in raw:
        words = {lang: tuple(v if isinstance(v, list) else [v]) for lang, v in entry.items()
                 if lang not in ("en", "inside", "skip", "avoid")}
        avoid = {lang: tuple(v) for lang, v in entry.get("avoid", {}).items()}
        out.append(Term(entry["en"], words, tuple(entry.get("inside", ())), tuple(entry.get("skip", ())), avoid))
    return tuple(out)


def drift(messages, lang: str) -> list[str]:
    """One line per message of ``lang``'s catalogue that does not use the table's words: ``messages`` are
    (English texts, translated texts) pairs (a plural message: each form)."""
    found = []
    for english, translated in messages:
        joined_en, joined = " ".join(english), " ".join(t for t in translated if t)
        if not joined:
            continue
        words = re.sub(r"\{[^{}]*\}", " ", joined)   # the translation's own words, placeholders out
        for term in table():
            if lang in term.words and term.held_by(joined_en) and not term.used_in(lang, joined):
                found.append(f"{term.en!r} is {term.translation(lang)!r} in {lang}: {joined_en[:70]!r} -> "
                             f"{joined[:90]!r}")
            for bad in term.avoid.get(lang, ()):
                hit = re.search(bad, words)
                if hit:
                    found.append(f"{hit.group(0)!r} drifts from {term.en!r} = {term.translation(lang)!r} in {lang}: "
                                 f"{joined[:90]!r}")
    return found
