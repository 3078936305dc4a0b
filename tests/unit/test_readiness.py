"""A replica says ready (app.py's /_explorer/ready, what HAProxy checks) only once its start hook has loaded the
preloaded models and imported every page's modules; deploy/cluster.py's replicas preload both embedded models."""
from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _app():
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module("app")   # the server's import (not __main__): the st.App and its routes
    finally:
        sys.path.remove(str(ROOT))


def test_ready_answers_only_after_the_models_and_the_pages_imports(monkeypatch):
    app = _app()
    from explorer.model import loading
    from explorer.ui import cached, prefetch

    seen = []

    def status() -> int:
        return asyncio.run(app.ready(None)).status_code

    monkeypatch.setattr(cached, "preload", lambda names: seen.append(("models", tuple(names), status())))
    monkeypatch.setattr(prefetch, "warm", lambda files: seen.append(("imports", len(files), status())))
    monkeypatch.setattr(loading, "freeze_heap", lambda: None)
    monkeypatch.setenv("EXPLORER_PRELOAD", "all-MiniLM-L6-v2,SmolLM2-135M-Instruct")
    monkeypatch.setattr(app, "PRELOADED", type(app.PRELOADED)())
    assert status() == 503
    app._preload()
    from explorer.sitemap.table import PAGES

    assert seen == [("models", ("all-MiniLM-L6-v2", "SmolLM2-135M-Instruct"), 503),   # models first, not ready
                    ("imports", len(PAGES) + 1, 503)]   # app.py and every page's imports, still not ready
    assert len(PAGES) == len(list((ROOT / "pages").glob("*.py")))
    assert status() == 200


def test_cluster_replicas_preload_both_embedded_models(monkeypatch, tmp_path):
    sys.path.insert(0, str(ROOT / "deploy"))
    try:
        cluster = importlib.import_module("cluster")
    finally:
        sys.path.remove(str(ROOT / "deploy"))
    from explorer.model.registry import EMBEDDED

    assert set(cluster.PRELOAD.split(",")) == set(EMBEDDED)
    monkeypatch.delenv("EXPLORER_PRELOAD", raising=False)
    assert cluster.Cluster(1, data_dir=tmp_path).env["EXPLORER_PRELOAD"] == cluster.PRELOAD
    monkeypatch.setenv("EXPLORER_PRELOAD", "")   # an operator's choice wins
    assert cluster.Cluster(1, data_dir=tmp_path).env["EXPLORER_PRELOAD"] == ""
