"""A thread-safe least-recently-used store bounded by bytes, for attention results shared by all sessions.

Streamlit's st.cache_data would copy a result on every hit (a 512-token decoder result is hundreds of MB);
this keeps one read-only copy per (model, text) and drops the oldest when the byte budget is exceeded.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np


def nbytes(obj, _seen: set[int] | None = None) -> int:
    """Bytes held by the numpy arrays and torch tensors of an object, each counted once (an encoder-decoder result lists
    itself among its parts), recursing into dataclass fields, dicts, lists and tuples."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return 0
    seen.add(id(obj))
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
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self.hits = self.misses = 0

    @property
    def size(self) -> int:
        return sum(n for _, n in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

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
            size = nbytes(value)
            with self._lock:
                self.misses += 1
                self._items[key] = (value, size)
                self._items.move_to_end(key)
                while len(self._items) > 1 and self.size > self.max_bytes:
                    self._items.popitem(last=False)
                self._key_locks.pop(key, None)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
