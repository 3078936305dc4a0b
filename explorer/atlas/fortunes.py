"""The atlas's corpus: short quotations, sayings and riddles from Debian's ``fortunes`` package, cut into windows.

Source: the fortune cookie files of BSD ``fortune`` as Debian ships them (package ``fortunes``, version 1:1.99.1,
``/usr/share/games/fortunes``), distributed under the BSD licence (``/usr/share/doc/fortunes/copyright``). Only
files of the non-offensive set that suit a classroom are read (``FILES``), and a cookie holding any word of
``AVOID`` is skipped. Each cookie becomes one line (its lines joined by spaces, runs of spaces cut to one); lines are
grouped in file order into windows of at most ``WINDOW_TOKENS`` tokens of the decoder's tokenizer, and windows are
added until ``TARGET_TOKENS`` are reached. The same windows are read by both models (the encoder adds its [CLS] and
[SEP]). Only the windows the atlas shows are shipped (``assets/atlas/corpus.json``).
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

SOURCE = ("Debian package fortunes 1:1.99.1 (the fortune cookie files of BSD fortune), files: {files}; "
          "cookies with a word of a short avoid-list skipped")
LICENCE = "BSD licence (Copyright (c) 1991 The Regents of the University of California; see the package's copyright)"
FOLDER = Path("/usr/share/games/fortunes")
FILES = tuple("wisdom literature science education kids pets food riddles platitudes".split())   # in this order
AVOID = re.compile(r"\b(sex\w*|rape\w*|drunk\w*|drug\w*|kill\w*|murder\w*|suicide|naked|nude|breast\w*|penis|"
                   r"whore|bitch|fuck\w*|shit\w*|damn\w*|hell|god\w*|jesus|christ\w*|bible|church|pray\w*|"
                   r"beer|wine|whisk\w*|booze|liquor|gun\w*|war|wars|nazi\w*|hitler|negro\w*|jew\w*)\b",
                   re.IGNORECASE)
WINDOW_TOKENS = 200
TARGET_TOKENS = 52_000


# typewriter accents typed over a letter with a backspace ("Ren'\be"), as combining marks
ACCENTS = {"'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303", ",": "\u0327"}


def overstruck(line: str) -> str:
    """A line typed over itself with backspaces, as a terminal shows it: an underlined word (``____\\bSOME``,
    ``_\\bn``) is the word, an accent typed over a letter is the accented letter (``'\\be`` is é), otherwise the
    later character wins. Some cookies underline this way; left in, each backspace was a token of its own, drawn
    as a box where a font lacks the control picture ␈."""
    if "\b" not in line:
        return line
    cells: list[str] = []
    at = 0
    for char in line:
        if char == "\b":
            at = max(at - 1, 0)
            continue
        if at == len(cells):
            cells.append(char)
        else:
            cells[at] = _struck(cells[at], char)
        at += 1
    return unicodedata.normalize("NFC", "".join(cells))


def _struck(under: str, over: str) -> str:
    if over == "_":
        return under
    if under in ("_", " "):
        return over
    if under in ACCENTS and over.isalpha():
        return over + ACCENTS[under]
    if over in ACCENTS and under.isalpha():
        return under + ACCENTS[over]
    return over


def cookies(text: str) -> list[str]:
    """The cookies of one fortune file (separated by lines holding only ``%``), each as one line of text (typed-over
    characters resolved, ``overstruck``)."""
    out = []
    for chunk in re.split(r"^%\s*$", text, flags=re.MULTILINE):
        chunk = "\n".join(overstruck(line) for line in chunk.split("\n"))
        line = re.sub(r"\s+", " ", chunk).strip()
        if line:
            out.append(line)
    return out


def suitable(cookie: str) -> bool:
    """A cookie the atlas may show a class: no avoid-listed word, mostly letters (no ASCII art), not too long, no
    control character (a terminal's bell or escape)."""
    letters = sum(c.isalpha() for c in cookie)
    controls = any(unicodedata.category(c) == "Cc" for c in cookie)
    return not AVOID.search(cookie) and not controls and letters >= 0.6 * len(cookie) and len(cookie) <= 600


def read_cookies(folder: Path = FOLDER, files=FILES) -> list[str]:
    """Every suitable cookie of ``files`` in ``folder``, in file order (a missing file is an error)."""
    out = []
    for name in files:
        out += [c for c in cookies((Path(folder) / name).read_text(encoding="utf-8", errors="replace"))
                if suitable(c)]
    return out


def windows(lines: list[str], count_tokens, window_tokens: int = WINDOW_TOKENS,
            target_tokens: int = TARGET_TOKENS) -> list[str]:
    """``lines`` grouped in order into windows (joined by newlines) of at most ``window_tokens`` tokens as
    ``count_tokens(text)`` counts them, until the windows hold ``target_tokens`` tokens (a line longer than a
    window alone is skipped)."""
    out, current, total = [], [], 0
    for line in lines:
        if count_tokens(line) > window_tokens:
            continue
        trial = "\n".join([*current, line])
        if current and count_tokens(trial) > window_tokens:
            text = "\n".join(current)
            out.append(text)
            total += count_tokens(text)
            if total >= target_tokens:
                return out
            current = [line]
        else:
            current.append(line)
    if current and total < target_tokens:
        out.append("\n".join(current))
    return out


def source_text(files=FILES) -> str:
    return SOURCE.format(files=", ".join(files))
