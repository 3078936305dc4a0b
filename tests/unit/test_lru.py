"""The shared result store: bounded by bytes, computes once, counts self-referencing results once."""
import gc
import threading
import tracemalloc

import numpy as np
import pytest

from explorer.serving import cache
from explorer.serving.cache import ByteLRU, nbytes


class Result:
    def __init__(self, n):
        self.weights = np.zeros(n, dtype=np.uint8)
        self.tokens = ["a"] * 10
        self.parts = {"encoder": self, "cross": np.zeros(n, dtype=np.uint8)}


def test_nbytes_counts_each_array_once_even_in_a_cycle():
    assert nbytes(Result(100)) == 200


def test_nbytes_counts_a_tensors_whole_storage_once_across_its_views():
    """A result keeps captured queries and keys: torch views (a transposed projection) hold their whole storage,
    and two views of one storage (or one mask shared by every layer) hold it once."""
    import torch

    projection = torch.zeros(2, 8, 3, dtype=torch.float32)            # 48 floats: 192 bytes
    q, k = projection[:, :4].transpose(0, 1), projection[:, 4:]       # views of it
    mask = torch.zeros(5, dtype=torch.float64)                        # 40 bytes, shared by both layers
    records = ({"q": q, "k": k, "mask": mask}, {"q": q.clone(), "mask": mask})
    assert nbytes(records) == 192 + 40 + 4 * 2 * 3 * 4


def test_store_evicts_oldest_beyond_its_byte_budget():
    store = ByteLRU(max_bytes=500)
    for key in range(4):
        store.get_or_compute(key, lambda: Result(100))  # 200 bytes each
    assert len(store) == 2 and store.size <= 500
    store.get_or_compute(3, lambda: Result(100))
    assert store.hits == 1


def test_concurrent_requests_compute_once():
    store, calls = ByteLRU(10_000), []

    def slow():
        calls.append(1)
        threading.Event().wait(0.05)
        return Result(10)
    threads = [threading.Thread(target=store.get_or_compute, args=("same", slow)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1


def test_failing_inputs_leave_nothing_behind():
    """Students typing bad texts: nothing is stored or counted for any of them, a key that failed is computed
    afresh when asked again, and the store keeps no memory per failed key (a per-key lock left behind would
    grow it by every bad text: measured here on the allocations made in cache.py)."""
    store = ByteLRU(1 << 20)

    def fail():
        raise ValueError("The text is empty")
    store.get_or_compute(("warm", "", None), lambda: Result(1))   # the store's own structures exist
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(2000):
            with pytest.raises(ValueError):
                store.get_or_compute(("model", " " * (i % 30), i), fail)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    only_cache = [tracemalloc.Filter(True, cache.__file__)]
    kept = sum(d.size_diff for d in after.filter_traces(only_cache).compare_to(before.filter_traces(only_cache),
                                                                               "filename"))
    assert kept < 2000 * 8, f"{kept} bytes kept by 2000 failed keys"   # a lock alone is 56 bytes a key
    assert len(store) == 1 and store.misses == 1 and store.peek(("model", "", 0)) is None
    calls = []
    assert isinstance(store.get_or_compute(("model", "", 0), lambda: calls.append(1) or Result(1)), Result)
    assert calls == [1] and len(store) == 2
