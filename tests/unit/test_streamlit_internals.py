"""Every private Streamlit name lives in one module, ``explorer/ui/live/streamlit_internals.py`` (``HOME``): this
test reads every file of explorer/, pages/, bench/ and app.py and fails on any other file that names one (but for the
named exceptions of ``EXCEPTIONS``, each with its reason) (in code, a string or a comment: a docstring that names an
internal is where the next use of it starts). The checker runs on this repository and, to show that it can fail, on
small trees that break it. That each internal still exists, with the signature the module calls it with, is the
contract (tests/streamlit_contract.py), run on a real server by tests/app/test_streamlit_contract.py; here, that
its check names what it finds missing, and that the docs' table of the private parts lists each one."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import streamlit_contract
from guards import stale_exceptions, uses_outside, whole_words, write_tree

ROOT = Path(__file__).resolve().parents[2]
HOME = "explorer/ui/live/streamlit_internals.py"
# what may not appear outside HOME: private attributes and methods of Streamlit's objects, the modules that hold
# them, and the functions that reach them
FORBIDDEN = {
    **whole_words("streamlit.runtime", "streamlit.web", "streamlit.proto", "streamlit.navigation",
                  "get_script_run_ctx", "SCRIPT_RUN_CONTEXT_ATTR_NAME", "_scriptrunner", "_client_state",
                  "request_rerun", "_call_soon_on_event_loop", "_script_thread", "ScriptRequestType", "pages_manager",
                  "PagesManager", "uses_pages_directory", "set_script_intent", "intended_page_script_hash",
                  "current_page_script_hash", "_script_hash", "_yield_callback", "SafeSessionState", "AppSession",
                  "streamlit.delta_generator_singletons", "streamlit.elements", "context_dg_stack",
                  "get_dg_singleton_instance", "TESTING_KEY", "run_with_active_hash", "register_widget",
                  "register_widget_from_metadata", "save_for_app_testing", "widget_ids_this_run",
                  "widget_user_keys_this_run", "media_file_mgr", "save_element_message", "save_block_message",
                  "save_media_data"),
    "_requests": r"\._requests\b",
    "StreamlitPage._page": r"""\._page\b|["']_page["']""",
    "Runtime.instance": r"\bRuntime\.(instance|exists)\b",
    "cache replay": r"\b(CACHE_RESOURCE_MESSAGE_REPLAY_CTX|calling_cached_function|_most_recent_messages|CachedResult|"
                    r"ElementMsgData|BlockMsgData|MediaMsgData|replay_cached_messages)\b",
    "st._main": r"\bst\._main\b|\._id\b",
    "message hand-off": r"\b(_enqueue_forward_msg|populate_hash_if_needed)\b|\._(enqueue|block)\b",
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
    return uses_outside(root, HOME, FORBIDDEN, EXCEPTIONS)


def test_no_private_streamlit_name_outside_the_internals_module():
    assert check_tree(ROOT) == []


def test_each_exception_is_still_used():
    """An exception whose file no longer needs it goes, so the list stays the list of what is used."""
    assert stale_exceptions(ROOT, FORBIDDEN, EXCEPTIONS) == []


def test_the_internals_module_is_where_they_are():
    """The guard guards something: the names it forbids elsewhere are the ones the module uses."""
    text = (ROOT / HOME).read_text(encoding="utf-8")
    unused = [name for name, pattern in FORBIDDEN.items()
              if not re.search(pattern, text) and name not in {"streamlit.web"}]
    assert unused == []


def private_parts_named_in_the_docs() -> list[str]:
    """Each private name the guard forbids or the contract checks that the docs' table "Streamlit's private parts"
    (docs/architecture.md) does not name."""
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## Streamlit's private parts"):]
    section = section[:section.index("\n## ", 3)]
    names = {n for n in FORBIDDEN if re.fullmatch(r"[\w.]+", n) and not n.startswith("streamlit.")}
    names |= {key.removesuffix(".__init__").split(".")[-1] for key in streamlit_contract.SIGNATURES}
    return sorted(n for n in names if n not in section)


def test_the_docs_table_names_each_internal():
    """The table says what each part is for and why no public API serves: a part the module starts to use, or the
    contract to check, without its row fails here."""
    assert private_parts_named_in_the_docs() == []


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
