"""A room as every classroom store keeps it: its limits and lifetime, what a store reads back of it (``Room``),
the teacher key's hash and its check, and a nickname and the teacher's view as they are stored (``TeacherView``)."""
from __future__ import annotations

import hashlib
import hmac
import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from explorer.words.i18n import _

from .errors import BadInput

TTL_S = 12 * 3600  # a room with no teacher or student write for this long is gone
MAX_STUDENTS = 60
MAX_ROOMS = 200
SEATS_PER_ADDRESS = MAX_STUDENTS // 2  # one address (a prank script) can never fill a room alone
NICK_MAX = 40
VIEW_MAX = 64_000  # longest view, in characters of JSON
_DROPPED = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # control, format (bidi overrides), surrogates, line breaks


@dataclass(frozen=True)
class Room:
    code: str
    created: float  # unix seconds
    touched: float  # last teacher or student write
    version: int  # grows on every view change, lock change, poll moved on (show, again, reveal) and removal
    locked: bool
    students: int
    joinable: bool = True  # False: the teacher closed the room to new students


@dataclass(frozen=True)
class TeacherView:
    """What a class follows: the teacher's ``page`` (its file relative to app.py, ``pages/heatmaps.py``), its
    URL ``params`` shared with the class, the heatmap's ``opts`` (``opt_*`` switches) and a running lesson's place
    (``lesson``: step n of N and its question). Stored as the JSON object :meth:`to_json` gives; :meth:`from_json`
    reads what a store returns (a homework's view, or a field of the wrong kind, reads as no page)."""
    page: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    opts: Mapping[str, bool] = field(default_factory=dict)
    lesson: Mapping | None = None

    def to_json(self) -> dict:
        """The view as plain data, the object a store keeps (``dump_view``)."""
        view: dict = {"page": self.page, "params": dict(self.params), "opts": dict(self.opts)}
        if self.lesson:
            view["lesson"] = dict(self.lesson)
        return view

    @classmethod
    def from_json(cls, raw: object) -> "TeacherView":
        raw = raw if isinstance(raw, Mapping) else {}
        page, params, opts, lesson = raw.get("page"), raw.get("params"), raw.get("opts"), raw.get("lesson")
        return cls(page if isinstance(page, str) and page else None,
                   {str(k): str(v) for k, v in params.items()} if isinstance(params, Mapping) else {},
                   {str(k): bool(v) for k, v in opts.items()} if isinstance(opts, Mapping) else {},
                   dict(lesson) if isinstance(lesson, Mapping) else None)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_matches(stored_hash: str | None, key: object) -> bool:
    """Constant-time check of a teacher key against the stored sha256 hex digest."""
    if not stored_hash or not isinstance(key, str) or not key:
        return False
    return hmac.compare_digest(stored_hash, hash_key(key))


def clean_nickname(text: object) -> str:
    """Nickname as stored: whitespace -> space, control/format characters dropped, stripped, <= NICK_MAX chars."""
    if not isinstance(text, str):
        raise BadInput(_("Please type a nickname."))
    kept = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or
                   unicodedata.category(ch) not in _DROPPED)
    nick = kept.strip()[:NICK_MAX].strip()
    if not nick:
        raise BadInput(_("Please type a nickname (letters, digits or emoji)."))
    return nick


def dump_view(view: object) -> str:
    """View dict -> canonical JSON text; BadInput unless it is a JSON-able dict of at most VIEW_MAX chars."""
    if not isinstance(view, Mapping):
        raise BadInput("The teacher's view must be a dictionary.")
    try:
        text = json.dumps(dict(view), sort_keys=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise BadInput("The teacher's view holds something that is not plain data (text, numbers, lists).") from e
    if len(text) > VIEW_MAX:
        raise BadInput("The teacher's view is too large to share with the class.")
    return text
