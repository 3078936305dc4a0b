"""The one cache layer: every store a server keeps across sessions, named by region, sized here and handed out here.

A region is one kind of thing kept once per server and shared by every session (docs/architecture.md, "Which
cache?"). Each has one setting, an environment variable in MB read in this module only, with its default:

- ``results``: model results, one read-only ``AttentionResult`` (or generation) per model and text;
  ``EXPLORER_RESULT_CACHE_MB`` (384).
- ``values``: value-weighted attention per model and text (``ui/views/value_roles.py``); ``EXPLORER_VALUE_CACHE_MB``
  (128).
- ``figures``: figures kept by the view they draw (``plots/remember.py``'s ``BY_VIEW``), and each figure builder's
  own memo; ``EXPLORER_FIGURE_CACHE_MB`` (32, the shared store; each builder's memo is ``remember.MAX_BYTES``).
- ``drawn``: drawn views, a page's recorded output replayed to every session (``ui/drawn_once.py``);
  ``EXPLORER_RENDER_CACHE_MB`` (64; 0 switches replay off).
- ``static``: Streamlit's static files, gzipped once (``web/compress.py``); ``EXPLORER_STATIC_CACHE_MB`` (48).
- ``models``: loaded models, by name (the model worker's finished loads, ``keepers.jobs("models")``), counted by their
  parameters' and buffers' bytes; ``EXPLORER_MODEL_CACHE_MB`` (8192), and at most ``EXPLORER_MAX_MODELS`` (3) of
  them, whatever their size (each also holds a tokenizer and the interpreter's objects no byte count sees).
- ``work``: the finished values of the shared jobs (``explorer/jobs/keepers.py``: corpus passes, maps, measures,
  sweeps, roles, explanations, atlas passes, prepared steps, training runs), each under its keeper's name and key;
  ``EXPLORER_WORK_CACHE_MB`` (512), at most ``WORK_ENTRIES`` values (a prepared step holds no array: no byte
  bound alone would ever drop it). A value dropped here is computed again by the next page that asks for it.
- ``memos``: small values a function would compute again on every rerun (``cache.remembered``), one store per
  function, its budget given by the function's decorator.

:func:`store` hands out a region's one store (built on first use, sized from its setting); :func:`memo` a new
per-function store of a memo region (``memos``; ``figures`` for a figure builder's own memo); :func:`report` is what
``/_explorer/stats`` shows. A ``ByteLRU`` built anywhere else fails ``tests/unit/test_regions.py``, and so does a
``Jobs`` or ``Trainer`` built outside ``explorer/jobs/`` (whose finished values these regions keep), a module-level
``OrderedDict`` and an ``st.cache_*`` outside the one module that may (``ui/live/membership.py``).
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from explorer.serving import cache
from explorer.serving.cache import ByteLRU


@dataclass(frozen=True)
class Region:
    name: str
    what: str
    setting: str | None   # the environment variable (MB); None: each store's budget is given by its user
    default_mb: float
    sizeof: Callable[[object], int] | None = None   # a value's bytes; None: its arrays' (cache.nbytes)
    max_entries: int | None = None   # values kept at most, whatever their bytes (None: bytes alone bound it)
    count_setting: str | None = None   # the environment variable that overrides ``max_entries``


def _recording_bytes(recording) -> int:
    return recording.nbytes


def model_bytes(loaded) -> int:
    """A loaded model's bytes: its parameters' and buffers' (numel × element size, each tensor once, tied weights
    once); a value without a torch model (a test's stand-in) by its arrays."""
    model = getattr(loaded, "model", None)
    if not callable(getattr(model, "parameters", None)):
        return cache.nbytes(loaded)
    tensors = {id(t): t for t in (*model.parameters(), *model.buffers())}
    return sum(t.numel() * t.element_size() for t in tensors.values())


WORK_ENTRIES = 4096   # the work region's values at most: a prepared step or a small measure holds almost no array


REGIONS: dict[str, Region] = {r.name: r for r in (
    Region("results", "model results, one per model and text", "EXPLORER_RESULT_CACHE_MB", 384),
    Region("values", "value-weighted attention, one per model and text", "EXPLORER_VALUE_CACHE_MB", 128),
    Region("figures", "figures kept by the view they draw", "EXPLORER_FIGURE_CACHE_MB", 32),
    Region("drawn", "drawn views replayed to every session", "EXPLORER_RENDER_CACHE_MB", 64, _recording_bytes),
    Region("static", "static files gzipped once", "EXPLORER_STATIC_CACHE_MB", 48),
    Region("models", "loaded models, by name", "EXPLORER_MODEL_CACHE_MB", 8192, model_bytes, 3, "EXPLORER_MAX_MODELS"),
    Region("work", "finished shared jobs (explorer/jobs/keepers.py), by keeper and key", "EXPLORER_WORK_CACHE_MB", 512,
           max_entries=WORK_ENTRIES),
    Region("memos", "small values a function computes on every rerun, one store per function", None, 0),
)}

_lock = threading.Lock()
_stores: dict[str, ByteLRU] = {}
_memos: dict[str, list[tuple[str, ByteLRU]]] = {}


def budget_bytes(name: str, env: Mapping[str, str] = os.environ) -> int:
    """Region ``name``'s budget in bytes from its setting (MB, fractions allowed; 0 or less: keep nothing); the default
    when unset or not a number."""
    region = REGIONS[name]
    raw = str(env.get(region.setting, "")).strip() if region.setting else ""
    try:
        mb = float(raw) if raw else region.default_mb
    except ValueError:
        mb = region.default_mb
    return max(0, int(mb * 2**20))


def max_entries(name: str, env: Mapping[str, str] = os.environ) -> int | None:
    """Region ``name``'s bound on its number of values: its count setting if set (a positive whole number), else its
    row's (None: bytes alone bound it)."""
    region = REGIONS[name]
    raw = str(env.get(region.count_setting, "")).strip() if region.count_setting else ""
    return int(raw) if raw.isdigit() and int(raw) > 0 else region.max_entries


def store(name: str) -> ByteLRU:
    """Region ``name``'s one store, shared by the whole server, sized from its settings when first asked for."""
    region = REGIONS[name]
    if region.setting is None:
        raise ValueError(f"region {name!r} keeps one store per function: use memo()")
    with _lock:
        if name not in _stores:
            _stores[name] = ByteLRU(budget_bytes(name), sizeof=region.sizeof, max_entries=max_entries(name))
        return _stores[name]


def memo(owner: str, max_bytes: int, region: str = "memos", max_entries: int | None = None) -> ByteLRU:
    """A new store of ``max_bytes`` (and at most ``max_entries`` values) for one function or module (``owner``, its
    qualified name), counted in ``region``."""
    if region not in REGIONS:
        raise KeyError(region)
    kept = ByteLRU(max_bytes, max_entries=max_entries)
    with _lock:
        _memos.setdefault(region, []).append((owner, kept))
    return kept


def unlisted(like: str, max_entries: int | None = None) -> ByteLRU:
    """A store sized and measured as region ``like``'s but apart from it, counted nowhere: for a ``Jobs`` or
    ``Trainer`` built outside the server's table (a test's own); the server's come from ``explorer/jobs/keepers.py``,
    whose stores are the regions'."""
    region = REGIONS[like]
    return ByteLRU(budget_bytes(like), sizeof=region.sizeof, max_entries=max_entries)


def _counts(stores: list[ByteLRU]) -> dict:
    bounds = [s.max_entries for s in stores]
    return {"entries": sum(len(s) for s in stores), "bytes": sum(s.size for s in stores),
            "max_bytes": sum(s.max_bytes for s in stores), "hits": sum(s.hits for s in stores),
            "misses": sum(s.misses for s in stores),
            "max_entries": None if not bounds or None in bounds else sum(bounds)}


def report() -> dict[str, dict]:
    """Every region: entries, bytes, bounds (``max_bytes``, ``max_entries``: None when bytes alone bound it), hits
    and misses, over its shared store and the per-function stores counted in it (``stores``: how many; ``owners``:
    whose), for ``/_explorer/stats``."""
    out = {}
    for name, region in REGIONS.items():
        with _lock:
            owned = list(_memos.get(name, []))
        stores = ([store(name)] if region.setting else []) + [s for _, s in owned]
        out[name] = {**_counts(stores), "stores": len(stores), "setting": region.setting,
                     "count_setting": region.count_setting,
                     "owners": sorted({owner for owner, _ in owned})}
    return out


def remembered(max_bytes: int, *, keep: Callable | None = None, give: Callable | None = None,
               by_identity: tuple[type, ...] = (), max_cells: int = cache.MAX_CELLS, region: str = "memos",
               max_entries: int | None = None) -> Callable:
    """Decorator: ``fn``'s values kept in its own ``ByteLRU`` of ``max_bytes`` (:func:`memo`), keyed by its
    arguments (``cache.argument_key``), each computed once even when several sessions ask at the same time. A call whose
    arguments cannot be keyed just runs ``fn``. ``keep(value)`` is what the store holds (default: the value
    itself) and ``give(kept)`` what each caller receives (default: the kept value, shared: callers must not
    change it). The store is the wrapper's ``memo``, counted in ``region`` (``memos``, or ``figures``); ``max_entries``
    bounds its values too (for values that hold no array, which the byte bound does not see)."""
    def decorate(fn: Callable) -> Callable:
        own = memo(f"{fn.__module__}.{fn.__qualname__}", max_bytes, region, max_entries)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                key = cache.argument_key((args, sorted(kwargs.items())), by_identity, max_cells)
            except cache.Unkeyable:
                return fn(*args, **kwargs)
            kept = own.get_or_compute(key, lambda: (keep or _same)(fn(*args, **kwargs)))
            return (give or _same)(kept)

        wrapper.memo = own
        return wrapper
    return decorate


def _same(value):
    return value
