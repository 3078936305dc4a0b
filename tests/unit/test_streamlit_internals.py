"""Every private Streamlit name lives in four modules of ``explorer/ui/live/`` (``HOMES``: the running script's
helpers, the page recorder, the page replay, and the contract that lists every name): this test reads every file of
explorer/, pages/, bench/ and app.py and fails on any other file that names one (but for the named
exceptions of ``EXCEPTIONS``, each with its reason) (in code, a string or a
comment: a docstring that names an internal is where the next use of it starts). The checker runs on this
repository and, to show that it can fail, on small trees that break it. That each internal still exists, with the
signature the module calls it with, is tests/app/test_streamlit_contract.py, on a real server; here, that the
module's own check names what it finds missing."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from guards import stale_exceptions, uses_outside, whole_words, write_tree

from explorer.ui.live import page_recorder, page_replay, streamlit_contract
from explorer.ui.live import streamlit_internals as internals

ROOT = Path(__file__).resolve().parents[2]
HOMES = tuple(f"explorer/ui/live/{name}.py" for name in ("streamlit_internals", "page_recorder", "page_replay",
                                                           "streamlit_contract"))
HOME = HOMES[0]
# what may not appear outside HOME: private attributes and methods of Streamlit's objects, the modules that hold
# them, and the functions that reach them
FORBIDDEN = {
    **whole_words("streamlit.runtime", "streamlit.web", "streamlit.proto", "streamlit.navigation",
                  "get_script_run_ctx", "SCRIPT_RUN_CONTEXT_ATTR_NAME", "_scriptrunner", "_client_state",
                  "request_rerun", "_call_soon_on_event_loop", "_script_thread", "ScriptRequestType", "pages_manager",
                  "PagesManager", "uses_pages_directory", "set_script_intent", "intended_page_script_hash",
                  "current_page_script_hash", "_script_hash", "_yield_callback", "SafeSessionState", "AppSession"),
    "_requests": r"\._requests\b",
    "StreamlitPage._page": r"""\._page\b|["']_page["']""",
    "Runtime.instance": r"\bRuntime\.(instance|exists)\b",
    "cache replay": r"\b(CACHE_RESOURCE_MESSAGE_REPLAY_CTX|calling_cached_function|_most_recent_messages|CachedResult|"
                    r"ElementMsgData|replay_cached_messages)\b",
    "st._main": r"\bst\._main\b|\._id\b",
    "message hand-off": r"\b(_enqueue_forward_msg|populate_hash_if_needed)\b|\bctx\._enqueue\b",
}

# the only files outside HOME that may name one of FORBIDDEN, the name, and why: neither is part of the app
EXCEPTIONS = {
    "bench/wsclient.py": {
        "streamlit.proto": "a browser-less client speaks Streamlit's websocket protocol, whose messages are these "
                           "protobuf classes (BackMsg, ForwardMsg, WidgetState); tests/integration/test_wsclient.py "
                           "checks the client against a real server, so a protocol change fails there"},
    "bench/server_side.py": {
        "streamlit.runtime": "rows 1 and 2 and the tests' AppTest tier give AppTest's script runners one shared "
                             "ScriptCache (apptest_as_a_server), as a server keeps a page's bytecode, and floors.py "
                             "counts their script runs' CPU (thread_cpu); AppTest only, never a served app, and the "
                             "benchmark smoke (tests/integration/test_bench_smoke.py) runs both in CI"},
}


def check_tree(root: Path) -> list[str]:
    """Each use of a private Streamlit name outside HOME and EXCEPTIONS in the tree at ``root``: "path:line:
    name"."""
    return uses_outside(root, HOMES, FORBIDDEN, EXCEPTIONS)


def test_no_private_streamlit_name_outside_the_internals_module():
    assert check_tree(ROOT) == []


def test_each_exception_is_still_used():
    """An exception whose file no longer needs it goes, so the list stays the list of what is used."""
    assert stale_exceptions(ROOT, FORBIDDEN, EXCEPTIONS) == []


