"""The page tells the browser to fetch the chart code at once, and to run it once it is idle: an ASGI middleware
that adds two lines to its HTML.

Streamlit loads plotly.js (its ``PlotlyChart`` chunk: 4.7 MB of JavaScript, 1.4 MB gzipped) only when the first
chart of a page arrives, so on a first visit the browser waited for the page's script to run, then downloaded and
compiled plotly, and only then drew the first chart; at a cold start that came after the model had loaded.
A ``<link rel="modulepreload">`` for that chunk, next to Streamlit's own ones in the page's ``<head>``, starts the
download and the compiling while the page's script runs; Streamlit's own import of the chunk later finds it there
(the same URL: one download, one module). Pages without a chart fetch it too, once, for the pages that have one.

Fetched and compiled is not yet run: the chunk's module code (plotly.js setting itself up) still ran when the first
chart arrived, before that chart could be drawn (1.2 s between the figures leaving the server and the first chart
element, in one traced cold start). A small module script imports the chunk once the page has connected and the
browser is idle, which on a first visit is while the page's script runs or waits for the model; Streamlit's import
then finds the module ready. With the browser on a core of its own (as each student's is), a cold start's first
heatmap came 1.5-1.75 s sooner; where browser and server share two cores, and on a warm server, no change
(docs/benchmarks.md, session 13).
Plain ASGI; the HTML is Streamlit's ``index.html`` (``no-cache``), so the lines are in every page load.
"""
from __future__ import annotations

import functools

from explorer.web.compress import static_dir

CHUNK = "PlotlyChart.*.js"
SERVED_ELSEWHERE = ("/static/", "/_stcore/", "/media/", "/component/", "/_explorer/")   # never a page's HTML


READY_FLAG = "__explorerChartCode"   # window.__explorerChartCode = "ready" once the chunk's module has run


@functools.cache
def chunk() -> str | None:
    """The installed Streamlit's chart chunk as the page refers to it (``./static/js/PlotlyChart.….js``), or None."""
    folder = static_dir()
    found = sorted((folder / "static" / "js").glob(CHUNK)) if folder else []
    return f"./static/js/{found[0].name}" if found else None


def link() -> bytes | None:
    """The ``<link>`` element that fetches and compiles the chart chunk, or None when there is none."""
    url = chunk()
    return f'<link rel="modulepreload" crossorigin href="{url}">'.encode() if url else None


def run_when_idle() -> bytes | None:
    """The ``<script>`` that imports (runs) the chart chunk once the page is connected to the server and the
    browser is idle, or None. Not sooner: run while Streamlit's own code was still setting up, plotly.js's ~1 s (on
    a slow machine) delayed the page's connection. Connected is Streamlit's own ``data-test-connection-state``; if
    it never shows (another Streamlit), the import runs after 60 s all the same. A failed import is left for
    Streamlit's own, which reports it where the chart would be."""
    url = chunk()
    if not url:
        return None
    return ('<script type="module">const run = () => import("' + url + '").then(() => { window.' + READY_FLAG
            + ' = "ready"; }, () => {}); const later = window.requestIdleCallback ? f => requestIdleCallback(f, '
            '{timeout: 1000}) : f => setTimeout(f, 0); let looks = 0; const wait = setInterval(() => { if (++looks '
            '> 600 || document.querySelector(\'[data-testid="stApp"][data-test-connection-state="CONNECTED"]\')) '
            '{ clearInterval(wait); later(run); } }, 100);</script>').encode()


@functools.cache
def head() -> bytes | None:
    """What every page's ``<head>`` gets: :func:`link` and :func:`run_when_idle`."""
    parts = [part for part in (link(), run_when_idle()) if part]
    return b"\n".join(parts) or None


def with_link(html: bytes, element: bytes | None) -> bytes:
    """``html`` with ``element`` put just before ``</head>`` (unchanged without one, or without a head)."""
    at = html.find(b"</head>")
    return html if element is None or at < 0 or element in html else html[:at] + element + b"\n" + html[at:]


class PreloadCharts:
    """ASGI middleware: add :func:`head` to the app's HTML pages (status 200, ``text/html``, not yet encoded)."""

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
                    body = with_link(b"".join(chunks), head())
                    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                    await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await self.app(scope, receive, capture)
