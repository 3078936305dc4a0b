"""The server's training queue (explorer.jobs.training): one run per config however many ask, a bounded queue
that refuses in one sentence, a child that hangs, dies or writes garbage ending its run in one sentence (logged
with its config) before the next run trains, and a run trained in the child process equal to the same run trained
here."""
import logging
import sys
import threading

import pytest
import torch

from explorer.jobs import training, training_child
from explorer.learning import runs, train
from explorer.learning.config import TrainConfig
from explorer.words.i18n import language

TINY = TrainConfig(n_layers=2, n_heads=2, d_model=16, vocab=12, context=16, steps=12, batch=4, checkpoint_every=4,
                   repeat_min=3, repeat_max=6)


@pytest.fixture
def held(monkeypatch):
    """The worker's training held until ``release`` is set, so the queue can be looked at while it is full."""
    release, started = threading.Event(), []

    def fake_train(job, trainer):
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


def test_a_failed_run_says_why_and_asking_again_tries_again(monkeypatch):
    def broken(job, trainer):
        raise RuntimeError("the child died")

    monkeypatch.setattr(training, "train_in_child", broken)
    trainer = training.Trainer()
    job = trainer.start(TINY)
    job.done.wait(10)
    assert isinstance(job.error, RuntimeError) and trainer.peek(TINY) is job   # kept, for its pages to say why
    again = trainer.start(TINY)
    assert again is not job and again.done.wait(10) and trainer.peek(TINY) is again


FOREVER = "import sys, time; sys.stdin.readline(); time.sleep(3600)"
DIES = "import sys; sys.stdin.readline(); sys.stderr.write('out of memory in the child\\n'); sys.exit(3)"
GARBAGE = "import sys, time; sys.stdin.readline(); print('this is no run', flush=True); time.sleep(3600)"


@pytest.fixture
def logged():
    """The lines of the server's log ("explorer") while the test runs, and an event set by the child's own line."""
    lines, child_said = [], threading.Event()

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
            if "out of memory in the child" in lines[-1]:
                child_said.set()

    handler, log = Keep(), logging.getLogger("explorer")
    log.addHandler(handler)
    yield lines, child_said
    log.removeHandler(handler)


@pytest.mark.parametrize("code, sentence", [
    (FOREVER, "the training process stopped answering"),
    (DIES, "the training process ended without its run"),
    (GARBAGE, "the training process sent something that is not a run"),
], ids=["sleeps-forever", "dies-at-once", "writes-garbage"])
def test_a_broken_child_ends_its_run_in_one_sentence_and_the_next_run_trains(code, sentence, logged):
    trainer = training.Trainer(child=[sys.executable, "-c", code], deadline_s=3)
    broken = trainer.start(TINY)
    assert broken.done.wait(60)
    with language("en"):
        assert str(broken.error) == sentence
    assert trainer.peek(TINY) is broken   # kept for the page to say why; pressing Train again trains again
    lines, child_said = logged
    assert any(sentence in line and repr(TINY) in line for line in lines)   # the server's log says which run
    if code == DIES:
        assert child_said.wait(10)
        assert any("out of memory in the child" in line and repr(TINY) in line for line in lines)
    trainer.child, trainer.deadline_s = list(training_child.COMMAND), 120.0
    again = trainer.start(TINY)
    assert again.done.wait(120) and again.error is None and again.run.checkpoints[-1].step == TINY.steps


def test_a_spare_child_starts_while_a_run_waits_and_is_ended_when_nothing_waits(tmp_path):
    go = tmp_path / "go"   # each child takes its config, waits for this file, and ends without a run
    code = (f"import os, sys, time; sys.stdin.readline()\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)")
    trainer = training.Trainer(child=[sys.executable, "-c", code])
    first = trainer.start(TINY)
    assert trainer.spare is None   # nothing waits: the run's own child, no spare
    second = trainer.start(TINY.with_(seed=1))
    spare = trainer.spare
    assert spare is not None and spare.process.poll() is None   # started for the waiting run
    go.touch()
    assert first.done.wait(30) and second.done.wait(30)
    assert trainer.spare is None and spare.process.wait(10) is not None   # the second run's child, ended


def test_the_pipe_carries_a_run_in_parts_and_refuses_what_is_not_a_message():
    import io

    run = train.train(TINY)
    pipe = io.BytesIO()
    for c in run.checkpoints:
        training_child.send(pipe, "checkpoint", train.Run(TINY, run.probe_tokens, checkpoints=[c]))
    training_child.send(pipe, "end", train.Run(TINY, run.probe_tokens, snapshots=run.snapshots, stopped=run.stopped,
                                               seconds=run.seconds), run.snapshots)
    pipe.seek(0)
    got = [training_child.receive(pipe) for _ in range(len(run.checkpoints) + 1)]
    assert [kind for kind, _ in got] == ["checkpoint"] * len(run.checkpoints) + ["end"]
    whole = train.Run(TINY, run.probe_tokens, [c for _, part in got for c in part.checkpoints])
    assert runs.same_run(whole, run) and sorted(got[-1][1].snapshots) == sorted(run.snapshots)
    with pytest.raises(EOFError):
        training_child.receive(pipe)
    for garbage in (b"this is no run\n", b'{"kind": "end", "size": 5}\nhello', b'{"kind": "end", "size": -1}\n'):
        with pytest.raises(ValueError):
            training_child.receive(io.BytesIO(garbage))


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
