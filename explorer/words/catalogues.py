"""The catalogues kept in step with the code: which English messages the code holds, which a language lacks or
keeps after the code dropped them, and the update that brings a language's file in line.

    python -m explorer.words.catalogues update    # add new messages (untranslated) to de.po and es.po, drop gone ones
    python -m explorer.words.catalogues check     # list what is missing, stale or untranslated; exit 1 if any

Babel's extractor reads every ``_()``, ``N_()``, ``NP_()``, ``ngettext()`` and ``pgettext()`` call with a
literal text in app.py, pages/ and explorer/ (``pybabel extract`` would do the same from the command line). The
files are written sorted by id and without source lines, so a change in one page does not move every other entry.
"""
from __future__ import annotations

import string
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from explorer.words import terms
from explorer.words.i18n import LANGUAGES, SOURCE, catalogue_path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("app.py", "pages", "explorer")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "NP_": ((1, "c"), 2)}
HEADER = "# The attention explorer's messages; English in the code is each message's id (explorer/words/i18n.py)."
FIXED_DATE = datetime(2026, 12, 3, tzinfo=timezone.utc)
Key = str | tuple[str, str]   # a message's id: the English text, or (context, text) for pgettext


@dataclass(frozen=True)
class Report:
    lang: str
    missing: tuple[Key, ...]        # in the code, not in the catalogue
    stale: tuple[Key, ...]          # in the catalogue, no longer in the code
    untranslated: tuple[Key, ...]   # in both, with no translation (or one marked fuzzy)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stale or self.untranslated)


def _key(msgid, context: str | None) -> Key:
    text = msgid[0] if isinstance(msgid, (tuple, list)) else msgid
    return (context, text) if context else text


def extracted(root: Path = ROOT) -> dict[Key, object]:
    """Every message in the code: key -> its msgid (a text, or (singular, plural))."""
    found: dict[Key, object] = {}
    for source in SOURCES:
        path = root / source
        if path.is_file():
            items = extract_from_dir(path.parent, [(source, "python")], keywords=KEYWORDS)
        else:
            items = extract_from_dir(path, [("**.py", "python")], keywords=KEYWORDS)
        for _file, _line, msgid, _comments, context in items:
            if msgid:
                found[_key(msgid, context)] = msgid
    return found


def read(lang: str) -> Catalog:
    path = catalogue_path(lang)
    if not path.exists():
        return Catalog(locale=lang)
    with path.open("rb") as po:
        return read_po(po, locale=lang)


def _translated(message) -> bool:
    strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
    return all(strings) and not message.fuzzy


def check(lang: str, code: dict[Key, object] | None = None) -> Report:
    code = extracted() if code is None else code
    catalog = read(lang)
    held = {_key(m.id, m.context): m for m in catalog if m.id}
    return Report(lang, tuple(k for k in code if k not in held), tuple(k for k in held if k not in code),
                  tuple(k for k, m in held.items() if k in code and not _translated(m)))


def update(lang: str, code: dict[Key, object] | None = None) -> Report:
    """Write ``lang``'s catalogue with exactly the code's messages, keeping every translation it had."""
    code = extracted() if code is None else code
    old = {_key(m.id, m.context): m for m in read(lang) if m.id}
    new = Catalog(locale=lang, project="attention explorer", version="1", fuzzy=False, header_comment=HEADER,
                  creation_date=FIXED_DATE, revision_date=FIXED_DATE)   # fixed: an update changes messages only
    for key, msgid in code.items():
        kept = old.get(key)
        context = key[0] if isinstance(key, tuple) else None
        string_ = kept.string if kept else (("", "") if isinstance(msgid, tuple) else "")
        new.add(msgid, string_, context=context, flags=kept.flags if kept else ())
    with catalogue_path(lang).open("wb") as po:
        write_po(po, new, width=0, no_location=True, omit_header=False, sort_output=True,
                 ignore_obsolete=True, include_previous=False)
    return check(lang, code)


def pairs(lang: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(English texts, translated texts) of each message of ``lang``'s catalogue (a plural message: each form)."""
    out = []
    for m in read(lang):
        if m.id:
            ids = tuple(m.id) if isinstance(m.id, (tuple, list)) else (m.id,)
            out.append((ids, tuple(m.string) if isinstance(m.string, (tuple, list)) else (m.string,)))
    return out


def fields(text: str) -> tuple[str, ...] | None:
    """The ``str.format`` fields of ``text`` ("{layer}" -> ("layer",)), sorted; None when it is no format string."""
    try:
        return tuple(sorted({name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name is not None}))
    except ValueError:
        return None


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    code = extracted()
    bad = False
    for lang in LANGUAGES:
        if lang == SOURCE:
            continue
        report = update(lang, code) if command == "update" else check(lang, code)
        drifted = terms.drift(pairs(lang), lang)
        print(f"{lang}: {len(code)} messages, {len(report.missing)} missing, {len(report.stale)} stale, "
              f"{len(report.untranslated)} untranslated, {len(drifted)} off the table of terms")
        for line in drifted[:20]:
            print(f"  {line}")
        bad |= not report.ok or bool(drifted)
    return 1 if bad and command == "check" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
