"""The browser-less websocket client (bench/wsclient.py) against a real `streamlit run app.py` server.

The heatmap's plotly JSON holds the token labels, so a marker word found there proves the server ran the page on
the text this client sent (from the link's query string, or typed into the text area afterwards).
"""
import asyncio

import pytest
from chromium import Server
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.ws_load import idle_cpu, make_text, proc_cpu
from bench.wsclient import Session

ENCODER = "all-MiniLM-L6-v2"
SUCCESS = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")


@pytest.fixture(scope="module")
def server():
    """A server of this module's own: the idle test measures its CPU, which another module's leftover work (a map
    still being drawn for a page already left) must not add to."""
    srv = Server()
    yield srv
    srv.stop()


def figures(run) -> list[str]:
    """The plotly specs among the texts of a run's elements."""
    return [t for t in run.texts if '"data"' in t and '"layout"' in t]


def shows(run, word: str) -> bool:
    return any(f'"{word}"' in f for f in figures(run))   # a token label, quoted in the JSON


def test_link_and_typed_text_reach_the_heatmap(server):
    async def go():
        async with Session(server.url, keep=True, timeout=180) as s:   # the first load may load the model
            first = await s.load({"model": ENCODER, "text": "The zebra crossed the old street.", "layer": "2"})
            widgets = dict(s.widget_ids)
            query = s.query_string
            typed = await s.set_text("The violin played near the river.")
            return first, widgets, query, typed, s.query_string
    first, widgets, query, typed, query_after = asyncio.run(go())
    assert first.ok and first.status == SUCCESS and not first.page_not_found
    assert len(figures(first)) >= 3 and shows(first, "zebra") and not shows(first, "violin")
    assert {"text", "layer", "head", "model"} <= set(widgets) and widgets["text"].endswith("-text")
    assert "layer=2" in query and "zebra" in query          # the page wrote the URL back, as a browser sees it
    assert typed.ok and typed.status == SUCCESS
    assert shows(typed, "violin") and not shows(typed, "zebra")
    assert "violin" in query_after and "layer=2" in query_after   # the rest of the view stayed as linked
    assert 0 < typed.seconds < 60 and typed.bytes > 1000


def test_a_rerun_writes_the_link_only_where_it_changed(server):
    """Streamlit sends the whole query string on every write and the browser re-renders the app for each: the
    heatmap page's six parameters used to cost six such messages on every rerun (explorer.ui.params)."""
    async def go():
        async with Session(server.url, keep=False, timeout=180) as s:
            first = await s.load({"model": ENCODER, "text": "The zebra crossed the old street."})
            same = await s.rerun()
            typed = await s.set_text("The violin played near the zebra.")
            return first, same, typed, s.query_string
    first, same, typed, query = asyncio.run(go())
    assert first.ok and same.ok and typed.ok
    assert first.url_writes >= 1 and same.url_writes == 0
    assert typed.url_writes == 1 and "violin" in query and "layer=0" in query


def test_two_sessions_get_their_own_texts(server):
    async def pair(a: str, b: str):
        async with Session(server.url, keep=True, timeout=180) as s1, Session(server.url, keep=True,
                                                                              timeout=180) as s2:
            r1, r2 = await asyncio.gather(s1.load({"model": ENCODER, "text": f"The {a} sat by the door."}),
                                          s2.load({"model": ENCODER, "text": f"The {b} sat by the door."}))
            e1, e2 = await asyncio.gather(s1.set_text(f"A small {b} and a cat."),
                                          s2.set_text(f"A small {a} and a dog."))
            return r1, r2, e1, e2
    r1, r2, e1, e2 = asyncio.run(pair("harbor", "castle"))
    assert all(r.ok for r in (r1, r2, e1, e2))
    assert shows(r1, "harbor") and not shows(r1, "castle")
    assert shows(r2, "castle") and not shows(r2, "harbor")
    # swapped words on the edit: each session sees only what it typed
    assert shows(e1, "castle") and shows(e1, "cat") and not shows(e1, "dog") and not shows(e1, "harbor")
    assert shows(e2, "harbor") and shows(e2, "dog") and not shows(e2, "cat") and not shows(e2, "castle")


def test_unknown_page_and_garbage_query_do_not_crash(server):
    async def go():
        out = {}
        async with Session(server.url, page="no_such_page", keep=True, timeout=180) as s:
            out["page"] = await s.load("model=%%%&&&===&layer=&text")
        async with Session(server.url, keep=True, timeout=180) as s:
            out["model"] = await s.load("model=not%2Fa%2Fmodel%00&text=%FF%FE&x=%%")
        async with Session(server.url, keep=True, timeout=180) as s:
            out["garbage"] = await s.load(f"model={ENCODER}&layer=abc&head=-5&query=999&part=%FF%FE&x=%%")
            # a frame that is no BackMsg closes this connection only
            await s.ws.send(b"\xff\x00garbage")
            out["closed"] = await s.closed(timeout=30)   # the server's answer: it closes the connection
        async with Session(server.url, keep=True, timeout=180) as s:
            out["after"] = await s.load({"model": ENCODER, "text": "The rocket is still here."})
        return out
    out = asyncio.run(go())
    assert out["page"].ok and out["page"].page_not_found        # the default page ran instead, no exception
    model = out["model"]    # no such model: the page says so and stops, no traceback
    assert model.ok and model.status == SUCCESS and not figures(model)
    assert any("is not available" in t for t in model.texts)
    garbage = out["garbage"]
    assert garbage.ok and garbage.status == SUCCESS and not garbage.page_not_found and len(figures(garbage)) >= 3
    notes = "\n".join(garbage.texts)    # the page's own link notes, escaped for markdown
    assert "is not a number" in notes and "Head \\-5 is out of range" in notes and "position 999" in notes
    assert out["closed"] is not None
    assert out["after"].ok and shows(out["after"], "rocket")   # the server still serves new sessions


def test_idle_sessions_cost_little_server_cpu(server):
    before = proc_cpu(server.proc.pid)
    r = asyncio.run(idle_cpu(server.url, server.proc.pid, n=3, seconds=4, baseline=False,
                             query={"model": ENCODER, "text": "The idle class waits."}))
    assert r["errors"] == [] and r["alive"] == 3
    assert proc_cpu(server.proc.pid) > before       # the loads themselves were counted by /proc
    assert 0 <= r["cpu_s"] < 2                       # 3 connected, idle sessions for 4 s: next to nothing
    assert r["per_session_minute"] == r["cpu_s"] / 3 / (4 / 60)


def test_make_text_is_new_every_time():
    import random
    rng = random.Random(0)
    texts = {make_text(rng, "zebra") for _ in range(50)}
    assert len(texts) == 50 and all(t.startswith("The zebra ") and len(t.split()) == 30 for t in texts)
