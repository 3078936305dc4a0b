"""Build the head atlas shipped in ``assets/atlas/``: both embedded models read the fortunes corpus.

    HF_HUB_OFFLINE=1 .venv/bin/python tools/head_atlas.py [--fortunes /usr/share/games/fortunes] [--tokens 52000]

Needs Debian's ``fortunes`` package (``apt-get install fortunes``) or its files in ``--fortunes``. Writes one
``<model>.npz`` per model and ``corpus.json`` (the windows the atlas shows), then prints sizes and times.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.atlas import fortunes, shipped  # noqa: E402
from explorer.atlas.survey import describe, survey  # noqa: E402
from explorer.model.loading import load_model  # noqa: E402
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fortunes", type=Path, default=fortunes.FOLDER)
    parser.add_argument("--tokens", type=int, default=fortunes.TARGET_TOKENS)
    parser.add_argument("--out", type=Path, default=shipped.FOLDER)
    args = parser.parse_args()
    decoder = load_model(EMBEDDED_DECODER)
    lines = fortunes.read_cookies(args.fortunes)
    count = lambda text: len(decoder.tokenizer(text)["input_ids"])   # noqa: E731
    texts = fortunes.windows(lines, count, target_tokens=args.tokens)
    print(f"{len(lines)} cookies, {len(texts)} windows")
    surveys = []
    for loaded in (decoder, load_model(EMBEDDED_ENCODER)):
        s = survey(loaded, texts, progress=lambda f, m: print(f"\r{f:.0%}", end="", flush=True))
        print("\r" + describe(s))
        surveys.append(s)
    shipped.save(surveys, texts, fortunes.source_text(), fortunes.LICENCE, args.out)
    for p in sorted(args.out.iterdir()):
        print(f"{p.name}: {p.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
