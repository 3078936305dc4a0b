"""Make assets/fonts' icon subset again (a developer's tool; run it after upgrading Streamlit).

    .venv/bin/python tools/subset_icons.py

Reads the installed Streamlit's Material Symbols font, finds every icon that Streamlit or this app can name
(``explorer.web.icons.wanted_names``), and writes the WOFF2 subset and its manifest. Needs fontTools and brotli
(requirements-test.txt).
"""
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.web import icons  # noqa: E402


def main() -> None:
    font = icons.source_font()
    if font is None:
        sys.exit("no Material Symbols font in the installed Streamlit")
    names = icons.wanted_names(set(icons.ligatures(font)), icons.sources(ROOT))
    body = icons.build(font, names)
    icons.FONTS.mkdir(parents=True, exist_ok=True)
    icons.SUBSET.write_bytes(body)
    icons.MANIFEST.write_text(json.dumps({
        "source": font.name, "source_sha256": hashlib.sha256(font.read_bytes()).hexdigest(),
        "source_bytes": font.stat().st_size, "subset_bytes": len(body), "icons": sorted(names)}, indent=1) + "\n")
    print(f"{len(names)} icons: {font.stat().st_size:,} -> {len(body):,} bytes ({icons.SUBSET.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
