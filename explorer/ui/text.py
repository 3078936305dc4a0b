"""Text typed by a user, shown as exactly that text: the one escape every page uses."""
from __future__ import annotations

import re

_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")   # every ASCII punctuation character


def literal(text) -> str:
    """``text`` for st.markdown, st.info, st.caption…: shown exactly as typed, never as markdown, LaTeX,
    emoji shortcodes, colour directives, links or HTML.

    Every ASCII punctuation character gets a backslash (CommonMark shows an escaped character as itself);
    control characters, which markdown would drop or turn into U+FFFD, become visible control pictures (␀, ␛).
    """
    escaped = _MARKDOWN_PUNCTUATION.sub(r"\\\1", str(text))
    return _CONTROL.sub(_picture, escaped)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")   # every control character but tab and newline


def _picture(match: re.Match) -> str:
    c = match.group()
    return "␡" if c == "\x7f" else chr(0x2400 + ord(c))
