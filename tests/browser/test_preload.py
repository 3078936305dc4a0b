"""Server start: app.py's st.App start hook loads the default model in the background (explorer.cached.preload)."""
import logging
import re
import time
from pathlib import Path

from chromium import Server  # the real `streamlit run app.py`

from explorer import registry
from explorer.examples import EXAMPLES
from explorer.ui import cached

FIRST_EXAMPLE = next(iter(EXAMPLES.values()))


def test_preload_names_come_from_the_environment(monkeypatch):
    monkeypatch.delenv("EXPLORER_PRELOAD", raising=False)
    assert cached.preload_names() == [registry.EMBEDDED_ENCODER]
    monkeypatch.setenv("EXPLORER_PRELOAD", f" {registry.EMBEDDED_ENCODER} , {registry.EMBEDDED_DECODER},")
    assert cached.preload_names() == [registry.EMBEDDED_ENCODER, registry.EMBEDDED_DECODER]
    monkeypatch.setenv("EXPLORER_PRELOAD", "")
    assert cached.preload_names() == []


def test_preload_loads_the_model_and_its_first_example_once(tiny_folder):
    name = str(tiny_folder("bert"))
    before = cached.result_cache().misses
    cached.preload([name])
    assert cached.result_cache().misses == before + 1
    hits = cached.result_cache().hits
    result = cached.get_attention(name, FIRST_EXAMPLE)   # what the first page asks for: already there
    assert cached.result_cache().hits == hits + 1 and result.weights.shape[0] == 2
    assert cached.get_model(name) is cached.get_model(name)


def test_a_failing_preload_is_logged_not_raised(caplog):
    with caplog.at_level(logging.WARNING, logger="explorer"):
        cached.preload(["../../x"])
    assert any("preloading ../../x failed" in r.getMessage() for r in caplog.records)


def test_the_server_loads_the_default_model_before_any_browser_asks():
    server = Server()
    try:
        log = Path(server.log.name)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "loaded model" not in log.read_text():
            time.sleep(0.5)
        text = log.read_text()
    finally:
        server.stop()
    assert re.search(rf"loaded model {re.escape(registry.EMBEDDED_ENCODER)} on \w+ in", text), text[-2000:]
    assert "Traceback" not in text and "missing ScriptRunContext" not in text
