"""Server start: app.py's st.App start hook loads the default model in the background (explorer.cached.preload)."""
import json
import logging
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

from chromium import Server  # the real `streamlit run app.py`

from explorer.examples import EXAMPLES
from explorer.model import registry
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


def ready(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url + "/_explorer/ready", timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_the_server_loads_the_default_model_before_any_browser_asks():
    """The model is loaded in the background from the start, and /_explorer/ready (what HAProxy checks) says
    "loading" with a 503 until it is, then "ready": never ready before the model is."""
    server = Server()
    try:
        log = Path(server.log.name)
        answers, deadline = [], time.monotonic() + 120
        while time.monotonic() < deadline:
            answers.append(ready(server.url))
            if answers[-1][0] == 200:
                loaded_when_ready = "loaded model" in log.read_text()
                break
            time.sleep(0.2)
        while time.monotonic() < deadline and "long-lived objects" not in log.read_text():
            time.sleep(0.2)   # then the start hook gzips the static files and freezes the heap
        text = log.read_text()
        with urllib.request.urlopen(server.url + "/_explorer/stats", timeout=5) as answer:
            stats = json.loads(answer.read())
    finally:
        server.stop()
    assert answers[-1] == (200, b"ready") and loaded_when_ready, (answers[-3:], text[-2000:])
    assert stats["results"]["entries"] >= 1 and stats["results"]["bytes"] > 0   # the preloaded first example
    assert stats["render_store"]["max_bytes"] == 64 * 2**20 and stats["render_store"]["entries"] == 0   # no page yet
    frozen = re.search(r"froze (\d+) long-lived objects", text)
    assert frozen and int(frozen.group(1)) > 100_000, text[-2000:]   # torch, transformers, Streamlit, the model
    assert set(answers[:-1]) <= {(503, b"loading")}, answers
    assert re.search(rf"loaded model {re.escape(registry.EMBEDDED_ENCODER)} on \w+ in", text), text[-2000:]
    assert "Traceback" not in text and "missing ScriptRunContext" not in text


def test_a_server_without_preload_is_ready_at_once():
    server = Server(env={"EXPLORER_PRELOAD": ""})
    try:
        deadline = time.monotonic() + 20
        while ready(server.url)[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ready(server.url) == (200, b"ready")
        assert "loaded model" not in Path(server.log.name).read_text()
    finally:
        server.stop()
