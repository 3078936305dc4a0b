"""The lesson folders: the app's own lessons and a deployer's, every lesson file in them read once per version of
the file and of its translation, and a lesson found by its source ("app:attention-20")."""
from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from explorer.words import i18n
from explorer.words.i18n import N_, Later

from .files import MAX_BYTES, LessonError, parse, too_big
from .model import Lesson
from .translations import in_language, translation_path

APP_DIR = Path(__file__).resolve().parents[2] / "lessons"   # the app's own lessons, at the repository root
ENV_DIR = "EXPLORER_LESSONS_DIR"   # a folder of the deployer's lessons
MAX_FILES = 50   # lesson files read from one folder


def folders(env: Mapping[str, str] = os.environ) -> list[tuple[str, Path]]:
    """(source prefix, folder): the app's own lessons, then the deployer's ($EXPLORER_LESSONS_DIR) if set."""
    found = [("app", APP_DIR)]
    if env.get(ENV_DIR, "").strip():
        found.append(("dir", Path(env[ENV_DIR]).expanduser()))
    return found


def catalogue(env: Mapping[str, str] = os.environ, lang: str | None = None
              ) -> tuple[list[Lesson], list[LessonError]]:
    """Every lesson file (``*.toml``) of the lesson folders, sorted by file name within each folder -> (lessons
    that validated, one error per file that did not), each in ``lang`` (default: the session's language) where its
    translation is there, else in English."""
    lang = i18n.spoken(lang) or i18n.current()
    lessons, errors = [], []
    for prefix, folder in folders(env):
        try:
            files = sorted(folder.glob("*.toml"))[:MAX_FILES]
        except OSError:
            continue
        for path in files:
            try:
                if path.stat().st_size > MAX_BYTES:
                    raise LessonError(path.name, too_big(path.stat().st_size))
                other = translation_path(folder, path.name, lang)
                lessons.append(_read(str(path), _stamp(path), f"{prefix}:{path.stem}", lang, _stamp(other)))
            except LessonError as err:
                errors.append(err)
            except OSError as err:
                errors.append(LessonError(path.name, Later(N_("cannot be read ({error})"), error=err.strerror)))
    return lessons, errors


def _stamp(path: Path) -> tuple[int, int] | None:
    """What changes when a file changes (its modification time and size), or None when there is none."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


@lru_cache(maxsize=256)
def _read(path: str, stamp: tuple, source: str, lang: str, translated_stamp: tuple | None) -> Lesson:
    """The lesson file at ``path`` in ``lang``, read once per version of the file and of its translation (a
    follower's run reads the teacher's lesson again in its own language: a lookup, not a parse)."""
    file = Path(path)
    return in_language(parse(file.read_bytes(), file.name, source), file.parent, file.name, lang)


def find(source: str, env: Mapping[str, str] = os.environ, lang: str | None = None) -> Lesson | None:
    """The catalogue's lesson whose source is ``source`` ("app:attention-20"), or None; in ``lang`` (default: the
    session's language) where its translation is there."""
    return next((lesson for lesson in catalogue(env, lang)[0] if lesson.source == source), None)
