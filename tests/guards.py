"""What the guard tests share (a helper module, not a test file): find names that may appear in one module only."""
from __future__ import annotations

import re
from pathlib import Path

FOLDERS = ("explorer", "pages", "bench")   # what the guards read, with app.py


def whole_words(*names: str) -> dict[str, str]:
    """``{name: its pattern}`` for names matched as whole words: ``whole_words("AppSession")`` is
    ``{"AppSession": r"\\bAppSession\\b"}`` (a dotted name's dots matched as dots)."""
    return {name: rf"\b{re.escape(name)}\b" for name in names}


def uses_outside(root: Path, home: str | tuple[str, ...], forbidden: dict[str, str],
                 allowed: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Each line of the tree at ``root`` (its explorer/, pages/, bench/ and app.py) outside ``home`` that matches
    one of ``forbidden``'s patterns (name -> regex): "path:line: name". ``allowed`` names exceptions: path ->
    {name: why that file may use it}."""
    files = [*(p for folder in FOLDERS for p in root.glob(f"{folder}/**/*.py")), *root.glob("app.py")]
    allowed = allowed or {}
    found = []
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        if rel in ((home,) if isinstance(home, str) else home):   # one home, or several
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{rel}:{number}: {name}" for name, pattern in forbidden.items()
                      if re.search(pattern, line) and name not in allowed.get(rel, {})]
    return found


def stale_exceptions(root: Path, forbidden: dict[str, str], allowed: dict[str, dict[str, str]]) -> list[str]:
    """Each exception of ``allowed`` (path -> {name: why}) whose file no longer uses the name: "path: name"."""
    stale = []
    for rel, names in allowed.items():
        path = root / rel
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        stale += [f"{rel}: {name}" for name in names if not re.search(forbidden[name], text)]
    return stale


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """A small tree for a guard's own test: each of ``files`` (relative path -> text) written below ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
