"""Generations of several sessions take turns step by step in the fair queue, and a generation its session has
replaced stops without being stored (the page helper's runner, on a tiny random Llama)."""
import threading
import time

import pytest

from explorer.generation.sampling import Settings
from explorer.generation.steps import generate
from explorer.serving.fairqueue import FairQueue
from explorer.ui import cached
from explorer.ui.views import generation_run as gx

PROMPT = "the animal didn't cross the street"


def test_sessions_take_turns_step_by_step(tiny_loaded):
    loaded = tiny_loaded("llama")
    queue = FairQueue(workers=1)
    order, gate = [], threading.Barrier(3)

    def runner(session):
        def run(fn):
            def step():
                order.append(session)
                time.sleep(0.05)   # a real model's step: long enough for the others to queue their next one
                return fn()
            return queue.submit(session, None, step).result()
        return run

    def write(session):
        gate.wait()
        generate(loaded, PROMPT, Settings(new_tokens=6), run=runner(session), check=False)

    threads = [threading.Thread(target=write, args=(s,)) for s in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    queue.shutdown()
    assert sorted(order) == sorted(["a", "b", "c"] * 6)
    # once all three are writing, nobody takes two steps in a row while another waits: round robin
    started = max(order.index(s) for s in "abc")
    ending = min(max(i for i, s in enumerate(order) if s == x) for x in "abc")
    middle = order[started:ending + 1]
    assert all(x != y for x, y in zip(middle, middle[1:])), order


def test_a_replaced_generation_stops_unstored(tiny_loaded, tiny_folder, monkeypatch):
    folder = str(tiny_folder("llama"))
    cached.WORKER.get(folder)
    monkeypatch.setenv("EXPLORER_FORWARD_QUEUE", "0")
    settings = Settings(new_tokens=8)
    key, newer = ("generate", folder, PROMPT, settings), ("generate", folder, "the cat", settings)
    calls = []

    def progress(fraction, text):
        calls.append(text)
        if len(calls) == 2:                        # the student typed another prompt meanwhile
            gx._latest["s1"] = newer

    gx._latest["s1"] = key
    with pytest.raises(gx.Abandoned):
        gx._work(folder, key, PROMPT, settings, "s1", progress)
    assert len(calls) == 2 and cached.result_cache().peek(key) is None   # nothing half-written kept
    gx._latest["s1"] = key
    gen = gx._work(folder, key, PROMPT, settings, "s1", lambda f, t: None)
    assert cached.result_cache().peek(key) is gen and not gen.weights.flags.writeable
