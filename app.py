"""Navigation, and a start hook for the server: every page lives in pages/, every computation in explorer/, and
the list of pages (file, title, icon, section) in one table, ``explorer.sitemap.table``.

Icons are Material Symbols (`:material/…:`), a font Streamlit ships, so they draw offline; the page icon is a
local image, since a `:material/…:` page icon makes the browser fetch the favicon from a font CDN.

`streamlit run app.py` reads this file twice over. It first imports it as the server's ASGI app (the `st.App` at
the bottom), whose start hook loads the default model in the background, so the first student does not wait for
torch and the weights; then every session runs it as a script (``__main__``), which builds the navigation.
The App also answers ``/_explorer/ready`` (503 until that preload has finished), for load balancers, and
``/_explorer/stats`` (the shared stores' sizes), and sends
Streamlit's JavaScript gzipped, each file compressed once (``explorer.web.compress``), its icon font cut to the
icons that can be drawn (``explorer.web.icons``), and pages that have the browser fetch the chart code at once
(``explorer.web.preload``).
"""
from explorer.serving import process

process.server_defaults()   # before anything imports numpy or torch: huge pages off, OpenMP's team size

import contextlib
import threading
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from explorer.web.compress import GzipStatic
from explorer.web.icons import SubsetIcons
from explorer.web.preload import PreloadCharts

FAVICON = Path(__file__).resolve().parent / "assets" / "favicon.png"
READY_PATH = "/_explorer/ready"
STATS_PATH = "/_explorer/stats"


def navigation() -> None:
    from explorer.sitemap.table import SECTIONS  # every page's file, title, icon and section: one table
    from explorer.ui import language  # the session's language, before any text is made
    from explorer.ui.live import (
        following,  # live mode: followers follow, the teacher's view is published after the page
        lesson_bar,  # a running lesson's bar, above the page
        own_lesson,  # "Add this view as a step", while building one's own lesson
    )
    from explorer.words.i18n import _

    language.register()   # _() reads the session's language from here on
    lang = language.choose()
    st.set_page_config(page_title=_("Attention explorer"), page_icon=str(FAVICON), layout="wide")
    nav = st.session_state.get("_nav_pages")
    if nav is None or nav[0] != lang:   # made once a session and language: st.Page resolves its file on the disk
        nav = st.session_state["_nav_pages"] = (lang, {
            _(section.title): [st.Page(p.file, title=_(p.title), icon=p.icon, default=p.default)
                               for p in section.pages] for section in SECTIONS})
    pages = nav[1]
    # st.navigation, but a following student's run is the teacher's page (run here, not loaded by the browser)
    page = following.navigation(pages, position=following.nav_position())
    language.keep_in_link()   # after following: a follower's address is the teacher's view with its own lang=
    language.picker()
    language.mark_page()   # <html lang>
    shown = lesson_bar.bar()   # may open the lesson's step instead (Next, Back, a lesson just started)
    own_lesson.builder_bar()
    following.run_page(page if shown else lesson_bar.Folded(page))   # the step's question not answered yet


PRELOADED = threading.Event()   # set when the start hook's preload has finished (loaded, or failed and logged)


def _preload() -> None:
    """The preloaded models (EXPLORER_PRELOAD), then every page's imports; only then is the replica ready."""
    try:
        from explorer.ui import cached  # imports torch: in this thread, not while the server starts

        cached.preload(cached.preload_names())
        _warm_pages()
    finally:
        PRELOADED.set()
    from explorer.model import loading

    loading.freeze_heap()   # the imports and models stay: the garbage collector stops walking them on every rerun


def _warm_pages() -> None:
    from explorer.sitemap.table import PAGES
    from explorer.ui import prefetch

    root = Path(__file__).resolve().parent
    prefetch.warm([root / "app.py", *(root / file for file in PAGES)])


def _gzip() -> None:
    from explorer.web import compress

    compress.warm()   # gzip Streamlit's bundles once, before the class's first visits ask for them


@contextlib.asynccontextmanager
async def preload_models(_app):
    """Server start: load the preloaded models (EXPLORER_PRELOAD) in a background thread, and meanwhile gzip
    the static files in another (zlib works outside the GIL, so on a second core)."""
    threading.Thread(target=_preload, name="explorer-preload", daemon=True).start()
    threading.Thread(target=_gzip, name="explorer-gzip", daemon=True).start()
    yield


async def ready(_request) -> PlainTextResponse:
    """GET /_explorer/ready: 200 "ready" once the preload has finished, 503 "loading" before. A load balancer
    checks this rather than Streamlit's /_stcore/health (up from the first second), so no student is sent to a
    replica that is still loading its model."""
    if PRELOADED.is_set():
        return PlainTextResponse("ready")
    return PlainTextResponse("loading", status_code=503)


async def stats(_request) -> JSONResponse:
    """GET /_explorer/stats: the sizes of this process's shared stores (the render store's views and bytes, the
    attention results'; under ``regions`` every cache region's entries, bytes, bound, hits and misses,
    ``serving.regions.report``; under ``keepers`` every shared job keeper's bound and entries, ``jobs.keepers.report``)
    and how many followers' runs drew the page or replayed it, for the benchmarks and an operator; no session's
    data."""
    from explorer.jobs import keepers
    from explorer.serving import regions
    from explorer.ui import cached, drawn_once
    from explorer.ui.live import replayed

    sizes = {name: {"bytes": store.size, "entries": len(store), "max_bytes": store.max_bytes}
             for name, store in (("render_store", drawn_once.STORE), ("results", cached.result_cache()))}
    # followers' runs: page drawn, replayed
    return JSONResponse({**sizes, "regions": regions.report(), "keepers": keepers.report(),
                         "followers": replayed.counts()})


if __name__ == "__main__":
    navigation()
else:
    app = st.App("app.py", lifespan=preload_models, routes=[Route(READY_PATH, ready), Route(STATS_PATH, stats)],
                 middleware=[Middleware(SubsetIcons), Middleware(GzipStatic), Middleware(PreloadCharts)])
