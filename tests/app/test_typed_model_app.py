"""A hub id typed or picked in the model picker says its family, its size and what works before anything loads,
and loads only after "Load it". The online path talks to a real HTTP server on 127.0.0.1 that serves the two hub
addresses the app reads before a download (``/<id>/resolve/main/config.json`` and ``/api/models/<id>?blobs=true``)."""
from __future__ import annotations

import json
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest
from streamlit.testing.v1 import AppTest

from explorer.jobs.worker import ModelWorker
from explorer.model import loading, registry
from explorer.model.registry import ModelUnavailable
from explorer.serving import policy
from explorer.ui import cached, linkask
from explorer.ui.pickers import OTHER

ROOT = Path(__file__).resolve().parents[2]
ENCODER = registry.EMBEDDED_ENCODER
PYTHIA = {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 6,
          "intermediate_size": 2048, "vocab_size": 50304, "rotary_pct": 0.25}
MB = 1_000_000
HUB = {   # hub id -> (config.json, weight file bytes)
    "EleutherAI/pythia-70m": (PYTHIA, 165_000_000),
    "state-spaces/mamba-130m": ({"model_type": "mamba", "hidden_size": 768}, 516_000_000),
    "huge/model": (PYTHIA, 900_000 * MB),
    "evil/x__bold__": (PYTHIA, 2 * MB),
}


class FakeHub(BaseHTTPRequestHandler):
    asked: list[str] = []

    def do_HEAD(self):   # loading.hub_reachable: any answer counts
        self.send_response(200)
        self.end_headers()

    def do_GET(self):
        FakeHub.asked.append(self.path)
        path = urlparse(self.path).path
        found = None
        for hub_id, (config, weights) in HUB.items():
            if path == f"/{hub_id}/resolve/main/config.json":
                found = config
            elif path == f"/api/models/{hub_id}":
                found = {"id": hub_id, "siblings": [{"rfilename": "config.json", "size": 700},
                                                    {"rfilename": "model.safetensors", "size": weights}]}
        body = json.dumps(found).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if found:
            self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def worker(monkeypatch):
    """A fresh model worker; the fixture's value is the hub models it was asked to load (each fails at once: no
    download here). The embedded encoder loads for real."""
    loads = []

    def loader(spec, **kwargs):
        if spec.source == "hub":
            loads.append(spec.name)
            raise ModelUnavailable(f"Model {spec.name!r} is not available: a test server downloads nothing.")
        return loading.load_model(spec, **kwargs)
    monkeypatch.setattr(cached, "WORKER", ModelWorker(loader=loader))
    monkeypatch.setattr(loading, "_online", None)   # the hub probe's answer is remembered for a minute
    linkask._sizes.clear()
    linkask._works.clear()
    yield loads
    linkask._sizes.clear()
    linkask._works.clear()


@pytest.fixture
def hub(monkeypatch, worker):
    """Online: HF_ENDPOINT is a real HTTP server on 127.0.0.1 answering like the hub for the ids in HUB."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    FakeHub.asked.clear()
    yield FakeHub.asked
    server.shutdown()
    server.server_close()


def seen(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def typed(name: str, at: AppTest | None = None) -> AppTest:
    """The heatmap page (or ``at`` as it is) with ``name`` typed into the picker's free box."""
    at = at or AppTest.from_file(str(ROOT / "pages" / "heatmaps.py"), default_timeout=240).run()
    at.selectbox(key="model").set_value(OTHER).run()
    at.text_input(key="model_other").input(name).run()
    assert not at.exception, at.exception
    return at


def card(at: AppTest) -> str:
    """The picker's question and its captions, one a line, markdown escapes taken out."""
    question = [seen(m.value).removeprefix(":material/download: ") for m in at.markdown
                if m.value.startswith(":material/download:")]
    return "\n".join(question + [seen(c.value) for c in at.caption])


def test_a_typed_hub_id_says_family_size_and_what_works_and_loads_nothing_until_asked(hub, worker):
    at = typed("EleutherAI/pythia-70m")
    text = card(at)
    assert "EleutherAI/pythia-70m is not on this server yet: a download from the hub, 166 MB. Load it?" in text
    assert "GPT-NeoX (decoder): attention weights, scores and fidelity" in text
    assert worker == [] and cached.WORKER.loaded() == [ENCODER]     # the loader was asked for no hub model
    assert at.query_params["model"] == ENCODER and at.get("plotly_chart")     # the page keeps the model it had
    assert any(p == "/EleutherAI/pythia-70m/resolve/main/config.json" for p in hub)   # config first...
    assert any(p.startswith("/api/models/EleutherAI/pythia-70m") for p in hub)  # ...then the file list
    assert not any("safetensors" in p for p in hub)                               # no weights were fetched
    at.run()
    assert worker == [] and "166 MB. Load it?" in card(at)                        # a rerun asks again

    at.button(key="model_pick_load").click().run()
    assert worker == ["EleutherAI/pythia-70m"]                                   # now, and only now
    assert at.query_params["model"] == "EleutherAI/pythia-70m" and "Load it?" not in card(at)
    assert any("a test server downloads nothing" in seen(w.value) for w in at.warning)
    at.run()
    assert "Load it?" not in card(at)                                             # confirmed for the session


