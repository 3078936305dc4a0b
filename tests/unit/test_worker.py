"""The model worker: one load per model in a thread of its own, shared by every asker, retried after a failure; any
shared work past its deadline ends in one sentence, logged with its key."""
import logging
import threading

import pytest

from explorer.jobs.worker import Jobs, ModelWorker, Stalled
from explorer.model import registry
from explorer.words.i18n import language

ENC, DEC = registry.EMBEDDED_ENCODER, registry.EMBEDDED_DECODER


@pytest.fixture
def caplog_explorer():
    """The lines of the server's log ("explorer", which does not propagate to the root) while the test runs."""
    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    handler, log = Keep(), logging.getLogger("explorer")
    log.addHandler(handler)
    yield lines
    log.removeHandler(handler)


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


def test_work_past_its_deadline_ends_in_one_sentence_in_the_log_with_its_key_and_runs_again(caplog_explorer):
    gate, calls = threading.Event(), []

    def stuck(progress):
        calls.append(1)
        gate.wait(30)   # stands in for a download that stopped answering
        return "late"

    jobs = Jobs(keep=4, deadline_s=0.5)
    job = jobs.run(("sweep", "minilm"), stuck, "the sweep")
    with pytest.raises(Stalled), language("en"):
        job.wait(30)
    with language("en"):
        assert str(job.error) == "This work took too long and the server gave up on it: ask again to retry."
    assert any("the sweep" in line and "('sweep', 'minilm')" in line and "stopped answering" in line
               for line in caplog_explorer)
    assert jobs.peek(("sweep", "minilm")) is None   # forgotten: asking again starts it again
    gate.set()
    again = jobs.run(("sweep", "minilm"), lambda progress: "on time", "the sweep")
    assert again.wait(30) == "on time" and job.value is None   # the stalled thread's late value is dropped


def test_a_failure_reaches_the_log_with_its_key(caplog_explorer):
    def broken(progress):
        raise ValueError("no such head")

    job = Jobs(keep=4).run(("roles", "minilm", 3), broken, "roles")
    with pytest.raises(ValueError):
        job.wait(30)
    assert any("roles" in line and "('roles', 'minilm', 3)" in line and "no such head" in line
               for line in caplog_explorer)
