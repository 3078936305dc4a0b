"""The one table of the shared jobs a server runs (explorer/jobs/keepers.py) and where their finished values live: a
job stays in its table only while it runs, its value goes to its row's cache region (bounded by bytes and count,
listed in /_explorer/stats), and a value the region dropped is computed again on the next ask."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
import torch

from explorer.jobs import keepers, training
from explorer.jobs.worker import Jobs, ModelWorker
from explorer.learning.config import TrainConfig
from explorer.serving import regions
from explorer.serving.cache import ByteLRU


def test_each_keeper_is_one_jobs_whose_finished_values_go_to_its_rows_region():
    assert keepers.jobs("maps") is keepers.jobs("maps")
    for name, row in keepers.KEEPERS.items():
        held = keepers.jobs(name)
        assert held.store is regions.store(row.region) and held.tag == name, name
    assert keepers.jobs("corpus-passes").store is regions.store("work")
    assert keepers.jobs("models").store is regions.store("models")
    assert keepers.jobs("generations").store is regions.store("results")
    with pytest.raises(KeyError):
        keepers.jobs("no such keeper")


def test_the_pages_keepers_are_the_tables():
    from explorer.ui import cached, prefetch
    from explorer.ui.views import atlas, generation_run, geometry, heads_do, value_roles

    assert (geometry.PASSES, geometry.MAPS) == (keepers.jobs("corpus-passes"), keepers.jobs("maps"))
    assert (heads_do.MEASURES, heads_do.SWEEPS) == (keepers.jobs("measures"), keepers.jobs("sweeps"))
    assert value_roles.ROLES is keepers.jobs("roles") and generation_run.GENERATIONS is keepers.jobs("generations")
    assert prefetch.PREPARED is keepers.jobs("prepared") and cached.EXPLANATIONS is keepers.jobs("explanations")
    assert cached.WORKER._jobs is keepers.jobs("models") and atlas.PASSES is keepers.jobs("atlas-passes")
    assert training.trainer().store is regions.store(keepers.TRAINING.region)


def _array_work(n: int, calls: list):
    def work(progress):
        calls.append(n)
        return np.zeros(n, dtype=np.uint8)
    return work


def test_a_finished_value_leaves_the_job_table_for_the_region():
    store = ByteLRU(10_000)
    jobs, calls = Jobs(store=store, tag="t"), []
    value = jobs.run("a", _array_work(100, calls), "a").wait(10)
    assert jobs.running() == [] and jobs._running == {}          # the table holds nothing finished
    assert store.peek(("t", "a")) is value and store.size == 100   # the region does, by its bytes
    again = jobs.peek("a")
    assert again.done.is_set() and again.wait(0) is value and jobs.finished() == ["a"] and jobs.keys() == ["a"]
    assert jobs.run("a", _array_work(100, calls), "a").wait(0) is value and calls == [100]   # asked again: no work
    assert jobs.held_bytes() == 100


def test_a_value_the_region_dropped_is_computed_again_on_the_next_ask():
    store = ByteLRU(250)
    jobs, calls = Jobs(store=store, tag="t"), []
    first = jobs.run("a", _array_work(100, calls), "a").wait(10)
    jobs.run("b", _array_work(100, calls), "b").wait(10)
    jobs.run("c", _array_work(100, calls), "c").wait(10)          # 300 bytes > 250: "a", the oldest, goes
    assert jobs.peek("a") is None and store.size <= 250 and set(jobs.finished()) == {"b", "c"}
    again = jobs.run("a", _array_work(100, calls), "a").wait(10)
    assert calls == [100, 100, 100, 100] and again is not first   # computed again


def test_a_running_job_stays_in_its_table_whatever_the_region_drops():
    store = ByteLRU(150)
    jobs, gate, calls = Jobs(store=store, tag="t"), threading.Event(), []

    def slow(progress):
        assert gate.wait(10)
        return np.zeros(100, dtype=np.uint8)

    running = jobs.run("slow", slow, "slow")
    for key in "xyz":                                               # the region turns over meanwhile
        jobs.run(key, _array_work(100, calls), key).wait(10)
    assert jobs.peek("slow") is running and jobs.running() == ["slow"] and jobs.run("slow", slow) is running
    gate.set()
    assert running.wait(10).nbytes == 100 and jobs.running() == [] and jobs.finished()[-1] == "slow"


def test_a_failure_is_not_stored_and_the_next_ask_tries_again():
    store, calls = ByteLRU(1000), []
    jobs = Jobs(store=store, tag="t")

    def broken(progress):
        calls.append(1)
        raise ValueError("no")

    with pytest.raises(ValueError):
        jobs.run("k", broken).wait(10)
    assert len(store) == 0 and jobs.peek("k") is None
    assert jobs.run("k", _array_work(10, calls)).wait(10).nbytes == 10 and calls == [1, 10]


def test_keepers_sharing_a_region_see_only_their_own_values():
    store = ByteLRU(10_000)
    a, b = Jobs(store=store, tag="a"), Jobs(store=store, tag="b")
    a.run("k", _array_work(10, [])).wait(10)
    b.run("k", _array_work(20, [])).wait(10)
    assert a.peek("k").value.nbytes == 10 and b.peek("k").value.nbytes == 20
    assert (a.finished(), b.finished(), a.held_bytes(), b.held_bytes()) == (["k"], ["k"], 10, 20)


@pytest.mark.parametrize("max_bytes, max_entries, sizes", [
    (1000, None, [300, 300, 300, 300, 300]),
    (10_000, 3, [10, 10, 10, 10, 10]),
    (500, 4, [100, 400, 50, 50, 50, 50, 300]),
])
def test_a_store_never_exceeds_its_bounds(max_bytes, max_entries, sizes):
    store = ByteLRU(max_bytes, max_entries=max_entries)
    for i, n in enumerate(sizes):
        store.put(i, np.zeros(n, dtype=np.uint8))
        assert store.size <= max_bytes and (max_entries is None or len(store) <= max_entries)
        assert store.size == sum(n for _, n in store.sizes())        # the running total is the sum
    assert store.keys()[-1] == len(sizes) - 1                        # the newest stays


def test_one_value_larger_than_the_budget_stays_alone():
    store = ByteLRU(100)
    store.put("small", np.zeros(10, dtype=np.uint8))
    store.put("huge", np.zeros(1000, dtype=np.uint8))
    assert store.keys() == ["huge"] and store.size == 1000


def test_the_models_region_counts_parameters_and_buffers_once_and_bounds_the_count():
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10, bias=False),
                                torch.nn.BatchNorm1d(10))
    model[1].weight = model[0].weight                                 # tied: counted once
    expected = (10 * 4 + 10 * 2) * 4 + (10 * 2) * 4 + 8               # weights; BN's running mean/var; its count
    assert regions.model_bytes(type("Loaded", (), {"model": model})()) == expected
    half = model.half()
    assert regions.model_bytes(type("Loaded", (), {"model": half})()) == (10 * 4 + 10 * 2 + 10 * 2) * 2 + 8
    assert regions.max_entries("models", {"EXPLORER_MAX_MODELS": "5"}) == 5
    assert regions.max_entries("models", {}) == 3 and regions.max_entries("work", {}) == regions.WORK_ENTRIES
    assert regions.budget_bytes("models", {"EXPLORER_MODEL_CACHE_MB": "1"}) == 2**20


def test_a_model_worker_keeps_its_loads_in_its_store():
    loads = []
    worker = ModelWorker(lambda spec, progress: loads.append(spec.name) or f"model:{spec.name}", max_models=1)
    from explorer.model import registry
    worker.get(registry.EMBEDDED_ENCODER, 10)
    worker.get(registry.EMBEDDED_DECODER, 10)
    assert worker.loaded() == [registry.EMBEDDED_DECODER] and worker.max_models == 1
    assert worker._jobs.running() == [] and len(worker._jobs.store) == 1


def test_the_report_lists_every_keeper_with_its_region_and_bytes(monkeypatch):
    key = ("report test", 1)
    job = keepers.jobs("sweeps").run(key, lambda progress: np.zeros(64, dtype=np.uint8), "a sweep")
    assert job.wait(30).nbytes == 64
    store = ByteLRU(1 << 20)
    trainer = training.Trainer(child=[sys.executable, "-c", "import sys; sys.stdin.readline()"], store=store)
    monkeypatch.setattr(training, "_TRAINER", trainer)
    ran = trainer.start(TrainConfig(steps=10))
    assert ran.done.wait(30)
    report = keepers.report()
    assert set(report) == {*keepers.KEEPERS, "training"}
    assert report["sweeps"]["region"] == "work" and report["sweeps"]["finished"] >= 1
    assert report["sweeps"]["bytes"] >= 64 and report["sweeps"]["running"] == 0
    assert report["training"] == {"what": keepers.TRAINING.what, "region": "work", "running": 0, "finished": 1,
                                  "bytes": ran.nbytes}
    assert trainer._jobs == {}                                          # the queue holds no ended run: the region does
    assert trainer.peek(TrainConfig(steps=10)) is ran and store.peek((training.TAG, TrainConfig(steps=10).key())) is ran


def test_the_stats_list_every_region_and_every_keeper_and_no_keeper_names_a_missing_region():
    import asyncio
    import json

    import app

    got = json.loads(asyncio.run(app.stats(None)).body)
    assert set(got["regions"]) == set(regions.REGIONS) >= {"models", "work"}
    assert set(got["keepers"]) == {*keepers.KEEPERS, "training"}
    for name, row in got["keepers"].items():
        assert row["region"] in got["regions"], name
    for name, row in got["regions"].items():
        assert {"bytes", "max_bytes", "max_entries", "entries", "setting"} <= set(row), name
        assert row["bytes"] <= row["max_bytes"] or row["entries"] <= 1 or row["stores"] > 1, name
    assert got["regions"]["models"]["max_entries"] == regions.max_entries("models")
