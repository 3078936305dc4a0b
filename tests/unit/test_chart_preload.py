"""explorer.web.preload: a page's HTML names Streamlit's chart chunk as a module to preload, so the browser
fetches and compiles plotly.js while the page's script runs (plain ASGI, hand-made answers)."""
from __future__ import annotations

import asyncio

from explorer.web import preload
from explorer.web.compress import static_dir

HTML = b"<html><head><title>x</title></head><body><div id='root'></div></body></html>"


def run(path: str, kind: bytes = b"text/html; charset=utf-8", body: bytes = HTML, status: int = 200,
        encoding: bytes | None = None, accept: bytes = b"gzip"):
    """(status, headers, body, the headers the inner app saw) of one GET through PreloadCharts."""
    seen = []

    async def app(scope, receive, send):
        seen.append(dict(scope["headers"]))
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
        headers += [(b"content-encoding", encoding)] if encoding else []
        await send({"type": "http.response.start", "status": status, "headers": headers})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:]})

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}
    scope = {"type": "http", "method": "GET", "path": path, "headers": [(b"accept-encoding", accept)]}
    asyncio.run(preload.PreloadCharts(app)(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:]), seen[0]


def test_the_link_names_the_installed_chart_chunk():
    link = preload.link()
    name = link.decode().split("static/js/")[1].split('"')[0]
    assert name.startswith("PlotlyChart.") and (static_dir() / "static" / "js" / name).is_file()
    assert link.startswith(b'<link rel="modulepreload" crossorigin href="./static/js/')   # as Streamlit's own


def test_a_page_gets_the_link_in_its_head_asked_without_gzip():
    status, headers, body, inner = run("/heatmaps")
    assert status == 200 and body == HTML.replace(b"</head>", preload.link() + b"\n</head>")
    assert int(headers[b"content-length"]) == len(body)
    assert b"accept-encoding" not in inner   # Streamlit's own gzip would hide the HTML (GzipStatic packs it once)


def test_other_answers_pass_untouched():
    for path, kind in (("/static/js/index.js", b"text/javascript"), ("/_stcore/host-config", b"application/json"),
                       ("/media/x.png", b"image/png")):
        status, headers, body, inner = run(path, kind=kind)
        assert body == HTML and inner[b"accept-encoding"] == b"gzip"
    assert run("/heatmaps", kind=b"application/json")[2] == HTML            # not HTML
    assert run("/heatmaps", status=404)[2] == HTML                            # not a page
    assert run("/heatmaps", encoding=b"gzip")[2] == HTML                      # already encoded: left alone


def test_with_link_puts_it_once_before_the_head_ends():
    assert preload.with_link(b"<head></head>", b"<L>") == b"<head><L>\n</head>"
    assert preload.with_link(b"<head><L>\n</head>", b"<L>") == b"<head><L>\n</head>"
    assert preload.with_link(b"<p>no head</p>", b"<L>") == b"<p>no head</p>"
    assert preload.with_link(b"<head></head>", None) == b"<head></head>"
