"""The static-file gzip middleware (explorer.web.compress), driven as plain ASGI with hand-made answers."""
from __future__ import annotations

import asyncio
import gzip

import pytest

from explorer.web import compress

BODY = b"function attention(q, k) { return softmax(q @ k.T / Math.sqrt(d)); }\n" * 200   # 14,000 bytes
IMMUTABLE = b"public, immutable, max-age=31536000"


def inner_app(body: bytes, kind: bytes = b"application/javascript", cache: bytes = IMMUTABLE, status: int = 200,
              extra: tuple = (), chunks: int = 1):
    """An ASGI app answering ``body`` in ``chunks`` pieces, as Streamlit's static route would."""
    calls = []

    async def app(scope, receive, send):
        calls.append(scope["path"])
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                   (b"etag", b'"abc123"'), *extra] + ([(b"cache-control", cache)] if cache else [])
        await send({"type": "http.response.start", "status": status, "headers": headers})
        step = max(1, len(body) // chunks)
        parts = [body[i:i + step] for i in range(0, len(body), step)] or [b""]
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})
    app.calls = calls
    return app


def fetch(app, accept: bytes | None = b"gzip, deflate", method: str = "GET", extra: tuple = ()):
    """(status, headers as a dict, body) of one request through ``GzipStatic(app)``."""
    headers = ([(b"accept-encoding", accept)] if accept is not None else []) + list(extra)
    scope = {"type": "http", "method": method, "path": "/static/js/index.js", "headers": headers}
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)
    asyncio.run(compress.GzipStatic(app)(scope, receive, send))
    start = sent[0]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, b"".join(
        m.get("body", b"") for m in sent[1:])


@pytest.fixture(autouse=True)
def empty_store(tmp_path, monkeypatch):
    """An empty memory store, and a cache folder of this test's own (the compressed files kept between starts)."""
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path / "cache"))
    compress.STORE.clear()
    compress.STORE.hits = compress.STORE.misses = 0


