"""Sizes a reader takes in at once: a module of explorer/ (or app.py) holds at most 300 lines, a page of pages/ at
most 80 (a page wires widgets; its questions and sentences are built in the core). A file over its limit is split
along the ideas it holds, or named below with the reason it is not yet. The check runs on this repository and, to
show that it can fail, on a small tree with a file one line too long."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULE_LINES, PAGE_LINES = 300, 80
# named exceptions: the file, and why it is over its limit for now
EXCEPTIONS: dict[str, str] = {}


def limit_of(rel: str) -> int | None:
    """The most lines ``rel`` (a path from the repository root) may hold, or None for a file not checked."""
    if rel.startswith("pages/"):
        return PAGE_LINES
    if rel.startswith("explorer/") or rel == "app.py":
        return MODULE_LINES
    return None


def too_long(root: Path, exceptions: dict[str, str]) -> list[str]:
    """Every file of ``root`` over its limit and not named in ``exceptions``, as ``path: lines > limit``."""
    found = []
    for path in sorted([*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), *root.glob("app.py")]):
        rel = path.relative_to(root).as_posix()
        limit, lines = limit_of(rel), len(path.read_text().splitlines())
        if limit is not None and lines > limit and rel not in exceptions:
            found.append(f"{rel}: {lines} > {limit}")
    return found


def test_no_module_over_300_lines_and_no_page_over_80():
    assert too_long(ROOT, EXCEPTIONS) == []


def test_every_exception_is_still_over_its_limit_and_says_why():
    for rel, reason in EXCEPTIONS.items():
        assert reason.strip(), rel
        assert len((ROOT / rel).read_text().splitlines()) > limit_of(rel), f"{rel} fits now: drop its exception"


@pytest.mark.parametrize("rel, limit", [("explorer/model/big.py", 300), ("pages/long_page.py", 80),
                                        ("app.py", 300)])
def test_the_check_fails_on_a_file_one_line_too_long(tmp_path, rel, limit):
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n" * limit)
    assert too_long(tmp_path, {}) == []
    path.write_text("x = 1\n" * (limit + 1))
    assert too_long(tmp_path, {}) == [f"{rel}: {limit + 1} > {limit}"]
    assert too_long(tmp_path, {rel: "a reason"}) == []
