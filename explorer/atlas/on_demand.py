"""The atlas of a model that has none stored: the same pass over the shipped corpus windows, run on demand in a
shared job (``jobs.worker.Jobs``, one per model for every session), bounded in tokens and in time. It stops after the
window that passes ``MAX_TOKENS`` tokens or ``MAX_SECONDS`` seconds and keeps what it read; the page says how much."""
from __future__ import annotations

import numpy as np

from explorer.atlas import shipped, survey
from explorer.atlas.shipped import Atlas
from explorer.model.loading import LoadedModel
from explorer.words.i18n import N_, Later

MAX_TOKENS, MAX_SECONDS = 20_000, 120.0


def corpus_windows() -> dict[int, str]:
    """The shipped corpus's windows by number, in order; AtlasUnavailable when the file is missing or damaged."""
    corpus = shipped.read_corpus()
    windows = {} if corpus is None else {int(k): v for k, v in corpus["windows"].items() if isinstance(v, str)}
    if not windows:
        raise survey.AtlasUnavailable(Later(N_("The atlas's corpus file is missing or damaged: no pass can run.")))
    return dict(sorted(windows.items()))


def atlas_for(loaded: LoadedModel, progress=None, max_tokens: int | None = None,
              max_seconds: float | None = None) -> Atlas:
    """The atlas of ``loaded`` over the shipped windows, at most ``max_tokens`` tokens and ``max_seconds``
    (``MAX_TOKENS`` and ``MAX_SECONDS`` when not given)."""
    max_tokens = MAX_TOKENS if max_tokens is None else max_tokens
    max_seconds = MAX_SECONDS if max_seconds is None else max_seconds
    windows = corpus_windows()
    order = list(windows)
    s = survey.survey(loaded, [windows[i] for i in order], progress, max_tokens=max_tokens, max_seconds=max_seconds)
    s.tokens = {order[i]: t for i, t in s.tokens.items()}          # window numbers as the corpus file has them
    for ex in s.examples.values():
        ex["window"] = np.asarray(order, dtype=np.int32)[ex["window"]]
    corpus = shipped.read_corpus() or {}
    return shipped.from_survey(s, windows, str(corpus.get("source", "")), str(corpus.get("licence", "")))
