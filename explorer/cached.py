"""The one module in explorer/ that imports Streamlit: caching shared by every session.

Models are cached as resources by name (loaded once, shared by all sessions). Attention results are kept
once per (model, text, target) in a byte-bounded store (see ``lru.py``), so thirty students typing the same
example cost one forward pass and memory stays bounded. Every key is a plain value, never an object.
"""
from __future__ import annotations

import os

import streamlit as st
import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

from . import embedded, models
from .attention import AttentionResult, extract
from .examples import EXAMPLES
from .lru import ByteLRU

# 384 MB by default: with both embedded models loaded (~1.05 GB resident) the server stays near 1.5 GB however
# many texts the sessions send (a 512-token encoder result alone holds ~150 MB of weights and scores).
_results = ByteLRU(int(os.environ.get("EXPLORER_RESULT_CACHE_MB", "384")) * 2**20)


@st.cache_resource(max_entries=int(os.environ.get("EXPLORER_MAX_MODELS", "3")), show_spinner=False)
def _model(name: str) -> models.LoadedModel:
    return models.load_model(name)


def get_model(name: str) -> models.LoadedModel:
    """The loaded model, shared across sessions; the decoder's one-time conversion shows a progress bar.

    Inside a page, a model that cannot be loaded (unknown id, no network, hub switched off, a weight file that
    fails its sha256) is a warning in the page and the script stops there; elsewhere ModelUnavailable is raised.
    """
    def prepare(progress=None) -> None:   # the decoder's one-time GGUF conversion
        spec = models.resolve_spec(name)
        embedded.gguf_cache(spec, embedded.verified_weights(spec), progress)

    if get_script_run_ctx(suppress_warning=True) is None:   # not in a page (the server's preload): no widgets
        if embedded.needs_preparation(name):
            prepare()
        return _model(name)
    try:
        if embedded.needs_preparation(name):
            bar = st.progress(0.0, text=f"Preparing {name} for its first use…")
            prepare(lambda f, m: bar.progress(min(f, 1.0), text=m))
            bar.empty()
        with st.spinner(f"Loading {name}…"):
            return _model(name)
    except models.ModelUnavailable as err:
        from .ui import literal
        st.warning(literal(err))
        st.stop()


def get_attention(name: str, text: str, target: str | None = None) -> AttentionResult:
    """Attention of model ``name`` on ``text``, computed once for all sessions. Treat the result as read-only."""
    loaded = get_model(name)

    def compute() -> AttentionResult:
        try:
            result = extract(loaded, text, target)
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            loaded.model.to("cpu")
            loaded.device = "cpu"
            loaded.notes.append("The GPU ran out of memory: this model now runs on the CPU.")
            result = extract(loaded, text, target)
        for part in {id(p): p for p in [result, *result.parts.values()]}.values():
            for array in (part.weights, part.scores, part.fidelity):
                if array is not None:
                    array.setflags(write=False)
        return result

    return _results.get_or_compute((name, text, target), compute)


def result_cache() -> ByteLRU:
    return _results


def preload_names() -> list[str]:
    """Models to load when the server starts: ``EXPLORER_PRELOAD`` (comma-separated names; empty: none),
    by default the embedded encoder, which every page opens with."""
    raw = os.environ.get("EXPLORER_PRELOAD", models.EMBEDDED_ENCODER)
    return [name.strip() for name in raw.split(",") if name.strip()]


def preload(names: list[str]) -> None:
    """Load ``names`` (running the decoder's one-time conversion if it has not run) and their first example,
    before any browser asks. Runs in a background thread at server start; a session that asks meanwhile waits
    for the same load instead of starting its own. A failure is logged and left for the pages to report."""
    for name in names:
        try:
            get_attention(name, next(iter(EXAMPLES.values())))
        except Exception as err:  # noqa: BLE001 - a page shows the same failure to whoever opens it
            models.log.warning("preloading %s failed: %s", name, err)
