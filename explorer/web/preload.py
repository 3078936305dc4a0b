"""The page tells the browser to fetch the chart code at once: an ASGI middleware that adds one line to its HTML.

Streamlit loads plotly.js (its ``PlotlyChart`` chunk: 4.7 MB of JavaScript, 1.4 MB gzipped) only when the first
chart of a page arrives, so on a first visit the browser waited for the page's script to run, then downloaded and
compiled plotly, and only then drew the first chart; at a cold start that came after the model had loaded.
A ``<link rel="modulepreload">`` for that chunk, next to Streamlit's own ones in the page's ``<head>``, starts the
download and the compiling while the page's script runs; Streamlit's own import of the chunk later finds it there
(the same URL: one download, one module). Pages without a chart fetch it too, once, for the pages that have one.
Plain ASGI; the HTML is Streamlit's ``index.html`` (``no-cache``), so the line is in every page load.
"""
from __future__ import annotations

import functools

from explorer.web.compress import static_dir

CHUNK = "PlotlyChart.*.js"
SERVED_ELSEWHERE = ("/static/", "/_stcore/", "/media/", "/component/", "/_explorer/")   # never a page's HTML


@functools.cache
def link() -> bytes | None:
    """The ``<link>`` element for the installed Streamlit's chart chunk, or None when there is none."""
    folder = static_dir()
    found = sorted((folder / "static" / "js").glob(CHUNK)) if folder else []
    return f'<link rel="modulepreload" crossorigin href="./static/js/{found[0].name}">'.encode() if found else None


def with_link(html: bytes, element: bytes | None) -> bytes:
    """``html`` with ``element`` put just before ``</head>`` (unchanged without one, or without a head)."""
    at = html.find(b"</head>")
    return html if element is None or at < 0 or element in html else html[:at] + element + b"\n" + html[at:]


class PreloadCharts:
    """ASGI middleware: add :func:`link` to the app's HTML pages (status 200, ``text/html``, not yet encoded)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or any(
                part in scope.get("path", "") for part in SERVED_ELSEWHERE):
            await self.app(scope, receive, send)
            return
        # A page's HTML: Streamlit's own gzip layer would compress it (on every request); asked plainly, it comes
        # as text that gets the link, and GzipStatic outside compresses that once for all.
        scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]}
        start: dict | None = None
        chunks: list[bytes] = []

        async def capture(message):
            nonlocal start
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                html = headers.get(b"content-type", b"").split(b";")[0].strip() == b"text/html"
                if message["status"] == 200 and html and b"content-encoding" not in headers:
                    start = message
                    return
            elif start is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    body = with_link(b"".join(chunks), link())
                    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                    await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await self.app(scope, receive, capture)
