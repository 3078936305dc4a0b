"""A browser-less Streamlit client: speaks the app's websocket protocol (Streamlit 1.67) to load-test a server.

What a browser tab does, without drawing anything: open ``ws://host:port/_stcore/stream`` with the subprotocol
"streamlit", send a ``BackMsg.rerun_script`` (a ``ClientState``: the URL's query string, the page, the widget
values), and read ``ForwardMsg``s (new_session, page_info_changed, deltas, ...) until ``script_finished``.
A later edit is a rerun carrying the changed widget's value (``WidgetState``), as the browser sends it.
A fragment with ``run_every`` is rerun by the client, as Streamlit's frontend does: the server sends
``auto_rerun`` (interval, fragment id), the client then sends a ``rerun_script`` with that ``fragment_id`` and
``is_auto_rerun`` every interval, until ``stop_auto_rerun`` or the next full-app run (whose ``new_session`` names
no fragment) clears the timers.

Loopback only: ``Session`` refuses any other host.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

EARLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# element kinds whose proto has an ``id`` a rerun can address (the ones the app's pages use)
WIDGETS = ("text_area", "text_input", "slider", "checkbox", "selectbox", "number_input", "radio", "button",
           "button_group", "toggle", "multiselect", "download_button")


@dataclass
class Run:
    """One rerun: ``seconds`` from sending the BackMsg to the final script_finished (None when it timed out)."""
    seconds: float | None
    status: int | None = None          # ForwardMsg.ScriptFinishedStatus of the final run
    messages: int = 0
    bytes: int = 0
    exceptions: list[str] = field(default_factory=list)   # exception elements (st.exception or a traceback)
    warnings: int = 0                  # exception elements flagged is_warning
    page_not_found: bool = False
    url_writes: int = 0                # page_info_changed messages: the page wrote its query string
    texts: list[str] = field(default_factory=list)        # every element's text when the session keeps them

    @property
    def ok(self) -> bool:
        return self.seconds is not None and not self.exceptions


def element_text(element) -> str:
    """The user-visible strings of one element: markdown/heading/alert bodies, widget values, plotly JSON."""
    kind = element.WhichOneof("type")
    inner = getattr(element, kind) if kind else None
    if inner is None:
        return ""
    parts = []
    for name in ("body", "value", "spec", "label", "message", "text", "default"):
        if any(f.name == name for f in inner.DESCRIPTOR.fields):
            value = getattr(inner, name)
            if isinstance(value, str):
                parts.append(value)
    return "\n".join(parts)


class Session:
    """One simulated browser tab on ``page`` (the URL path, "" for the default page) of the app at ``url``.

    ``keep=True`` stores every element's text in each ``Run`` (tests); load runs leave it off.
    """

    def __init__(self, url: str, page: str = "heatmaps", keep: bool = False, timeout: float = 60,
                 on_element=None):
        parsed = urlparse(url)
        if parsed.hostname not in LOOPBACK:
            raise ValueError(f"loopback servers only, not {parsed.hostname!r}")
        self.ws_url = f"ws://{parsed.hostname}:{parsed.port}{parsed.path.rstrip('/')}/_stcore/stream"
        self.page, self.keep, self.timeout = page, keep, timeout
        self.query_string = ""          # as the server last set it (page_info_changed), sent back on reruns
        self.page_script_hash = ""      # the page the server ran last (navigation), sent on reruns
        self.widget_ids: dict[str, str] = {}   # user key (or label) -> widget id
        self.ws = None
        self._reader: asyncio.Task | None = None
        self._run: Run | None = None
        self._done: asyncio.Event | None = None
        self.closed_reason: str | None = None
        self.on_element = on_element    # called with every new element (also outside a rerun this client sent)
        self.auto_reruns: dict[str, tuple[float, asyncio.Task]] = {}   # fragment id -> (interval, timer)
        self.fragment_reruns = 0        # auto reruns sent

    async def connect(self) -> None:
        # proxy=None: never through an HTTP proxy from the environment; no compression, no client pings (a
        # browser sends neither); the server's pings are answered by the library
        self.ws = await connect(self.ws_url, subprotocols=["streamlit"], proxy=None, compression=None,
                                ping_interval=None, max_size=None, open_timeout=self.timeout,
                                user_agent_header="attention-explorer-ws-load")
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                self._handle(data)
        except Exception as err:   # connection lost: any waiting rerun ends as a timeout-like failure
            self.closed_reason = f"{type(err).__name__}: {err}"[:200]
        finally:
            self.closed_reason = self.closed_reason or "closed"
            self._stop_timers()
            if self._done is not None:
                self._done.set()

    def _handle(self, data: bytes) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(data)
        kind = msg.WhichOneof("type")
        run = self._run
        if run is not None:
            run.messages += 1
            run.bytes += len(data)
        if kind == "new_session" and not msg.metadata.run.fragment_ids:
            self._stop_timers()   # a full-app run: its fragments register their timers again
        elif kind == "auto_rerun":
            self._start_timer(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            self._stop_timers(msg.stop_auto_rerun.fragment_ids)
        elif kind == "navigation":   # the page st.navigation resolved (new_session may name app.py's hash)
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
            if run is not None:
                run.url_writes += 1
        elif kind == "page_not_found" and run is not None:
            run.page_not_found = True
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, run)
        elif kind == "script_finished" and msg.script_finished != EARLY and self._done is not None:
            if run is not None:
                run.status = msg.script_finished
            self._done.set()

    def _start_timer(self, fragment_id: str, interval: float) -> None:
        if not fragment_id or interval <= 0:
            return
        old = self.auto_reruns.get(fragment_id)
        if old is not None and old[0] == interval:
            return   # the frontend keeps a running timer with the same interval
        self._stop_timers([fragment_id])
        self.auto_reruns[fragment_id] = (interval, asyncio.get_running_loop().create_task(
            self._tick(fragment_id, interval)))

    def _stop_timers(self, fragment_ids=None) -> None:
        for fid in list(self.auto_reruns if fragment_ids is None else fragment_ids):
            entry = self.auto_reruns.pop(fid, None)
            if entry is not None:
                entry[1].cancel()

    async def _tick(self, fragment_id: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            if self._run is not None:   # a rerun this client waits for: its script_finished must stay its own
                continue
            back = BackMsg()
            state = back.rerun_script
            state.query_string, state.page_script_hash = self.query_string, self.page_script_hash
            state.fragment_id, state.is_auto_rerun = fragment_id, True
            try:
                await self.ws.send(back.SerializeToString())
            except Exception:
                return
            self.fragment_reruns += 1

    def _element(self, element, run: Run | None) -> None:
        kind = element.WhichOneof("type")
        if kind in WIDGETS:
            inner = getattr(element, kind)
            wid = inner.id
            key = wid.rsplit("-", 1)[-1] if wid.startswith("$$ID-") and wid.count("-") >= 2 else inner.label
            self.widget_ids[key] = wid
        if self.on_element is not None:
            self.on_element(element)
        if run is None:
            return
        if kind == "exception":
            if element.exception.is_warning:
                run.warnings += 1
            else:
                run.exceptions.append(f"{element.exception.type}: {element.exception.message}"[:300])
        if self.keep:
            run.texts.append(element_text(element))

    async def rerun(self, query: dict | str | None = None, widgets: list | None = None,
                    first: bool = False) -> Run:
        """Send one rerun_script and wait for its final script_finished (at most ``self.timeout`` s).

        ``query``: the URL's query string (dict or "a=b&c=d"); default: what the server last set.
        ``widgets``: WidgetState protos (changed values); ``first``: a page load (names the page by URL path).
        """
        if isinstance(query, dict):
            query = urlencode(query)
        back = BackMsg()
        state = back.rerun_script
        state.query_string = self.query_string if query is None else query
        if first or not self.page_script_hash:
            state.page_name = self.page
        else:
            state.page_script_hash = self.page_script_hash
        for w in widgets or ():
            state.widget_states.widgets.add().CopyFrom(w)
        self._run, self._done = Run(seconds=None), asyncio.Event()
        start = time.perf_counter()
        await self.ws.send(back.SerializeToString())
        try:
            await asyncio.wait_for(self._done.wait(), self.timeout)
            finished = self._run.status is not None
        except TimeoutError:
            finished = False
        run, self._run, self._done = self._run, None, None
        if finished:
            run.seconds = time.perf_counter() - start
        return run

    async def load(self, query: dict | str | None = None) -> Run:
        """Open the page with this query string, as a browser opening a link does."""
        return await self.rerun(query or "", first=True)

    async def set_text(self, value: str, key: str = "text") -> Run:
        """Type ``value`` into the text widget with this user key and submit it (a rerun with its new value)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid = self.widget_ids.get(key)
        if wid is None:
            raise KeyError(f"no widget with key {key!r} on this page yet (load the page first)")
        return await self.rerun(widgets=[WidgetState(id=wid, string_value=value)])

    async def closed(self, timeout: float = 30) -> str | None:
        """Wait until the connection has ended (the server closed it, or it was lost): its reason, or None when it
        is still open after ``timeout`` seconds."""
        if self._reader is not None:
            await asyncio.wait([self._reader], timeout=timeout)
        return self.closed_reason

    async def close(self) -> None:
        self._stop_timers()
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.wait([self._reader], timeout=5)

    async def __aenter__(self):
        await self.connect()
        return self

    async def __aexit__(self, *exc):
        await self.close()


async def one_page(url: str, query: dict | str, page: str = "heatmaps", keep: bool = True,
                   timeout: float = 60) -> Run:
    """Connect, load ``page`` with ``query``, wait for script_finished, close: one ``Run``."""
    async with Session(url, page, keep=keep, timeout=timeout) as s:
        return await s.load(query)
