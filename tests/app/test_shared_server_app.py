"""Shared-server wiring in the app: a link asks before loading a model nobody has loaded, and forward passes go
through one fair queue (a result already stored skips it; two sessions are served in the order they asked)."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from pagetest import open_page
from streamlit.testing.v1 import AppTest

from explorer.jobs.worker import ModelWorker
from explorer.model import loading, registry
from explorer.serving import local_folders, policy
from explorer.serving.fairqueue import FairQueue
from explorer.ui import cached, linkask
from explorer.ui.live import streamlit_internals as internals

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "tests" / "unit" / "hub_metadata"
ENCODER = registry.EMBEDDED_ENCODER


def seen(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def heatmaps(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "heatmaps.py"), default_timeout=240)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def asked(at: AppTest) -> list[str]:
    return [seen(m.value).removeprefix(":material/link: ") for m in at.markdown if "This link asks for" in m.value]


@pytest.fixture
def worker(monkeypatch):
    """A fresh model worker whose loads are recorded (the embedded encoder loads for real)."""
    loads = []
    fresh = ModelWorker(loader=lambda spec, **k: loads.append(spec.name) or loading.load_model(spec, **k))
    monkeypatch.setattr(cached, "WORKER", fresh)
    linkask._sizes.clear()
    yield loads
    linkask._sizes.clear()


# ---------------------------------------------------------------------------------------------- links ask first

def test_a_link_to_a_hub_model_asks_and_loads_nothing_until_answered(worker):
    at = heatmaps(model="roberta-base")
    assert not at.exception
    assert asked(at) == ["This link asks for roberta-base from the hub. Its size is unknown: the hub cannot be "
                         "reached from this server, so it loads only if it is already in this server's cache. "
                         "Load it?"]
    assert at.selectbox(key="model").value == ENCODER and at.get("plotly_chart")   # the page works meanwhile
    assert "roberta-base" not in worker and at.query_params["model"] == "roberta-base"
    at.button(key="model_ask_stay").click().run()
    assert not asked(at) and at.selectbox(key="model").value == ENCODER
    assert at.query_params["model"] == ENCODER and "roberta-base" not in worker
    at.run()
    assert not asked(at)                                                          # answered once, for good


def test_load_it_loads_the_model(worker):
    at = heatmaps(model="roberta-base")
    at.button(key="model_ask_load").click().run()
    assert not asked(at) and at.selectbox(key="model").value == "roberta-base"
    assert "roberta-base" in worker                                              # tried (offline: fails)
    assert any("no network connection" in seen(w.value) for w in at.warning)


def test_online_the_question_gives_the_download_size(worker, monkeypatch):
    """The online path on recorded metadata (no hub here): roberta-base's files sum to 503 MB."""
    monkeypatch.setattr(loading, "hub_reachable", lambda *a, **k: True)
    monkeypatch.setattr(policy, "fetch_metadata", lambda name, *a, **k: json.loads((HUB / f"{name}.json").read_text()))
    at = heatmaps(model="roberta-base")
    assert asked(at) == ["This link asks for roberta-base from the hub, 503 MB. Load it?"]
    assert at.button(key="model_ask_stay").label == f"Stay on {ENCODER}"


def test_embedded_and_loaded_models_open_at_once(worker, tiny_folder):
    at = heatmaps(model=registry.EMBEDDED_DECODER)
    assert not asked(at) and at.selectbox(key="model").value == registry.EMBEDDED_DECODER
    folder = str(tiny_folder("bert"))
    at = heatmaps(model=folder)
    assert asked(at) == [f"This link asks for the model folder {Path(folder).resolve()} on this server. Load it?"]
    cached.WORKER.get(folder)
    at = heatmaps(model=folder)
    assert not asked(at) and at.text_input(key="model_other").value == folder and at.get("plotly_chart")


def test_a_link_says_the_models_family_and_what_works_before_loading(worker, tiny_folder):
    """Read from the folder's config.json alone (a hub id's config comes from the hub, a few kB, no weights)."""
    folder = str(tiny_folder("llama"))
    at = heatmaps(model=folder)
    captions = [seen(c.value) for c in at.caption]
    assert any(c.startswith("Llama (decoder): attention weights, scores and fidelity, head knockout") and
               c.endswith("six explanations work here.") for c in captions), captions
    assert folder not in worker


def test_a_typed_folder_says_its_family_and_what_works(worker, tiny_folder):
    from explorer.ui.pickers import OTHER
    folder = str(tiny_folder("t5"))
    at = heatmaps()
    at.selectbox(key="model").set_value(OTHER).run()
    at.text_input(key="model_other").input(folder).run()
    captions = [seen(c.value) for c in at.caption]
    assert any(c.startswith("T5 (encoder-decoder): attention weights, scores and fidelity work here. T5 is an "
                            "encoder-decoder") for c in captions), captions


def test_a_path_while_local_folders_are_off_gets_the_one_message_not_a_question(worker, monkeypatch):
    monkeypatch.delenv("EXPLORER_ALLOW_LOCAL")
    at = heatmaps(model="/etc")
    assert not asked(at) and not at.exception
    assert any(local_folders.LOCAL_OFF in seen(w.value) for w in at.warning)


# ---------------------------------------------------------------------------------------------- the forward queue