def counted_gzip(monkeypatch) -> list[int]:
    """Count the calls of gzip.compress that compress.py makes (one element per call)."""
    calls, real = [], gzip.compress
    monkeypatch.setattr(compress.gzip, "compress", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_a_restarted_server_reads_the_kept_file_instead_of_compressing_again(monkeypatch):
    calls = counted_gzip(monkeypatch)
    first = compress.compressed(BODY)
    assert len(calls) == 1 and compress.kept_file(compress.hashlib.sha256(BODY).digest()).read_bytes() == first
    compress.STORE.clear()                       # a new process: nothing in memory
    assert compress.compressed(BODY) == first and len(calls) == 1
    assert gzip.decompress(first) == BODY


@pytest.mark.parametrize("damage", [lambda b: b[: len(b) // 2], lambda b: gzip.compress(b"other bytes"),
                                    lambda b: b"not gzip at all"], ids=["cut-short", "other-body", "not-gzip"])
def test_a_damaged_kept_file_is_never_served_and_is_made_again(monkeypatch, damage):
    key = compress.hashlib.sha256(BODY).digest()
    good = compress.compressed(BODY)
    compress.kept_file(key).write_bytes(damage(good))
    compress.STORE.clear()
    calls = counted_gzip(monkeypatch)
    assert gzip.decompress(compress.compressed(BODY)) == BODY and len(calls) == 1
    assert compress.kept_file(key).read_bytes() == good   # written again, whole
    assert [p.name for p in compress.kept_file(key).parent.iterdir()] == [compress.kept_file(key).name]


def test_a_cache_folder_that_cannot_be_written_still_compresses(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("EXPLORER_CACHE", str(blocker))   # its static-gzip folder cannot be made
    assert gzip.decompress(compress.compressed(BODY)) == BODY


@pytest.mark.parametrize("header, expected", [
    (b"gzip, deflate", True), (b"GZIP", True), (b"br, gzip;q=0.5", True), (b"*", True),
    (b"gzip;q=0", False), (b"br", False), (b"identity", False), (b"gzip;q=zero", False)])
def test_accept_encoding_is_read_with_its_weights(header, expected):
    assert compress.accepts_gzip([(b"Accept-Encoding", header)]) is expected


def test_no_accept_encoding_means_no_gzip():
    assert compress.accepts_gzip([(b"user-agent", b"gzip-lover")]) is False


def test_a_hashed_bundle_is_sent_gzipped_with_its_headers_kept():
    status, headers, body = fetch(inner_app(BODY, chunks=3))
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(body) == BODY
    assert int(headers["content-length"]) == len(body) < len(BODY) // 10     # a repeated line packs very well
    assert headers["etag"] == '"abc123"' and headers["cache-control"] == IMMUTABLE.decode()
    assert headers["vary"] == "Accept-Encoding"
    assert list(headers).count("content-length") == 1


def test_each_body_is_compressed_once_then_answered_from_memory():
    app = inner_app(BODY)
    first = fetch(app)[2]
    second = fetch(app)[2]
    assert first == second and (compress.STORE.misses, compress.STORE.hits) == (1, 1)
    assert app.calls == ["/static/js/index.js"] * 2        # headers (and 304s) still come from the inner app


def test_an_existing_vary_is_kept():
    headers = fetch(inner_app(BODY, extra=((b"vary", b"Cookie"),)))[1]
    assert headers["vary"] == "Cookie, Accept-Encoding"


@pytest.mark.parametrize("case", ["no accept", "head", "range", "small", "encoded", "image", "not hashed", "404"])
def test_everything_else_passes_through_untouched(case):
    body, kind, cache, status, extra, accept, method, req = BODY, b"text/javascript", IMMUTABLE, 200, (), \
        b"gzip", "GET", ()
    if case == "no accept":
        accept = None
    elif case == "head":
        method = "HEAD"
    elif case == "range":
        req = ((b"range", b"bytes=0-99"),)
    elif case == "small":
        body = BODY[:compress.MIN_BYTES - 1]
    elif case == "encoded":
        extra = ((b"content-encoding", b"br"),)
    elif case == "image":
        kind = b"image/png"
    elif case == "not hashed":
        cache = b""
    elif case == "404":
        status = 404
    got_status, headers, got = fetch(inner_app(body, kind, cache, status, extra), accept, method, req)
    assert got == body and got_status == status
    assert headers.get("content-encoding") in (None, "br") and headers["content-length"] == str(len(body))
    assert compress.STORE.misses == 0


def test_the_page_html_is_compressed_without_a_cache_life():
    html = b"<!doctype html><html><head><title>Attention explorer</title></head><body></body></html>" * 30
    status, headers, body = fetch(inner_app(html, b"text/html; charset=utf-8", b"no-cache"))
    assert headers["content-encoding"] == "gzip" and gzip.decompress(body) == html


def test_warm_compresses_every_text_file_of_a_folder(tmp_path):
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_bytes(BODY)
    (tmp_path / "b.css").write_bytes(BODY.replace(b"function", b"body"))
    (tmp_path / "tiny.js").write_bytes(b"x")                 # too small to gain
    (tmp_path / "font.woff2").write_bytes(BODY)              # already compressed formats are left
    assert compress.warm(tmp_path) == 2
    fetch(inner_app(BODY))
    assert compress.STORE.hits == 1                          # the request found it compressed already


def test_streamlit_static_folder_is_found():
    folder = compress.static_dir()
    assert folder is not None and (folder / "index.html").is_file()


def test_a_failed_compression_sends_the_file_as_it_came_and_logs_why(monkeypatch, caplog):
    """A fault in the compressor (a store's sizing raised once) must not leave the browser without the app's
    script: the file goes out uncompressed, and the log says why."""
    def broken(body):
        raise AttributeError("partially initialized module")
    monkeypatch.setattr(compress, "compressed", broken)
    status, headers, body = fetch(inner_app(BODY, chunks=2))
    assert status == 200 and body == BODY and "content-encoding" not in headers
    assert int(headers["content-length"]) == len(BODY)
    assert "gzip of a static file failed" in caplog.text
