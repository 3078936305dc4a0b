"""Rows measured inside this process: the heatmap page through Streamlit's AppTest against the bare forward pass
(rows 1 and 2), and the size of stock bertviz's model_view HTML (the yardstick of row 5)."""
from __future__ import annotations

import functools
import json
import logging
import os
import time
from pathlib import Path

import numpy as np

from bench.stats import median, spread, timed
from bench.texts import fit, single_token_markers

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "pages" / "heatmaps.py"
N_TOKENS = 32


def quiet() -> None:
    """AppTest runs pages without a server; Streamlit then logs a warning for every cached call."""
    from streamlit.logger import set_log_level

    set_log_level("error")   # every Streamlit logger, also the ones its modules make later
    logging.getLogger("transformers").setLevel(logging.ERROR)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@functools.cache   # once a process: a second call would only replace the shared cache with an empty one
def apptest_as_a_server() -> None:
    """Make AppTest do once what a server does once. Every new AppTest scans the metadata of every installed
    package for Streamlit components (0.14 s of CPU each time), and every run compiles the page again; a server does
    both once at its start and keeps the bytecode. So a timed run is the server's rerun, not a recompile, and the
    test suite's AppTest tier spends its time on the app (tests/conftest.py calls this too: the scan was a quarter
    of that tier's CPU). Neither the installed packages nor the app's files change while a process runs.
    (Private Streamlit names outside explorer/ui/live/streamlit_internals.py, named as an exception in
    tests/unit/test_streamlit_internals.py: AppTest only, never a served app. A renamed one fails the assertion
    here, not silently.)"""
    from streamlit.components.v2 import manifest_scanner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)
    shared = ScriptCache()
    for module in (app_test, local_script_runner):
        assert module.ScriptCache is ScriptCache, module.__name__
        module.ScriptCache = lambda: shared


def thread_cpu() -> dict:
    """From now on, count in this process the CPU seconds of AppTest's script runs (the page's own thread) under
    ``"script"`` and of extraction (``cached.extract``, in the forward queue's thread) under ``"extract"``; zero
    them between runs. The rest of a run's process CPU is AppTest's own: its thread that polls every millisecond
    for the run's end, then reads the page's messages into its element tree (a served page has neither)."""
    from streamlit.runtime.scriptrunner import script_runner

    from explorer.ui import cached

    spent = {"script": 0.0, "extract": 0.0}

    def counted(what: str, fn):
        def run(*args, **kwargs):
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[what] += time.thread_time() - start
        return run

    script_runner.ScriptRunner._run_script = counted("script", script_runner.ScriptRunner._run_script)
    cached.extract = counted("extract", cached.extract)
    return spent


def _heatmap_rows(at) -> list[str]:
    charts = at.get("plotly_chart")
    if not charts:
        return []
    return json.loads(charts[0].proto.spec)["layout"]["yaxis"].get("ticktext") or []


def page_vs_forward(name: str, reps: int, forwards: int = 3) -> dict:
    """Warm rerun of the heatmap page after the text changed to a new ``N_TOKENS``-token text (so extraction is
    included) vs ``model(**inputs, output_attentions=True)`` on that same input, in this process."""
    import torch
    from streamlit.testing.v1 import AppTest

    from explorer.attention.result import extract
    from explorer.model.loading import freeze_heap
    from explorer.ui import cached

    quiet()
    apptest_as_a_server()
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params["model"] = name
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the heatmap page failed on {name}: {at.exception[0].value}")
    freeze_heap()   # as the server does once its preload has loaded the model (app.py's start hook)
    loaded = cached.get_model(name)
    device, tok = loaded.device, loaded.tokenizer
    markers = single_token_markers(tok, reps + 2)
    texts = [fit(tok, N_TOKENS, seed=i, marker=m) for i, m in enumerate(markers)]

    def forward(text: str):
        inputs = {k: v.to(device) for k, v in tok(text, return_tensors="pt").items()}
        assert inputs["input_ids"].shape[1] == N_TOKENS, inputs["input_ids"].shape
        with torch.inference_mode():
            out = loaded.model(**inputs, output_attentions=True)
        assert len(out.attentions) == loaded.model.config.num_hidden_layers
        return out

    page_t, fwd_t, extract_t, page_cpu, fwd_cpu = [], [], [], [], []
    for i, text in enumerate(texts):
        at.text_area(key="text").set_value(text)
        t_page, c_page = timed(at.run, device=device)
        if at.exception:
            raise RuntimeError(f"the heatmap page failed on {name}: {at.exception[0].value}")
        if markers[i] not in _heatmap_rows(at):
            raise RuntimeError(f"the heatmap did not show the new text ({markers[i]!r} missing)")
        forward(text)  # same shape every time; one untimed call keeps caches equally warm for both sides
        fwd = [timed(lambda text=text: forward(text), device=device) for _ in range(forwards)]
        t_ext, _ = timed(lambda text=text: extract(loaded, text + " again"), device=device)
        if i >= 2:   # the first two texts warm up shapes and code paths
            page_t.append(t_page)
            page_cpu.append(c_page)
            fwd_t.append(median([w for w, _ in fwd]))
            fwd_cpu.append(median([c for _, c in fwd]))
            extract_t.append(t_ext)
    ratios = [p / f for p, f in zip(page_t, fwd_t)]
    return dict(model=name, device=device, first_run_s=first, page_s=page_t, forward_s=fwd_t,
                extract_s=extract_t, ratio=median(page_t) / median(fwd_t), ratio_spread=spread(ratios),
                cpu_ratio=median(page_cpu) / median(fwd_cpu), page_cpu_s=page_cpu, forward_cpu_s=fwd_cpu,
                n=len(page_t))


def stock_bertviz_bytes(name: str, text: str) -> dict:
    """Length of stock bertviz's ``model_view(..., html_action='return')`` HTML for this model and text."""
    import torch
    from bertviz import model_view

    from explorer.ui import cached

    quiet()
    result = cached.get_attention(name, text)
    attention = tuple(torch.from_numpy(np.array(w))[None] for w in result.weights)   # writable copies
    start = time.perf_counter()
    html = model_view(attention, list(result.tokens), html_action="return").data
    return dict(model=name, bytes=len(html.encode("utf-8")), seconds=time.perf_counter() - start,
                n_tokens=len(result.tokens), shape=list(result.weights.shape))

