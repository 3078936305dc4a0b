"""The one table of the shared jobs a server runs: each keeper's name, what it computes and the cache region that keeps
its finished values. Every page's ``Jobs`` comes from here (:func:`jobs`: built once, on first use, from its row), so
``/_explorer/stats`` lists them all (:func:`report`) and tests/unit/test_regions.py fails on a ``Jobs(`` or
``Trainer(`` built anywhere else.

A keeper holds only the work that runs. A finished value goes to its row's region of :mod:`explorer.serving.regions`
(bounded by bytes, and by count where its values hold little an array count sees), under ``(keeper name, key)``;
the region's bounds, set by its one setting, decide how long it stays, and a value the region dropped is computed
again by the next page that asks for it.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from explorer.jobs import training
from explorer.jobs.worker import Jobs
from explorer.serving import regions


@dataclass(frozen=True)
class Keeper:
    name: str
    what: str
    region: str = "work"   # the region that keeps its finished values, each under (name, the job's key)


KEEPERS: dict[str, Keeper] = {k.name: k for k in (
    Keeper("models", "loaded models (ui/cached.py WORKER)", "models"),
    Keeper("explanations", "six explanations of one prediction (Which words mattered?)"),
    Keeper("corpus-passes", "a model's heads over the geometry corpus (24-107 MB each)"),
    Keeper("maps", "one head's joint query/key map"),
    Keeper("measures", "a knockout's measure on one text pair"),
    Keeper("sweeps", "every head knocked out in turn"),
    Keeper("roles", "every head's role and the similar-heads map"),
    Keeper("generations", "a decoder writing, step by step", "results"),
    Keeper("prepared", "a lesson's next step prepared"),
    Keeper("atlas-passes", "a head atlas read on demand for a model without a stored one"),
    Keeper("contrasts", "a minimal pair prepared for patching: both runs' activations (Patch activations)"),
    Keeper("previews", "attribution patching of one pair, residual grid and every head"),
    Keeper("patches", "exact patching of one pair, one granularity and direction"),
)}
TRAINING = Keeper(training.TAG, "training runs (jobs/training.py Trainer: the queue, then the region)")
for _row in (*KEEPERS.values(), TRAINING):   # a row naming no region fails at import, not at its first use
    if _row.region not in regions.REGIONS or regions.REGIONS[_row.region].setting is None:
        raise ValueError(f"keeper {_row.name!r}: {_row.region!r} is no region with a shared store")

_lock = threading.Lock()
_jobs: dict[str, Jobs] = {}


def jobs(name: str) -> Jobs:
    """Keeper ``name``'s one ``Jobs`` (built on first use), its finished values kept by its row's region; KeyError for a
    name not in the table."""
    row = KEEPERS[name]
    with _lock:
        if name not in _jobs:
            _jobs[name] = Jobs(store=regions.store(row.region), tag=name)
        return _jobs[name]


def report() -> dict[str, dict]:
    """Every keeper: what it computes, its region, how many jobs run now (``running``), how many finished values its
    region holds for it (``finished``) and their bytes (counted in the region's too); the training queue's as well;
    for ``/_explorer/stats``."""
    with _lock:
        built = dict(_jobs)
    out = {}
    for name, row in KEEPERS.items():
        held = built.get(name)
        counts = ({"running": len(held.running()), "finished": len(held.finished()), "bytes": held.held_bytes()}
                  if held is not None else {"running": 0, "finished": 0, "bytes": 0})
        out[name] = {"what": row.what, "region": row.region, **counts}
    trainer = training.started()   # started by the first Train; never made here
    counts = trainer.counts() if trainer is not None else {"running": 0, "finished": 0, "bytes": 0}
    out[TRAINING.name] = {"what": TRAINING.what, "region": TRAINING.region, **counts}
    return out
