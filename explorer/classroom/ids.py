"""Room codes and caller-given ids: how they are made, typed, shown and checked; and the clock every store call
reads (``clock``: a test passes its own ``now``)."""
from __future__ import annotations

import secrets
import time

from explorer.words.i18n import _

from .errors import BadInput, InvalidCode

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: nothing to confuse when read aloud
CODE_LEN = 6
ID_MAX = 200  # longest student id, question id or option


def new_code() -> str:
    """A random room code of CODE_LEN characters from ALPHABET (~30 bits)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LEN))


def normalise_code(text: object) -> str:
    """Typed code -> canonical code: strip, uppercase, drop spaces and dashes; InvalidCode if malformed."""
    code = "".join(str(text).split()).upper().replace("-", "") if isinstance(text, str) else ""
    if len(code) != CODE_LEN or any(ch not in ALPHABET for ch in code):
        raise InvalidCode(_("That is not a room code: a room code has {n} letters and digits, like K7M-2QX, and "
                            "never contains 0, O, 1, I or L.").format(n=CODE_LEN))
    return code


def pretty_code(code: str) -> str:
    """'K7M2QX' -> 'K7M-2QX' (easier to read aloud; normalise_code drops the dash again)."""
    return f"{code[:3]}-{code[3:]}"


def check_id(value: object, what: str) -> str:
    """A caller-given opaque id (student, question, option): a non-empty string of at most ID_MAX chars."""
    if not isinstance(value, str) or not value or len(value) > ID_MAX:
        raise BadInput(f"The {what} must be a non-empty text of at most {ID_MAX} characters.")
    return value


def clock(now: float | None) -> float:
    """``now`` (unix seconds) as given, else the time now."""
    return time.time() if now is None else float(now)
