"""The icon-font subset (explorer.web.icons): it draws every icon that can be named, exactly as the full font does,
and the middleware serves it only at the installed font's URL, only while that font is the one it was cut from."""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from explorer.web import icons

pytest.importorskip("brotli")   # fontTools reads WOFF2 with it (requirements-test.txt)
from fontTools.ttLib import TTFont  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FULL = icons.source_font()


def test_the_manifest_names_the_installed_font_so_the_subset_is_served():
    """Fails after a Streamlit upgrade until `tools/subset_icons.py` has cut the new font."""
    manifest = json.loads(icons.MANIFEST.read_text())
    assert FULL is not None and manifest["source"] == FULL.name
    assert manifest["source_sha256"] == hashlib.sha256(FULL.read_bytes()).hexdigest()
    assert icons._served() is not None and icons._served()[1] == icons.SUBSET.read_bytes()
    assert len(icons.SUBSET.read_bytes()) < FULL.stat().st_size / 4


def test_every_icon_that_can_be_named_is_in_the_subset():
    """Our navigation's icons, Streamlit's own (`:material/…:` and bare names such as the data grid's
    `more_vert`): each keeps its ligature, so its name still draws a glyph and never the name as text."""
    full = icons.ligatures(FULL)
    subset = icons.ligatures(icons.SUBSET)
    wanted = icons.wanted_names(set(full), icons.sources(ROOT))
    for name in ("home", "grid_on", "school", "visibility_off", "more_vert", "expand_more", "check", "error",
                 "keyboard_double_arrow_left", "content_copy"):
        assert name in wanted
    assert wanted <= set(subset)
    assert len(subset) < len(full) / 4          # and the rest are gone


def test_a_name_list_is_not_a_use_and_bare_names_count(tmp_path):
    known = {"home", "menu", "star", "bolt"}
    (tmp_path / "list.py").write_text(repr(sorted(known)))          # more names than the limit below
    (tmp_path / "use.js").write_text('x=`menu`;y=":material/bolt:";z=homework')
    old = icons.NAME_LIST_AT
    icons.NAME_LIST_AT = 3
    try:
        assert icons.wanted_names(known, [tmp_path / "list.py", tmp_path / "use.js"]) == {"menu", "bolt"}
    finally:
        icons.NAME_LIST_AT = old


def test_subset_glyphs_are_the_full_fonts_glyphs():
    full, subset = TTFont(FULL), TTFont(icons.SUBSET)
    names_full, names_subset = icons.ligatures(FULL), icons.ligatures(icons.SUBSET)
    for name in ("home", "school", "more_vert", "swap_horiz"):
        a, b = full["glyf"][names_full[name]], subset["glyf"][names_subset[name]]
        a.expand(full["glyf"]), b.expand(subset["glyf"])
        assert a.numberOfContours == b.numberOfContours > 0
        assert list(a.coordinates) == list(b.coordinates)
        assert full["hmtx"][names_full[name]] == subset["hmtx"][names_subset[name]]


def call(path: str, method: str = "GET", headers: tuple = ()):
    """(status, headers, body, whether the inner app was called) of one request through SubsetIcons."""
    sent, inner = [], []

    async def app(scope, receive, send):
        inner.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"x/inner")]})
        await send({"type": "http.response.body", "body": b"inner"})

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)
    scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
    asyncio.run(icons.SubsetIcons(app)(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:]), bool(inner)


def test_the_font_url_gets_the_subset_with_a_long_cache_life_and_other_urls_pass():
    url = f"/static/media/{FULL.name}"
    status, headers, body, inner = call(url)
    assert (status, body, inner) == (200, icons.SUBSET.read_bytes(), False)
    assert headers[b"content-type"] == b"font/woff2" and b"immutable" in headers[b"cache-control"]
    assert int(headers[b"content-length"]) == len(body)
    assert call("/base/path" + url)[2] == body                      # behind a base URL path too
    assert call(url, "HEAD")[2] == b"" and call(url, "HEAD")[0] == 200
    again = call(url, headers=((b"If-None-Match", headers[b"etag"]),))
    assert again[0] == 304 and again[2] == b""
    for other in ("/static/media/SourceSansVF-Upright.ttf.BsWL4Kly.woff2", f"/static/js/{FULL.name}", "/"):
        assert call(other)[2:] == (b"inner", True)
    assert call(url, "POST")[2:] == (b"inner", True)


def test_a_different_installed_font_gets_the_full_font(monkeypatch, tmp_path):
    """After an upgrade (same name, other bytes here) nothing is swapped: a stale subset could lack new icons."""
    media = tmp_path / "static" / "media"
    media.mkdir(parents=True)
    (media / FULL.name).write_bytes(b"another font")
    monkeypatch.setattr(icons, "static_dir", lambda: tmp_path)
    icons._served.cache_clear()
    try:
        assert icons._served() is None
        assert call(f"/static/media/{FULL.name}")[2:] == (b"inner", True)
    finally:
        icons._served.cache_clear()
