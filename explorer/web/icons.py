"""A smaller icon font for a class's first visit: Streamlit's Material Symbols cut to the icons that can be drawn.

Streamlit 1.67 preloads its Material Symbols Rounded font (375 kB of WOFF2, 4,300 icons) on every first visit,
whether a page shows two icons or none. WOFF2 is already compressed, so gzip cannot help; only fewer glyphs can.
``assets/fonts/`` holds a subset made by ``tools/subset_icons.py`` with every icon that this app, Streamlit's
frontend or Streamlit's Python code can name (about 560 icons, 57 kB), and a manifest naming the font it was cut
from. ``SubsetIcons`` answers that font's URL with the subset, but only while the installed file is byte for byte
the one the manifest names: after a Streamlit upgrade the full font is served until the subset is made again
(a unit test fails until then). Icons keep their ligatures, so an icon's name still draws its glyph.

Runtime needs only the stdlib; ``wanted_names`` and ``build`` (for the tool and the tests) import fontTools.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import re
from pathlib import Path

from explorer.web.compress import static_dir

FONTS = Path(__file__).resolve().parents[2] / "assets" / "fonts"
SUBSET = FONTS / "material-symbols-subset.woff2"
MANIFEST = FONTS / "material-symbols-subset.json"
FAMILY = "MaterialSymbols-Rounded"
CACHE = b"public, immutable, max-age=31536000"   # the font's URL is hashed, like every Streamlit asset
NAME_LIST_AT = 300   # a file naming more icons than this is a list of every icon (for validation), not a use
_PREFIXED = re.compile(r":material/([a-z0-9_]+):")
_LITERAL = re.compile(r"[`'\"]([a-z0-9_]+)[`'\"]")   # bare names, e.g. the data grid's `more_vert`


def source_font(folder: Path | None = None) -> Path | None:
    """The installed Streamlit's Material Symbols WOFF2 file, if there is one."""
    folder = folder or static_dir()
    found = sorted((folder / "static" / "media").glob(f"{FAMILY}.*.woff2")) if folder else []
    return found[0] if found else None


@functools.cache
def _served() -> tuple[str, bytes, bytes] | None:
    """(URL file name, subset bytes, ETag) when the subset applies to the installed font, else None."""
    try:
        manifest = json.loads(MANIFEST.read_text())
        body = SUBSET.read_bytes()
    except (OSError, ValueError):
        return None
    source = source_font()
    if source is None or source.name != manifest.get("source") \
            or hashlib.sha256(source.read_bytes()).hexdigest() != manifest.get("source_sha256"):
        return None
    return source.name, body, b'"' + hashlib.sha256(body).hexdigest()[:20].encode() + b'"'


class SubsetIcons:
    """ASGI middleware: answer the Material Symbols font's URL with the subset (see the module's docstring)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        served = _served() if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") else None
        if served is None or scope.get("path", "").rpartition("/")[2] != served[0] \
                or "/static/media/" not in scope.get("path", ""):
            await self.app(scope, receive, send)
            return
        _, body, etag = served
        asked = dict((k.lower(), v) for k, v in scope.get("headers", []))
        headers = [(b"content-type", b"font/woff2"), (b"cache-control", CACHE), (b"etag", etag)]
        if etag in asked.get(b"if-none-match", b""):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def ligatures(font_path: Path) -> dict[str, str]:
    """Icon name -> glyph name, read from the font's ligature table (needs fontTools, and brotli for WOFF2)."""
    from fontTools.ttLib import TTFont

    font = TTFont(font_path)
    char_of = {glyph: chr(code) for code, glyph in font.getBestCmap().items()}
    names = {}
    for lookup in font["GSUB"].table.LookupList.Lookup:
        for table in lookup.SubTable:
            table = table.ExtSubTable if lookup.LookupType == 7 else table
            for first, rules in getattr(table, "ligatures", {}).items():
                for rule in rules:
                    names["".join(char_of.get(g, "?") for g in (first, *rule.Component))] = rule.LigGlyph
    return names


def wanted_names(known: set[str], sources: list[Path]) -> set[str]:
    """The icon names in ``known`` that a source file names, as ``:material/name:`` or as a quoted bare name.
    A file that names more than ``NAME_LIST_AT`` icons is a list of all of them and is skipped."""
    wanted: set[str] = set()
    for path in sources:
        text = path.read_text(errors="ignore")
        named = (set(_PREFIXED.findall(text)) | set(_LITERAL.findall(text))) & known
        if len(named) <= NAME_LIST_AT:
            wanted |= named
    return wanted


def sources(root: Path, folder: Path | None = None) -> list[Path]:
    """Where icons can be named: Streamlit's frontend and Python code, and this app's Python files."""
    folder = folder or static_dir()
    package = folder.parent
    own = sorted((root / "explorer").rglob("*.py")) + sorted((root / "pages").glob("*.py")) + [root / "app.py"]
    return sorted(folder.rglob("*.js")) + sorted(package.rglob("*.py")) + own


def build(font_path: Path, names: set[str]) -> bytes:
    """A WOFF2 subset of the font with the ASCII characters and the icons ``names``, ligatures kept."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    glyph_of = ligatures(font_path)
    font = TTFont(font_path)
    keep = {glyph_of[n] for n in names} | {g for code, g in font.getBestCmap().items() if code < 128}
    options = subset.Options(flavor="woff2", layout_features=["*"], name_IDs=["*"], notdef_outline=True)
    options.layout_closure = False   # otherwise every ligature of the kept letters comes back: all 4,300 icons
    cutter = subset.Subsetter(options)
    cutter.populate(glyphs=sorted(keep))
    cutter.subset(font)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()
