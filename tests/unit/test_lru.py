"""The shared result store: bounded by bytes, computes once, counts self-referencing results once."""
import threading

import numpy as np

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
