"""The render store behind ``explorer.ui.drawn_once``: its budget, its keys, whole views evicted oldest first, and
one computation however many sessions ask at once. What it replays is checked page by page in
tests/app/test_drawn_once_app.py."""
from __future__ import annotations

import threading

import numpy as np

from explorer.serving import regions
from explorer.serving.cache import ByteLRU
from explorer.ui import drawn_once


def test_budget_is_read_in_megabytes_and_zero_switches_replay_off():
    default = regions.REGIONS["drawn"].default_mb * 2**20
    assert regions.budget_bytes("drawn", {}) == default == 64 * 2**20
    assert regions.budget_bytes("drawn", {"EXPLORER_RENDER_CACHE_MB": "1.5"}) == int(1.5 * 2**20)
    assert regions.budget_bytes("drawn", {"EXPLORER_RENDER_CACHE_MB": "0"}) == 0
    assert regions.budget_bytes("drawn", {"EXPLORER_RENDER_CACHE_MB": "-3"}) == 0
    assert regions.budget_bytes("drawn", {"EXPLORER_RENDER_CACHE_MB": "lots"}) == default
    assert drawn_once.STORE is regions.store("drawn")


def test_a_key_is_a_fixed_size_digest_of_every_part():
    short = drawn_once.view_key("pages/heatmaps.py", "heatmap", ("all-MiniLM-L6-v2", "A text.", 2, 3))
    huge = drawn_once.view_key("pages/heatmaps.py", "heatmap", ("all-MiniLM-L6-v2", "<script>" * 50_000, 2, 3))
    assert len(short) == len(huge) == 20   # a hostile text cannot grow a key
    assert short == drawn_once.view_key("pages/heatmaps.py", "heatmap", ("all-MiniLM-L6-v2", "A text.", 2, 3))
    for changed in [("pages/flip.py", "heatmap", ("all-MiniLM-L6-v2", "A text.", 2, 3)),
                    ("pages/heatmaps.py", "bars", ("all-MiniLM-L6-v2", "A text.", 2, 3)),
                    ("pages/heatmaps.py", "heatmap", ("SmolLM2-135M-Instruct", "A text.", 2, 3)),
                    ("pages/heatmaps.py", "heatmap", ("all-MiniLM-L6-v2", "A text!", 2, 3)),
                    ("pages/heatmaps.py", "heatmap", ("all-MiniLM-L6-v2", "A text.", 3, 2)),
                    ("pages/heatmaps.py", "heatmap", ("all-MiniLM-L6-v2", "A text.", 2, 3.0000001))]:
        assert drawn_once.view_key(*changed) != short, changed
    a = np.arange(12.0).reshape(3, 4)
    b = a.copy()
    b[2, 3] += 1e-9
    assert drawn_once.view_key("x", a) == drawn_once.view_key("x", a.copy())
    assert drawn_once.view_key("x", a) != drawn_once.view_key("x", b)   # arrays by their bytes, not their repr


class Drawn:
    """A recording's stand-in: only its size matters to the store."""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes


def test_whole_views_are_evicted_oldest_first_when_the_budget_is_passed():
    store = ByteLRU(1000, sizeof=lambda r: r.nbytes)
    for view in "abc":
        store.get_or_compute(view, lambda: Drawn(400))   # 400, 800, then 1200 > 1000: "a" goes
    assert store.size == 800 and store.peek("a") is None and store.peek("b") and store.peek("c")
    store.peek("b")                                      # used: "c" is now the oldest
    store.get_or_compute("d", lambda: Drawn(300))
    assert store.peek("c") is None and {k for k in "bd" if store.peek(k)} == {"b", "d"}
    store.get_or_compute("huge", lambda: Drawn(5000))    # larger than the budget: kept alone, nothing else
    assert len(store) == 1 and store.peek("huge").nbytes == 5000


def test_thirty_sessions_asking_for_one_view_draw_it_once_also_after_an_eviction():
    """The thirty sessions start together (a barrier) and the first draw does not end before every one of them has
    asked: they overlap by construction, and the test fails if they did not."""
    store = ByteLRU(10_000, sizeof=lambda r: r.nbytes)
    calls, asked, seen = [], [], []
    everyone = threading.Condition()

    def draw():
        calls.append(threading.get_ident())
        with everyone:   # a slow first draw: it ends only once every session has asked for the view
            everyone.wait_for(lambda: len(asked) == 30, timeout=30)
            seen.append(len(asked))
        return Drawn(100)

    def session(barrier, got):
        barrier.wait()
        with everyone:
            asked.append(threading.get_ident())
            everyone.notify_all()
        got.append(store.get_or_compute("step 3", draw))

    def class_asks():
        asked.clear()
        got, barrier = [], threading.Barrier(30)
        threads = [threading.Thread(target=session, args=(barrier, got)) for _ in range(30)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return got

    got = class_asks()
    assert seen == [30]   # every session asked while the one draw was under way
    assert len(calls) == 1 and len(got) == 30 and all(g is got[0] for g in got)
    store.clear()   # evicted while the class is on the step
    got = class_asks()
    assert seen == [30, 30] and len(calls) == 2 and all(g is got[0] for g in got)


def test_a_failed_draw_stores_nothing_and_the_next_session_draws():
    store = ByteLRU(10_000, sizeof=lambda r: r.nbytes)

    def broken():
        raise RuntimeError("stopped by a newer run")

    try:
        store.get_or_compute("v", broken)
    except RuntimeError:
        pass
    assert store.peek("v") is None
    assert store.get_or_compute("v", lambda: Drawn(1)).nbytes == 1
