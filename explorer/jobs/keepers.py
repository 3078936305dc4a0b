"""The one table of the shared jobs a server keeps: each keeper's name, what it computes, how many it keeps and the
setting that sizes it, and where its finished values live today. Every page's ``Jobs`` comes from here
(:func:`jobs`: built once, on first use, sized by its row), so ``/_explorer/stats`` lists them all (:func:`report`)
and tests/unit/test_regions.py fails on a ``Jobs(`` or ``Trainer(`` built anywhere else.

A keeper holds its finished values itself, bounded by count (``keep``), beside the byte-bounded regions of
:mod:`explorer.serving.regions`: handing each finished value to a region of its own, bounded by bytes, is the next
step (issue 57, item 1); the ``region`` column says where each result is copied today, if anywhere.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from explorer.jobs import training
from explorer.jobs.worker import Jobs


@dataclass(frozen=True)
class Keeper:
    name: str
    what: str
    keep: int                   # finished values kept at most (the least recently asked for goes first)
    setting: str | None = None  # the environment variable that overrides ``keep``
    region: str | None = None   # the region a finished value is also copied into, if any


KEEPERS: dict[str, Keeper] = {k.name: k for k in (
    Keeper("models", "loaded models (ui/cached.py WORKER)", 3, "EXPLORER_MAX_MODELS"),
    Keeper("explanations", "six explanations of one prediction (Which words mattered?)", 32),
    Keeper("corpus-passes", "a model's heads over the geometry corpus (24-107 MB each)", 2, "EXPLORER_GEOMETRY_MODELS"),
    Keeper("maps", "one head's joint query/key map", 512),
    Keeper("measures", "a knockout's measure on one text pair", 256),
    Keeper("sweeps", "every head knocked out in turn", 16),
    Keeper("roles", "every head's role and the similar-heads map", 4),
    Keeper("generations", "a decoder writing, step by step", 2, region="results"),
    Keeper("prepared", "a lesson's next step prepared", 16),
    Keeper("contrasts", "a minimal pair prepared for patching: both runs' activations (Patch activations)", 8),
    Keeper("previews", "attribution patching of one pair, residual grid and every head", 32),
    Keeper("patches", "exact patching of one pair, one granularity and direction", 64),
)}
TRAINING = Keeper("training", "training runs (jobs/training.py Trainer: waiting and finished)", 8)

_lock = threading.Lock()
_jobs: dict[str, Jobs] = {}


def keep_of(name: str, env: Mapping[str, str] = os.environ) -> int:
    """How many finished values keeper ``name`` keeps: its setting if set (a positive whole number), else its row."""
    row = KEEPERS[name]
    raw = env.get(row.setting, "") if row.setting else ""
    return int(raw) if raw.strip().isdigit() and int(raw) > 0 else row.keep


def jobs(name: str) -> Jobs:
    """Keeper ``name``'s one ``Jobs`` (built on first use); KeyError for a name not in the table."""
    with _lock:
        if name not in _jobs:
            _jobs[name] = Jobs(keep_of(name))
        return _jobs[name]


def report() -> dict[str, dict]:
    """Every keeper: what it computes, its bound, how many jobs it holds (``entries``) and how many of them are
    finished; the training queue's too; for ``/_explorer/stats``."""
    with _lock:
        built = dict(_jobs)
    out = {}
    for name, row in KEEPERS.items():
        held = built.get(name)
        keys, finished = (held.keys(), held.finished()) if held is not None else ([], [])
        out[name] = {"what": row.what, "keep": keep_of(name), "setting": row.setting, "region": row.region,
                     "entries": len(keys), "finished": len(finished)}
    trainer = training.started()   # started by the first Train; never made here
    counts = trainer.counts() if trainer is not None else {"entries": 0, "finished": 0}
    out[TRAINING.name] = {"what": TRAINING.what, "keep": trainer.keep if trainer else TRAINING.keep,
                          "setting": None, "region": None, **counts}
    return out
