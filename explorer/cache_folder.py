"""Where the app keeps what it makes once and reuses: the per-user cache folder.

The decoder's converted weights (``model/embedded.py``), the classroom file (``classroom/sqlite_file.py``) and the
gzipped static files (``web/compress.py``) all live under it. One function, so that ``EXPLORER_CACHE`` moves all of
them together."""
from __future__ import annotations

import os
from pathlib import Path


def cache_root(env=os.environ) -> Path:
    """Per-user cache folder: ``$EXPLORER_CACHE``, else ``$XDG_CACHE_HOME`` (or ``~/.cache``) + attention-explorer."""
    base = env.get("EXPLORER_CACHE") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"),
                                                     "attention-explorer")
    return Path(base)