def test_the_choice_sticks_across_pages_once_confirmed(hub, worker):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at = typed("EleutherAI/pythia-70m", at.switch_page("pages/heatmaps.py").run())
    at.button(key="model_pick_load").click().run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception and "Load it?" not in card(at)
    assert at.text_input(key="model_other").value == "EleutherAI/pythia-70m"
    assert at.query_params["model"] == "EleutherAI/pythia-70m"


def test_stay_puts_the_shown_model_back(hub, worker):
    at = typed("EleutherAI/pythia-70m")
    assert at.button(key="model_pick_stay").label == f"Stay on {ENCODER}"
    at.button(key="model_pick_stay").click().run()
    assert at.selectbox(key="model").value == ENCODER and "Load it?" not in card(at) and worker == []


def test_an_unknown_family_lists_the_known_ones_and_may_still_load(hub, worker):
    text = card(typed("state-spaces/mamba-130m"))
    assert "does not know the model family 'mamba'" in text and "517 MB" in text
    assert all(name in text for name in ("gpt_neox", "bert", "llama", "t5"))
    assert worker == []


def test_a_model_the_size_check_refuses_offers_no_load(hub, worker):
    at = typed("huge/model")
    text = card(at)
    assert ("huge/model is not on this server yet: a download from the hub, which this server refuses: huge/model is "
            "a 900,000 MB download") in text
    assert "EXPLORER_MAX_MODEL_MB" in text
    assert not [b for b in at.button if b.key == "model_pick_load"] and worker == []


def test_a_hostile_id_is_shown_literally(hub, worker):
    at = typed("evil/x__bold__")
    raw = [m.value for m in at.markdown if m.value.startswith(":material/download:")]
    assert raw and "evil\\/x\\_\\_bold\\_\\_ is not on this server" in raw[0]     # no bold: the id as typed
    assert worker == []


def test_offline_says_so_plainly_and_still_offers_load(worker):
    at = typed("EleutherAI/pythia-70m")
    text = card(at)
    assert ("EleutherAI/pythia-70m is not on this server yet: a download from the hub. Its size is unknown: the hub "
            "cannot be reached from this server, so it loads only if it is already in this server's cache. Load it?"
            ) in text
    assert "Its config could not be read either" in text and worker == []
    at.button(key="model_pick_load").click().run()
    assert worker == ["EleutherAI/pythia-70m"]


def test_a_known_hub_model_picked_from_the_list_asks_too(worker):
    at = AppTest.from_file(str(ROOT / "pages" / "heatmaps.py"), default_timeout=240).run()
    at.selectbox(key="model").set_value("gpt2").run()
    assert "gpt2 is not on this server yet: a download from the hub." in card(at) and worker == []
    assert at.query_params["model"] == ENCODER


def test_a_typed_folder_still_loads_at_once(worker, tiny_folder):
    folder = str(tiny_folder("bert"))
    at = typed(folder)
    assert "Load it?" not in card(at) and str(Path(folder).resolve()) in cached.WORKER.loaded()


def test_a_model_loading_now_is_not_asked_again(worker, monkeypatch):
    """Someone on this server pressed "Load it" (a teacher, whose class follows its link): while that load runs
    the model needs no second question; a failed load is forgotten, so the next choice asks again."""
    release = threading.Event()

    def slow(spec, **kwargs):
        release.wait(30)
        raise ModelUnavailable("a test server downloads nothing")
    monkeypatch.setattr(cached, "WORKER", ModelWorker(loader=slow))
    assert linkask.needs_asking("EleutherAI/pythia-70m") is not None
    job = cached.WORKER.request("EleutherAI/pythia-70m")
    try:
        assert linkask.needs_asking("EleutherAI/pythia-70m") is None
        assert cached.WORKER.requested() == ["EleutherAI/pythia-70m"] and cached.WORKER.loaded() == []
    finally:
        release.set()
    job.done.wait(30)
    assert linkask.needs_asking("EleutherAI/pythia-70m") is not None


def test_a_hub_model_in_this_servers_cache_loads_at_once_and_says_so(worker, tiny_folder, tmp_path, monkeypatch):
    """Offline, a hub id whose files are in the hub cache (its own layout: refs/main names the snapshot) needs no
    download, so no card: it loads at once, with its family read from the cached config."""
    snapshot = tmp_path / "hub" / "models--school--tiny-bert" / "snapshots" / "0123abc"
    shutil.copytree(tiny_folder("bert"), snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0123abc")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert policy.cached_snapshot("school/tiny-bert") == snapshot and policy.cached_snapshot("school/other") is None
    at = typed("school/tiny-bert")
    text = card(at)
    assert "Load it?" not in text and worker == ["school/tiny-bert"]           # asked to load at once
    assert "school/tiny-bert, in this server's hub cache (no download): BERT (encoder)" in text
    (snapshot / "model.safetensors").unlink()                                 # without its weights: asked again
    linkask._works.clear()
    assert policy.cached_snapshot("school/tiny-bert") is None and linkask.needs_asking("school/tiny-bert")
