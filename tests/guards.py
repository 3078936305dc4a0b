"""What the guard tests share (a helper module, not a test file): find names that may appear in one module only."""
from __future__ import annotations

import re
from pathlib import Path


def uses_outside(root: Path, home: str, forbidden: dict[str, str]) -> list[str]:
    """Each line of the tree at ``root`` (its explorer/, pages/, app.py) outside ``home`` that matches one of
    ``forbidden``'s patterns (name -> regex): "path:line: name"."""
    files = [*root.glob("explorer/**/*.py"), *root.glob("pages/**/*.py"), *root.glob("app.py")]
    found = []
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        if rel == home:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{rel}:{number}: {name}" for name, pattern in forbidden.items() if re.search(pattern, line)]
    return found
