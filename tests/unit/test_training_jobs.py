"""The server's training queue (explorer.jobs.training): one run per config however many ask, a bounded queue
that refuses in one sentence, and a run trained in the child process equal to the same run trained here."""
import threading

import pytest
import torch

from explorer.jobs import training
from explorer.learning import runs, train
from explorer.learning.config import TrainConfig
from explorer.words.i18n import language

TINY = TrainConfig(n_layers=2, n_heads=2, d_model=16, vocab=12, context=16, steps=12, batch=4, checkpoint_every=4,
                   repeat_min=3, repeat_max=6)


@pytest.fixture
def held(monkeypatch):
    """The worker's training held until ``release`` is set, so the queue can be looked at while it is full."""
    release, started = threading.Event(), []

    def fake_train(job):
        started.append(job.config)
        release.wait(30)

    monkeypatch.setattr(training, "train_in_child", fake_train)
    yield release, started
    release.set()


def test_thirty_students_pressing_train_get_one_run(held):
    trainer = training.Trainer()
    jobs, barrier = [], threading.Barrier(30)

    def press():
        barrier.wait()
        jobs.append(trainer.start(TINY))

    threads = [threading.Thread(target=press) for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(jobs) == 30 and all(job is jobs[0] for job in jobs)
    release, started = held
    release.set()
    jobs[0].done.wait(10)
    assert started == [TINY]


def test_a_full_queue_says_how_many_runs_are_ahead_in_one_sentence(held):
    trainer = training.Trainer(waiting=2)
    first, second = trainer.start(TINY), trainer.start(TINY.with_(seed=1))
    assert second.ahead() == 1 and first.ahead() == 0
    with pytest.raises(training.Busy) as busy, language("en"):
        trainer.start(TINY.with_(seed=2))
    with language("en"):
        assert "2 other runs" in str(busy.value)
    assert trainer.start(TINY.with_(seed=1)) is second          # asking again for a queued run is no new request
    held[0].set()
    second.done.wait(10)
    assert trainer.start(TINY.with_(seed=2)).config.seed == 2   # room again once the queue moved


def test_a_failed_run_is_forgotten_so_that_asking_again_tries_again(monkeypatch):
    def broken(job):
        raise RuntimeError("the child died")

    monkeypatch.setattr(training, "train_in_child", broken)
    trainer = training.Trainer()
    job = trainer.start(TINY)
    job.done.wait(10)
    assert isinstance(job.error, RuntimeError) and trainer.peek(TINY) is None


@pytest.mark.slow
def test_the_child_trains_the_same_run_as_this_process():
    trainer = training.Trainer()
    job = trainer.start(TINY)
    assert job.done.wait(120) and job.error is None
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        here = train.train(TINY)
    finally:
        torch.set_num_threads(before)
    assert runs.same_run(job.run, here) and job.fraction() == 1.0
    assert job.run.probe_tokens.tolist() == here.probe_tokens.tolist()
    assert sorted(job.run.snapshots) == sorted(here.snapshots)
