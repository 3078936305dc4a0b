"""The catalogues kept in step with the code: which English messages the code holds, which a language lacks or
keeps after the code dropped them, and the update that brings a language's file in line.

    python -m explorer.words.catalogues update    # add new messages (untranslated) to de.po and es.po, drop gone ones
    python -m explorer.words.catalogues check     # list what is missing, stale or untranslated; exit 1 if any

Babel's extractor reads every ``_()``, ``N_()``, ``NP_()``, ``ngettext()`` and ``pgettext()`` call with a
literal text in app.py, pages/ and explorer/ (``pybabel extract`` would do the same from the command line); the
glossary's texts are data (``explorer/words/glossary.toml``) and come from ``glossary.messages``. The files are
written sorted by id and without source lines, so a change in one page does not move every other entry.

The extractor sees only calls whose message is a literal text: ``_()`` inside an f-string (on Python 3.11) or with
a message made at run time (``_("a" + b)``, ``_(f"...")``, ``_("..." if x else "...")``) hides the message from
every catalogue, and the sentence stays English. ``hidden`` finds those calls with ``ast``; a variable holding a
text marked with ``N_()`` elsewhere (``_(LOOKS[k])``) is the intended way and passes. ``formats_numbers`` finds a
message that formats a number itself (``{x:.3f}``, ``{n:,}``): numbers go in already written the reader's way
(explorer/words/numbers.py). ``check`` fails on either.
"""
from __future__ import annotations

import ast
import string
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from explorer.words import glossary, terms
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
    table = root / glossary.TABLE.relative_to(ROOT)
    if table.is_file():
        found.update(glossary.messages(table))
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
        if kept is not None and isinstance(kept.string, (tuple, list)) != isinstance(msgid, tuple):
            kept = None   # a message that became plural (or stopped being one) is translated again
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


MESSAGE_ARGS = {"_": (0,), "N_": (0,), "ngettext": (0, 1), "pgettext": (0, 1), "NP_": (0, 1)}   # which are texts
MARKED = (ast.Name, ast.Attribute, ast.Subscript)   # a variable or table entry: a text marked with N_() elsewhere


def _called(node: ast.Call) -> str | None:
    name = node.func.id if isinstance(node.func, ast.Name) else None
    return name if name in MESSAGE_ARGS else None


def _dict_lookup(node: ast.AST) -> bool:
    """``TABLE.get(key, key)``: a marked table's entry, the same as ``TABLE[key]``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, MARKED) and all(isinstance(a, MARKED) for a in node.args))


def hidden_in(source: str, filename: str = "<source>") -> list[tuple[str, int, str]]:
    """The translating calls in ``source`` that no catalogue can hold: (file, line, why)."""
    tree = ast.parse(source, filename)
    found = []
    for joined in [n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)]:
        for call in [n for n in ast.walk(joined) if isinstance(n, ast.Call) and _called(n)]:
            found.append((filename, call.lineno, f"{_called(call)}() inside an f-string"))
    for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n)]:
        for i in MESSAGE_ARGS[_called(call)]:
            arg = call.args[i] if i < len(call.args) else None
            literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            if arg is not None and not literal and not isinstance(arg, MARKED) and not _dict_lookup(arg):
                found.append((filename, call.lineno, f"{_called(call)}() of a message made at run time"))
            elif arg is not None and not literal and any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                                                         for n in ast.walk(arg)):   # _(PAGES[row["page"]])
                found.append((filename, call.lineno, f"{_called(call)}() of a table entry picked by a literal key "
                                                     "(the extractor takes the key for the message)"))
    return sorted(set(found))


def hidden(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """:func:`hidden_in` over app.py, pages/ and explorer/."""
    found = []
    for source in SOURCES:
        path = root / source
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            found += hidden_in(file.read_text(encoding="utf-8"), str(file.relative_to(root)))
    return found


def formats_numbers(code: dict[Key, object]) -> list[Key]:
    """The messages with a format spec on a field (``{w:.3f}``, ``{n:,}``, ``{s:.0%}``): a number written the
    English way in every language. Pass the number through explorer/words/numbers.py instead."""
    bad = []
    for key, msgid in code.items():
        for text in msgid if isinstance(msgid, (tuple, list)) else (msgid,):
            try:
                parsed = list(string.Formatter().parse(text))
            except ValueError:
                continue
            if any(name is not None and spec for _lit, name, spec, _conv in parsed):
                bad.append(key)
                break
    return bad


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
    for file, line, why in hidden():
        print(f"{file}:{line}: {why}: no catalogue can hold it")
        bad = True
    for key in formats_numbers(code):
        print(f"formats a number itself (use explorer.words.numbers): {key!r}")
        bad = True
    return 1 if bad and command == "check" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
