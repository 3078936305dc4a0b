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
- ``memos``: small values a function would compute again on every rerun (``cache.remembered``), one store per
  function, its budget given by the function's decorator.

:func:`store` hands out a region's one store (built on first use, sized from its setting); :func:`memo` a new
per-function store of a memo region (``memos``; ``figures`` for a figure builder's own memo); :func:`report` is what
``/_explorer/stats`` shows. A ``ByteLRU`` built anywhere else fails ``tests/unit/test_regions.py``.
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


def _recording_bytes(recording) -> int:
    return recording.nbytes


REGIONS: dict[str, Region] = {r.name: r for r in (
    Region("results", "model results, one per model and text", "EXPLORER_RESULT_CACHE_MB", 384),
    Region("values", "value-weighted attention, one per model and text", "EXPLORER_VALUE_CACHE_MB", 128),
    Region("figures", "figures kept by the view they draw", "EXPLORER_FIGURE_CACHE_MB", 32),
    Region("drawn", "drawn views replayed to every session", "EXPLORER_RENDER_CACHE_MB", 64, _recording_bytes),
    Region("static", "static files gzipped once", "EXPLORER_STATIC_CACHE_MB", 48),
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


def store(name: str) -> ByteLRU:
    """Region ``name``'s one store, shared by the whole server, sized from its setting when first asked for."""
    region = REGIONS[name]
    if region.setting is None:
        raise ValueError(f"region {name!r} keeps one store per function: use memo()")
    with _lock:
        if name not in _stores:
            _stores[name] = ByteLRU(budget_bytes(name), sizeof=region.sizeof)
        return _stores[name]


def memo(owner: str, max_bytes: int, region: str = "memos") -> ByteLRU:
    """A new store of ``max_bytes`` for one function (``owner``, its qualified name), counted in ``region``."""
    if region not in REGIONS:
        raise KeyError(region)
    kept = ByteLRU(max_bytes)
    with _lock:
        _memos.setdefault(region, []).append((owner, kept))
    return kept


def _counts(stores: list[ByteLRU]) -> dict:
    return {"entries": sum(len(s) for s in stores), "bytes": sum(s.size for s in stores),
            "max_bytes": sum(s.max_bytes for s in stores), "hits": sum(s.hits for s in stores),
            "misses": sum(s.misses for s in stores)}


def report() -> dict[str, dict]:
    """Every region: entries, bytes, bound (``max_bytes``), hits and misses, over its shared store and the
    per-function stores counted in it (``stores``: how many), for ``/_explorer/stats``."""
    out = {}
    for name, region in REGIONS.items():
        stores = ([store(name)] if region.setting else []) + [s for _, s in _memos.get(name, [])]
        out[name] = {**_counts(stores), "stores": len(stores), "setting": region.setting}
    return out


def remembered(max_bytes: int, *, keep: Callable | None = None, give: Callable | None = None,
               by_identity: tuple[type, ...] = (), max_cells: int = cache.MAX_CELLS, region: str = "memos") -> Callable:
    """Decorator: ``fn``'s values kept in its own ``ByteLRU`` of ``max_bytes`` (:func:`memo`), keyed by its
    arguments (``cache.argument_key``), each computed once even when several sessions ask at the same time. A call whose
    arguments cannot be keyed just runs ``fn``. ``keep(value)`` is what the store holds (default: the value
    itself) and ``give(kept)`` what each caller receives (default: the kept value, shared: callers must not
    change it). The store is the wrapper's ``memo``, counted in ``region`` (``memos``, or ``figures``)."""
    def decorate(fn: Callable) -> Callable:
        own = memo(f"{fn.__module__}.{fn.__qualname__}", max_bytes, region)

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
