"""The README says how many lessons there are only as the lesson files do: a count written in words or digits before
"lessons" ("the three ready-made lessons", "six lessons") must equal the number of files in lessons/, so a new
lesson file (or a removed one) fails here until the text is changed (or says no count at all)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                    "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
COUNT = re.compile(r"\b(" + "|".join(WORDS) + r"|\d+)\s+(?:ready-made\s+|ready made\s+)?lessons\b", re.IGNORECASE)
DOCS = ("README.md", "docs/deploy.md")   # what the app says it is now (docs/benchmarks.md keeps dated measurements)


def lesson_files() -> int:
    return len(sorted((ROOT / "lessons").glob("*.toml")))


def counts(text: str) -> list[int]:
    """Every lesson count the text states."""
    return [int(w) if w.isdigit() else WORDS[w.lower()] for w in COUNT.findall(text)]


@pytest.mark.parametrize("doc", DOCS)
def test_a_lesson_count_in_the_docs_is_the_lesson_files(doc):
    said = counts((ROOT / doc).read_text(encoding="utf-8"))
    assert all(n == lesson_files() for n in said), f"{doc} says {said} lessons; lessons/ holds {lesson_files()}"


def test_the_count_reader_finds_what_it_guards():
    assert lesson_files() >= 6   # read from the files, never written here
    assert counts("| Lessons | the three ready-made lessons step by step") == [3]
    assert counts("Home lists six lessons first; every step of the five lessons; 7 lessons") == [6, 5, 7]
    assert counts("the ready-made lessons first; every step of lessons 1-5 took 0.26 MB") == []
