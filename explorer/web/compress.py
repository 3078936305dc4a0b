"""Compressed static files for a classroom's first visit: an ASGI middleware around Streamlit's server.

Streamlit 1.67 sends its JavaScript bundles uncompressed (its own gzip layer skips ``/static/`` and the page HTML,
because compressing them again on every request costs the server CPU during a class's rush of first loads). A
student's first visit is then ~7.5 MB, most of it JavaScript that gzip shrinks 3-5 times. This middleware keeps
both sides of that trade: each distinct file body is compressed ONCE (single-flight, keyed by the sha-256 of its
bytes, held in a byte-bounded memory store) and every later request is answered from memory. ``warm`` compresses
every static file in the background when the server starts, so the first student does not wait for it either;
the compressed files are kept in the cache folder too (``kept_file``), so a replica started later, or a restarted
server, reads them back instead of compressing Streamlit's bundles again.

What is compressed: ``GET`` answers with status 200, no ``Content-Encoding`` yet, a text type (JavaScript, CSS,
HTML, JSON, SVG, source maps), at least ``MIN_BYTES``, and either hashed and immutable (``Cache-Control`` holds
``immutable``) or the app's HTML page. Everything else (websockets, ``/_stcore`` answers that Streamlit gzips
itself, media, ranges, HEAD, 304s) passes through untouched. Headers stay Streamlit's (cache life, ETag: the
nginx ``gzip_static`` convention), plus ``Content-Encoding``, the new ``Content-Length`` and
``Vary: Accept-Encoding``. No streamlit import: the module is plain ASGI and stdlib ``gzip``.
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import logging
import os
import threading
import zlib
from pathlib import Path

import numpy as np
from anyio import to_thread  # starlette's own dependency: compression runs off the event loop

from explorer.cache_folder import cache_root
from explorer.serving import regions

log = logging.getLogger(__name__)

MIN_BYTES = 1024
LEVEL = 9   # paid once per file, so the smallest output is worth the CPU
TYPES = ("text/javascript", "application/javascript", "text/css", "text/html", "application/json",
         "image/svg+xml", "application/manifest+json", "text/plain")
SUFFIXES = (".js", ".css", ".html", ".json", ".svg", ".map", ".txt")
STORE = regions.store("static")   # sized by EXPLORER_STATIC_CACHE_MB (serving/regions.py)


def accepts_gzip(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether the request's ``Accept-Encoding`` allows gzip (a ``q=0`` refuses it)."""
    for name, value in headers:
        if name.lower() != b"accept-encoding":
            continue
        for part in value.decode("latin-1").lower().split(","):
            coding, _, params = part.strip().partition(";")
            if coding.strip() in ("gzip", "*"):
                q = params.strip().removeprefix("q=") if params.strip().startswith("q=") else "1"
                try:
                    return float(q) > 0
                except ValueError:
                    return False
    return False


def compressed(body: bytes) -> bytes:
    """``body`` gzipped, computed once per distinct content (several sessions asking at once wait for one)."""
    key = hashlib.sha256(body).digest()
    held = STORE.get_or_compute(key, lambda: np.frombuffer(_packed(key, body), np.uint8))
    return held.tobytes()


def kept_file(key: bytes) -> Path:
    """Where the gzip of the body whose sha-256 is ``key`` is kept between server starts (the cache folder)."""
    return cache_root() / "static-gzip" / f"{key.hex()}.gz"


def _packed(key: bytes, body: bytes) -> bytes:
    """``body`` gzipped at ``LEVEL``: read back from ``kept_file`` when an earlier start of any server of this
    machine made it (Streamlit's 216 bundles: 0.95 s of CPU at each replica's start and each restart, 0.21 s to
    read back and check), and used only if it unpacks to exactly ``body`` (a file cut short or altered is made
    again); else made and kept there (written whole, then renamed: a reader never sees half a file; a folder that
    cannot be written is skipped, and no part file is left behind)."""
    path = kept_file(key)
    with contextlib.suppress(OSError, EOFError, zlib.error, gzip.BadGzipFile):
        packed = path.read_bytes()
        if hashlib.sha256(gzip.decompress(packed)).digest() == key:
            return packed
    packed = gzip.compress(body, LEVEL, mtime=0)   # mtime=0: the same input gives the same bytes, on every replica
    part = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(packed)
        os.replace(part, path)
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
    return packed


def _compressible(status: int, headers: dict[bytes, bytes]) -> bool:
    kind = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
    cache = headers.get(b"cache-control", b"").decode("latin-1").lower()
    return (status == 200 and b"content-encoding" not in headers and kind in TYPES
            and ("immutable" in cache or kind == "text/html"))


class GzipStatic:
    """ASGI middleware: answer compressible static files gzipped, from memory after their first request."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or not accepts_gzip(scope.get("headers", [])) \
                or any(name.lower() == b"range" for name, _ in scope.get("headers", [])):
            await self.app(scope, receive, send)
            return
        start: dict | None = None
        chunks: list[bytes] = []
        passing = False

        async def capture(message):
            nonlocal start, passing
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                if _compressible(message["status"], headers):
                    start = message
                else:
                    passing = True
                    await send(message)
                return
            if passing or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await _finish(start, b"".join(chunks), send)

        await self.app(scope, receive, capture)


async def _finish(start: dict, body: bytes, send) -> None:
    packed = None
    if len(body) >= MIN_BYTES:
        try:
            packed = await to_thread.run_sync(compressed, body)
        except Exception:   # the file still reaches the browser: a page whose script never arrives only spins
            log.exception("gzip of a static file failed: sent as it came")
    if packed is None:
        await send(start)
        await send({"type": "http.response.body", "body": body})
        return
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() not in (b"content-length", b"vary")]
    vary = [v for k, v in start.get("headers", []) if k.lower() == b"vary"]
    headers += [(b"content-encoding", b"gzip"), (b"content-length", str(len(packed)).encode()),
                (b"vary", b", ".join([*vary, b"Accept-Encoding"]))]
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": packed})


def static_dir() -> Path | None:
    """Streamlit's folder of frontend files, found without importing streamlit."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "static"
    return folder if folder.is_dir() else None


def warm(folder: Path | None = None) -> int:
    """Compress every static text file now (the server's start hook calls this in the background) -> how many."""
    folder = folder or static_dir()
    done = 0
    for path in sorted(folder.rglob("*")) if folder else []:
        if path.suffix in SUFFIXES and path.is_file() and path.stat().st_size >= MIN_BYTES:
            compressed(path.read_bytes())
            done += 1
    log.info("compressed %d static files (%.1f MB in memory)", done, STORE.size / 2**20)
    return done
