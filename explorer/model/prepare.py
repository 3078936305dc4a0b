"""Set-up step: check every embedded model's weights and convert the decoder's GGUF once.

    python -m explorer.model.prepare

Run by ``bash dev.sh app`` and ``bash dev.sh test`` before the server starts, so no student waits for it.
"""
from __future__ import annotations

import sys
import time

from explorer.model import loading, registry


def main() -> int:
    for spec in registry.EMBEDDED.values():
        start = time.monotonic()
        folder = loading.prepare(spec)
        print(f"{spec.name}: ready in {folder} ({time.monotonic() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
