"""A thread-safe least-recently-used store bounded by bytes, for attention results shared by all sessions, and
:func:`argument_key`, the key of a function's arguments; the stores themselves are named, sized and handed out
by ``serving.regions`` (with ``regions.remembered``, the one memo decorator).

Streamlit's st.cache_data would copy a result on every hit (a 512-token decoder result is hundreds of MB);
this keeps one read-only copy per (model, text) and drops the oldest when the byte budget is exceeded.

Why not cachetools' ``LRUCache(maxsize, getsizeof=nbytes)``: it is not installed (Streamlit 1.67 no longer
depends on it, so it would be one more dependency for a dozen lines); its ``Cache.__setitem__`` raises
``ValueError("value too large")`` for a value larger than ``maxsize``, where a long text's result larger than
the budget must still be kept alone, or each rerun of its page would run the model again; and it is not
thread-safe, so the lock and the per-key locks that compute a value once for many sessions would stay ours.
"""
from __future__ import annotations

import hashlib
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np


def nbytes(obj, _seen: set[int] | None = None) -> int:
    """Bytes held by the numpy arrays and torch tensors of an object, each counted once (an encoder-decoder result lists
    itself among its parts), recursing into dataclass fields, dicts, lists and tuples; a torch module it points to
    (the loaded model a patching contrast keeps to run again) counts nothing: the models region holds its weights,
    and counting them sized a 60 kB contrast at 547 MB, more than the whole work region, which it then emptied."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return 0
    seen.add(id(obj))
    # torch's Module class once defined (read so, as another thread may be importing torch: no instance before it)
    module = getattr(sys.modules.get("torch.nn.modules.module"), "Module", None)
    if module is not None and isinstance(obj, module):
        return 0   # a model (or a layer of one) is the models region's: a value that points to it does not own it
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if callable(getattr(obj, "untyped_storage", None)):   # a torch tensor: its storage (a view holds all of it)
        storage = obj.untyped_storage()
        if ("storage", storage.data_ptr()) in seen:
            return 0
        seen.add(("storage", storage.data_ptr()))
        return storage.nbytes()
    if isinstance(obj, dict):
        return sum(nbytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(nbytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__"):
        return sum(nbytes(v, seen) for v in vars(obj).values())
    return 0


class ByteLRU:
    """``max_bytes``: the budget; ``sizeof(value)``: a value's bytes (default :func:`nbytes`, its arrays);
    ``max_entries``: at most so many values (None: no count bound), for values whose arrays are not most of what
    they cost (a loaded model's interpreter objects, a small answer that holds no array at all)."""

    def __init__(self, max_bytes: int, sizeof: Callable[[object], int] | None = None, max_entries: int | None = None):
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.sizeof = sizeof or nbytes
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self.hits = self.misses = 0

    @property
    def size(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list[Hashable]:
        """The keys held, the least recently used first."""
        with self._lock:
            return list(self._items)

    def sizes(self) -> list[tuple[Hashable, int]]:
        """Each key held and its value's bytes, the least recently used first."""
        with self._lock:
            return [(key, n) for key, (_, n) in self._items.items()]

    def put(self, key: Hashable, value, size: int | None = None) -> None:
        """Keep ``value`` under ``key`` (replacing what was there), ``size`` its bytes (default: measured), then
        drop the least recently used values past the bounds; a value larger than the whole budget stays alone."""
        size = self.sizeof(value) if size is None else size
        with self._lock:
            self._store(key, value, size)

    def _store(self, key: Hashable, value, size: int) -> None:
        """Under the lock: ``put``'s work."""
        if key in self._items:
            self._bytes -= self._items[key][1]
        self._items[key] = (value, size)
        self._items.move_to_end(key)
        self._bytes += size
        while len(self._items) > 1 and (self._bytes > self.max_bytes
                                        or (self.max_entries is not None and len(self._items) > self.max_entries)):
            _, (_, dropped) = self._items.popitem(last=False)
            self._bytes -= dropped

    def peek(self, key: Hashable, default=None):
        """The stored value for ``key`` (counted as a hit and marked recently used), else ``default``; computes
        nothing, so a caller can answer a hit at once and queue only the misses."""
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            self.hits += 1
            return self._items[key][0]

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        """Return the stored value for ``key``, computing it once even when many sessions ask at the same time."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key][0]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:
                    self.hits += 1
                    return self._items[key][0]
            try:
                value = compute()
            except BaseException:  # nothing stored: forget the key's lock too (bad inputs must not pile up)
                with self._lock:
                    self._key_locks.pop(key, None)
                raise
            size = self.sizeof(value)
            with self._lock:
                self.misses += 1
                self._store(key, value, size)
                self._key_locks.pop(key, None)
            return value

    def discard(self, key: Hashable) -> None:
        """Forget ``key``'s value, if held."""
        with self._lock:
            if key in self._items:
                self._bytes -= self._items.pop(key)[1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


# ---------------------------------------------------------------------------------------------- keys

MAX_CELLS = 4096   # a larger array argument is not keyed (its digest would cost more than most values it keys)


class Unkeyable(Exception):
    """An argument :func:`argument_key` cannot turn into a key: the call runs without the store."""


class _Same:
    """Key part for an object kept by identity: equal only to a key of the same object while it is alive (an
    ``id`` reused after the object died never matches an old entry)."""
    __slots__ = ("ref", "ident")

    def __init__(self, obj):
        self.ref, self.ident = weakref.ref(obj), id(obj)

    def __hash__(self) -> int:
        return self.ident

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and self.ident == other.ident and self.ref() is not None \
            and self.ref() is other.ref()


def argument_key(value, by_identity: tuple[type, ...] = (), max_cells: int = MAX_CELLS):
    """A hashable stand-in for a function's argument: arrays by shape, type and a digest of their bytes (at most
    ``max_cells`` cells), containers item by item, scalars and strings as they are, instances of ``by_identity``
    (read-only objects such as a cached AttentionResult) by identity while they live; anything else raises
    :class:`Unkeyable`."""
    if isinstance(value, np.ndarray):
        if value.size > max_cells:
            raise Unkeyable("large array")
        data = np.ascontiguousarray(value)
        return ("array", data.shape, data.dtype.str, hashlib.blake2b(data.tobytes(), digest_size=16).digest())
    if isinstance(value, dict):
        return ("dict", tuple((argument_key(k, by_identity, max_cells), argument_key(v, by_identity, max_cells))
                              for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(argument_key(v, by_identity, max_cells) for v in value))
    if value is None or isinstance(value, (str, bytes, bool, int, float, np.generic)):
        return value
    if by_identity and isinstance(value, by_identity):
        return _Same(value)
    raise Unkeyable(type(value).__name__)