def test_the_internals_module_is_where_they_are():
    """The guard guards something: the names it forbids elsewhere are the ones the module uses."""
    text = "".join((ROOT / home).read_text(encoding="utf-8") for home in HOMES)
    unused = [name for name, pattern in FORBIDDEN.items()
              if not re.search(pattern, text) and name not in {"streamlit.web"}]
    assert unused == []


def test_the_docstring_lists_each_internal_it_uses():
    doc = "".join(module.__doc__ for module in (internals, page_recorder, page_replay))
    for name in ("get_script_run_ctx", "pages_manager", "intended_page_script_hash", "set_script_intent",
                 "_script_hash", "uses_pages_directory", "RerunException", "StopException", "_yield_callback",
                 "request_rerun", "_client_state", "_scriptrunner", "_call_soon_on_event_loop", "ScriptRequestType",
                 "SCRIPT_RUN_CONTEXT_ATTR_NAME", "AppSession", "populate_hash_if_needed", "_enqueue_forward_msg"):
        assert name in doc, name


@pytest.mark.parametrize("files, expected", [
    ({"explorer/ui/live/push.py": "def f(app):\n    return app._scriptrunner\n"},
     ["explorer/ui/live/push.py:2: _scriptrunner"]),
    ({"explorer/ui/widgets.py": "from streamlit.runtime.pages_manager import PagesManager\n"},
     ["explorer/ui/widgets.py:1: streamlit.runtime", "explorer/ui/widgets.py:1: pages_manager",
      "explorer/ui/widgets.py:1: PagesManager"]),
    ({"pages/p.py": "x = 1\n\n\nctx.pages_manager.get_pages()\n"}, ["pages/p.py:4: pages_manager"]),
    ({"app.py": "object.__setattr__(s, '_yield_callback', f)\n"}, ["app.py:1: _yield_callback"]),
    ({"explorer/ui/params.py": "s.request_rerun(c)  # and s._client_state\n"},
     ["explorer/ui/params.py:1: _client_state", "explorer/ui/params.py:1: request_rerun"]),
    ({"explorer/ui/widgets.py": "PagesManager.uses_pages_directory = False\n"},
     ["explorer/ui/widgets.py:1: PagesManager", "explorer/ui/widgets.py:1: uses_pages_directory"]),
    ({"explorer/ui/f.py": "getattr(page, \"_page\", None)\n"}, ["explorer/ui/f.py:1: StreamlitPage._page"]),
    ({HOME: "app._scriptrunner._requests\n",
      "explorer/ui/f.py": "on_page(); _page_name(x); streamlit.stop()\n"}, []),
    ({"bench/ws_load.py": "from streamlit.proto.BackMsg_pb2 import BackMsg\n"},
     ["bench/ws_load.py:1: streamlit.proto"]),
    ({"bench/wsclient.py": "from streamlit.proto.BackMsg_pb2 import BackMsg\nx = get_script_run_ctx()\n"},
     ["bench/wsclient.py:2: get_script_run_ctx"]),   # an exception covers its own name only
])
def test_the_checker_finds_each_use(tmp_path, files, expected):
    assert sorted(check_tree(write_tree(tmp_path, files))) == sorted(expected)


def test_the_module_check_names_a_missing_or_changed_internal(monkeypatch):
    """``problems`` (what the contract test runs on a real server) says which internal broke, by name."""
    assert streamlit_contract.problems() == []
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.pages_manager import PagesManager

    def request_rerun(self, client_state, reason):   # a new required parameter
        pass
    monkeypatch.setattr(AppSession, "request_rerun", request_rerun)
    monkeypatch.delattr(PagesManager, "set_script_intent")
    found = streamlit_contract.problems()
    assert any(p.startswith("AppSession.request_rerun changed its signature") for p in found), found
    assert "PagesManager.set_script_intent is missing" in found
    assert len(found) == 2
    assert inspect.signature(request_rerun)   # (the stand-in is a real function: only its parameters differ)


def test_a_stale_exception_is_found(tmp_path):
    tree = write_tree(tmp_path, {"bench/wsclient.py": "import json\n",
                            "bench/server_side.py": "from streamlit.runtime.scriptrunner import x\n"})
    assert stale_exceptions(tree, FORBIDDEN, EXCEPTIONS) == ["bench/wsclient.py: streamlit.proto"]
