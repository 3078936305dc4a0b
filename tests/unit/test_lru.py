"""The shared result store: bounded by bytes, computes once, counts self-referencing results once."""
import threading

import numpy as np

from explorer.lru import ByteLRU, nbytes


class Result:
    def __init__(self, n):
        self.weights = np.zeros(n, dtype=np.uint8)
        self.tokens = ["a"] * 10
        self.parts = {"encoder": self, "cross": np.zeros(n, dtype=np.uint8)}


def test_nbytes_counts_each_array_once_even_in_a_cycle():
    assert nbytes(Result(100)) == 200


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