@pytest.fixture
def queue(monkeypatch, tiny_loaded):
    """A one-worker queue, the tiny bert as the model, and every forward pass recorded by its text."""
    fresh = FairQueue(workers=1, name="test-forward")
    monkeypatch.setattr(cached, "FORWARDS", fresh)
    monkeypatch.setattr(cached, "get_model", lambda name: tiny_loaded("bert"))
    computed, real = [], cached.extract
    monkeypatch.setattr(cached, "extract", lambda loaded, text, target=None: computed.append(text) or
                        real(loaded, text, target))
    cached.result_cache().clear()
    yield fresh, computed
    fresh.shutdown()
    cached.result_cache().clear()


def test_a_stored_result_skips_the_queue(queue, monkeypatch):
    fresh, computed = queue
    submits = []
    real = fresh.submit
    monkeypatch.setattr(fresh, "submit", lambda *a: submits.append(a[:2]) or real(*a))
    first = cached.get_attention("tiny", "the cat sat")
    assert submits == [("server", ("tiny", "the cat sat", None))] and computed == ["the cat sat"]
    assert cached.get_attention("tiny", "the cat sat") is first
    assert len(submits) == 1 and computed == ["the cat sat"]


def test_two_sessions_are_served_in_the_order_they_asked(queue, monkeypatch):
    fresh, computed = queue
    # each thread plays one browser session (the page's script thread); st.empty() then runs in bare mode
    monkeypatch.setattr(internals, "script_context",
                        lambda: SimpleNamespace(session_id=threading.current_thread().name))
    release = threading.Event()
    blocker = fresh.submit("teacher", None, lambda: release.wait(10))
    results = {}

    def ask(text):
        results[text] = cached.get_attention("tiny", text)

    sessions = [threading.Thread(target=ask, args=(t,), name=f"session-{t}") for t in ("second one", "third one")]
    try:
        for i, thread in enumerate(sessions):
            thread.start()
            for _ in range(500):
                if fresh.waiting() == i + 1:
                    break
                threading.Event().wait(0.01)
        assert fresh.waiting() == 2 and computed == []
    finally:
        release.set()
        for thread in sessions:
            thread.join(30)
    blocker.result(5)
    assert computed == ["second one", "third one"] and set(results) == {"second one", "third one"}


def test_a_waiting_session_is_told_its_place_when_it_changes_not_at_every_look(queue, monkeypatch):
    """Each caption is a message to that browser, and a full server has hundreds of sessions waiting: the note is
    written again only when its words change (ws_load at 360 sessions: p95 8.5-9.1 s -> 4.4-4.9 s)."""
    fresh, computed = queue
    monkeypatch.setattr(internals, "script_context", lambda: SimpleNamespace(session_id="a"))
    monkeypatch.setattr(cached, "NOTE_EVERY", 0.02)
    notes = []

    class Note:   # what st.empty() gives a page: the note's own slot
        def caption(self, text):
            notes.append(text)

        def empty(self):
            notes.append(None)

    monkeypatch.setattr(cached.st, "empty", Note)
    release = threading.Event()
    blocker = fresh.submit("teacher", None, lambda: release.wait(10))
    asker = threading.Thread(target=lambda: cached.get_attention("tiny", "a waiting text"))
    asker.start()
    try:
        for _ in range(500):   # the session has looked at its place a good ten times
            if fresh.waiting() == 1 and notes:
                break
            threading.Event().wait(0.01)
        threading.Event().wait(0.3)
        assert notes == ["Waiting for 1 other…"]
    finally:
        release.set()
        asker.join(30)
    blocker.result(5)
    assert computed == ["a waiting text"] and notes[-1] is None   # the note is cleared once the result is in
    assert all(a != b for a, b in zip(notes, notes[1:]))


@pytest.mark.parametrize("page, params, expected", [
    ("lab_masks.py", {}, ("padding", "I love cats.")),
    ("lab_permutation.py", {}, ("permutation", "dog bites man", 2, 1, 0)),
    ("heatmaps.py", {"weighting": "value", "text": "a text for the value sizes"},
     ("value size", ENCODER, "a text for the value sizes")),
])
def test_the_labs_own_forward_passes_take_the_queue(page, params, expected, monkeypatch):
    """The labs that run a real model themselves (padding, permutation) and the value sizes queue like the
    heatmaps do: each such forward is one submit to the server's forward queue."""
    fresh = FairQueue(workers=1, name="test-forward")
    submits, real = [], fresh.submit
    monkeypatch.setattr(fresh, "submit", lambda *a: submits.append(a[1]) or real(*a))
    monkeypatch.setattr(cached, "FORWARDS", fresh)
    try:
        open_page(f"pages/{page}", **params)
    finally:
        fresh.shutdown()
    assert [k[:len(expected)] for k in submits if k[0] == expected[0]] == [expected], submits


def test_both_forward_paths_obey_the_one_setting(monkeypatch):
    """The heatmaps' forward passes (``cached.forward``) and a generation's steps (``generation_run``) switch
    together: with the queue off, neither submits to it."""
    from explorer.ui.views import generation_run

    submitted = []
    monkeypatch.setattr(cached.FORWARDS, "submit", lambda *a: submitted.append(a) or pytest.fail("queued"))
    monkeypatch.setenv("EXPLORER_FORWARD_QUEUE", "off")
    assert cached.forward(("k",), lambda: 1) == 1
    assert generation_run._queued("s1", lambda: 2) == 2
    assert submitted == []
