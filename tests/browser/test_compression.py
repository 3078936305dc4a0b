"""A real `streamlit run app.py` sends Streamlit's JavaScript gzipped to browsers that ask for it (app.py's
``GzipStatic`` middleware): the first visit of a class fits classroom Wi-Fi. Plain HTTP, no browser needed."""
from __future__ import annotations

import gzip

import pytest
from chromium import Server, fetch, main_bundle

from explorer.web.compress import static_dir


@pytest.fixture(scope="module")
def server():
    s = Server({"EXPLORER_PRELOAD": ""})
    try:
        yield s
    finally:
        s.stop()


def test_main_bundle_is_gzipped_and_unchanged(server):
    path = main_bundle(server.url)
    on_disk = (static_dir() / path.lstrip("/")).read_bytes()
    headers, body = fetch(server.url + path)
    assert headers["content-encoding"] == "gzip" and "Accept-Encoding" in headers["vary"]
    assert gzip.decompress(body) == on_disk
    assert len(body) < len(on_disk) / 2.5                     # JavaScript packs 3-5 times
    assert "immutable" in headers["cache-control"]           # hashed files keep their year-long cache life
    plain_headers, plain = fetch(server.url + path, gzip_ok=False)
    assert plain == on_disk and "content-encoding" not in plain_headers


@pytest.mark.parametrize("path", ["/", "/heatmaps"])
def test_page_html_is_compressed_and_never_cached(server, path):
    headers, body = fetch(server.url + path)
    assert headers["content-encoding"] == "gzip" and headers["cache-control"] == "no-cache"
    assert b'id="root"' in gzip.decompress(body)
