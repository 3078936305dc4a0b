"""The model worker: one load per model in a thread of its own, shared by every asker, retried after a failure."""
import threading

import pytest

from explorer.jobs.worker import ModelWorker
from explorer.model import registry

ENC, DEC = registry.EMBEDDED_ENCODER, registry.EMBEDDED_DECODER


class GatedLoader:
    """Stands in for load_model: reports progress, then waits for the test to let it finish."""

    def __init__(self):
        self.calls, self.gate, self.started, self.fail = [], threading.Event(), threading.Event(), False

    def __call__(self, spec, progress):
        self.calls.append((spec.name, threading.current_thread().name))
        progress(0.5, f"half of {spec.name}")
        self.started.set()
        assert self.gate.wait(10)
        if self.fail:
            raise registry.ModelUnavailable(f"{spec.name} failed on purpose")
        return f"model:{spec.name}"


def test_one_load_shared_by_every_asker_in_its_own_thread():
    loader = GatedLoader()
    worker = ModelWorker(loader)
    first = worker.request(ENC)
    assert loader.started.wait(5)
    assert worker.request(ENC) is first and not first.done.is_set()
    assert (first.fraction, first.message) == (0.5, f"half of {ENC}")
    with pytest.raises(TimeoutError):
        first.wait(0.01)
    loader.gate.set()
    assert first.wait(5) == f"model:{ENC}" and worker.get(ENC) == f"model:{ENC}"
    assert len(loader.calls) == 1 and loader.calls[0][1] == f"job-{ENC}"
    assert loader.calls[0][1] != threading.current_thread().name
    assert worker.loaded() == [ENC]


def test_a_failed_load_reaches_its_waiters_and_the_next_request_tries_again():
    loader = GatedLoader()
    loader.fail = True
    loader.gate.set()
    worker = ModelWorker(loader)
    job = worker.request(DEC)
    with pytest.raises(registry.ModelUnavailable, match="failed on purpose"):
        job.wait(5)
    loader.fail = False
    again = worker.request(DEC)
    assert again is not job and again.wait(5) == f"model:{DEC}" and len(loader.calls) == 2


def test_a_name_that_is_no_model_starts_nothing():
    loader = GatedLoader()
    with pytest.raises(registry.ModelUnavailable):
        ModelWorker(loader).request("../../etc")
    assert loader.calls == []


def test_the_least_recently_asked_finished_model_goes_first():
    loader = GatedLoader()
    loader.gate.set()
    worker = ModelWorker(loader, max_models=1)
    worker.get(ENC, 5)
    worker.get(DEC, 5)
    assert worker.loaded() == [DEC]
    worker.get(ENC, 5)
    assert [name for name, _ in loader.calls] == [ENC, DEC, ENC]
