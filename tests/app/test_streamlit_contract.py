"""The private Streamlit names the app relies on (``explorer.ui.live.streamlit_internals``, listed in
tests/streamlit_contract.py) hold on the installed Streamlit, checked where they matter: inside a session of a real
``streamlit run`` server (AppTest's runtime is a mock with no AppSession, which is why the unit tests of ``push``
drive a fake one). A browser-less client (bench/wsclient.py) opens one session of a tiny app; the app runs each
internal through the module's own functions and writes what it saw to a file. Each failure names the internal. An
upgrade of Streamlit that moves one of them fails here, not in a class."""
from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from chromium import ROOT, Server

from bench.wsclient import Session

APP = '''
import json, os, time
from pathlib import Path

import streamlit as st

import streamlit_contract   # tests/streamlit_contract.py
from explorer.ui.live import streamlit_internals as internals

OUT = Path(os.environ["CONTRACT_OUT"])   # a folder: one report per run, so two runs never write one file
run = st.session_state.get("run", 0) + 1
st.session_state["run"] = run
seen = {}


def save():   # whole or not at all: the test may read it while this run writes it
    part = OUT / f"{run}.part"
    part.write_text(json.dumps(seen))
    os.replace(part, OUT / f"{run}.json")


seen["problems"] = streamlit_contract.problems(live=True)
seen["session"] = internals.session_id()
seen["main"] = str(internals.main_script_path())
seen["folder mode left"] = internals.leave_folder_navigation()   # a pages/ folder: on until st.navigation
one, two = st.Page("pages/one.py", title="One", default=True), st.Page("pages/two.py", title="Two")
seen["page_file"] = str(internals.page_file(two))
seen["intended"] = internals.intended_page()
internals.run_instead(two)                     # the browser asked for the default page
chosen = st.navigation([one, two])
seen["run_instead"] = internals.page_hash(chosen) == internals.page_hash(two) != internals.page_hash(one)
seen["running_page"] = Path(internals.running_page().get("script_path", "")).name
seen["pages"] = sorted(Path(info["script_path"]).name for info in internals.pages())
ctx = internals.script_context()
state = internals.latest_client_state(internals.app_session(ctx.session_id))
seen["latest_client_state"] = [state.query_string, state.page_script_hash] == [ctx.query_string,
                                                                                ctx.page_script_hash]
seen["query_string"] = state.query_string
seen["runs_here"] = internals.runs_here()
save()
if run == 1:   # the server asks for a rerun of this session, as the class watcher does from its thread
    seen["rerun_session"] = internals.rerun_session(ctx.session_id)
    save()
    for tick in range(200):   # each write is a point where the requested rerun stops this run
        st.session_state["tick"] = tick
        time.sleep(0.05)
    seen["not stopped by the rerun"] = True
    save()
else:
    try:
        st.stop()
    except internals.StopException:
        seen["st.stop raised"] = True
    with internals.stops_paused():
        st.session_state["after"] = 1   # no stop raised again in here
        seen["stops_paused"] = True
        seen["runs_here after stop"] = internals.runs_here()
    save()
    try:
        st.session_state["after"] = 2
    except internals.StopException:
        seen["stop raised again outside"] = True
        save()
        raise
'''


def test_the_internals_hold_in_a_real_servers_session(tmp_path):
    (tmp_path / "pages").mkdir()
    for name in ("one", "two"):
        (tmp_path / "pages" / f"{name}.py").write_text(f"import streamlit as st\nst.write({name!r})\n")
    (tmp_path / "contract_app.py").write_text(APP)
    out = tmp_path / "report"
    out.mkdir()
    path = os.pathsep.join([str(ROOT), str(ROOT / "tests")])   # the app imports the contract from tests/
    server = Server(env={"CONTRACT_OUT": str(out), "PYTHONPATH": path}, log_prefix="contract",
                    script="contract_app.py", cwd=tmp_path)
    try:
        async def visit():
            async with Session(server.url, page="", timeout=120) as session:
                await session.load("probe=1")
                # a wait, not a measure: the second run arrives in about a second on an idle machine
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and "stop raised again outside" not in _report(out).get("2", {}):
                    await asyncio.sleep(0.1)
        asyncio.run(visit())
    finally:
        server.stop()
    report = _report(out)
    first, second = report.get("1", {}), report.get("2", {})
    assert first.get("problems") == [], first.get("problems")
    assert first.get("rerun_session") is True and second, (
        "AppSession.request_rerun / _call_soon_on_event_loop: the server's rerun never ran")
    assert second.get("problems") == [], second.get("problems")
    assert first["session"] and first["session"] == second["session"], "get_script_run_ctx: session_id"
    assert first["main"] == str(tmp_path / "contract_app.py"), "ScriptRunContext.main_script_path"
    assert first["folder mode left"] is True and second["folder mode left"] is False, (
        "PagesManager.uses_pages_directory")
    assert first["page_file"] == str(tmp_path / "pages" / "two.py"), "StreamlitPage._page"
    assert first["run_instead"] and first["running_page"] == "two.py", (
        "pages_manager.set_script_intent / current_page_script_hash / StreamlitPage._script_hash")
    assert first["intended"] == "" or first["intended"] is None, "pages_manager.intended_page_script_hash"
    assert first["pages"] == ["one.py", "two.py"], "pages_manager.get_pages"
    assert first["latest_client_state"] and first["query_string"] == "probe=1", (
        "AppSession._client_state / _scriptrunner._script_thread / SCRIPT_RUN_CONTEXT_ATTR_NAME")
    assert first["runs_here"] and second["runs_here"], "AppSession._scriptrunner._script_thread"
    assert "not stopped by the rerun" not in first, (
        "AppSession.request_rerun / _call_soon_on_event_loop: the server's rerun did not stop the run")
    assert second.get("st.stop raised"), "StopException"
    assert second.get("stops_paused") and second.get("runs_here after stop"), "SafeSessionState._yield_callback"
    assert second.get("stop raised again outside"), "SafeSessionState._yield_callback was not put back"
    assert "3" not in report   # one server-started rerun: nothing asked for another


def _report(folder: Path) -> dict:
    """{run number: what that run saw}, from the runs' reports in ``folder``."""
    return {path.stem: json.loads(path.read_text()) for path in folder.glob("*.json")}
