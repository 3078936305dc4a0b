"""Generations of several sessions take turns step by step in the fair queue (the core's ``generate`` with a
runner that submits each step's forward to a ``FairQueue``, on a tiny random Llama). The page's own runner (a
replaced generation stops unstored) is tested with the page, in tests/app/test_write_app.py."""
import threading

from explorer.generation.sampling import Settings
from explorer.generation.steps import generate
from explorer.serving.fairqueue import FairQueue

PROMPT = "the animal didn't cross the street"


def test_sessions_take_turns_step_by_step(tiny_loaded):
    loaded = tiny_loaded("llama")
    queue = FairQueue(workers=1)
    order, gate = [], threading.Barrier(3)
    writing, changed = {"a", "b", "c"}, threading.Condition()

    def others_queued(session) -> bool:
        return queue.waiting() >= len(writing - {session})

    def runner(session):
        def run(fn):
            def step():
                order.append(session)
                # a real model's step is long: every other session still writing queues its next step meanwhile
                with changed:
                    changed.wait_for(lambda: others_queued(session), timeout=30)
                return fn()
            ticket = queue.submit(session, None, step)
            with changed:
                changed.notify_all()
            return ticket.result()
        return run

    def write(session):
        gate.wait()
        try:
            generate(loaded, PROMPT, Settings(new_tokens=6), run=runner(session), check=False)
        finally:
            with changed:
                writing.discard(session)
                changed.notify_all()

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
    # and since every step waits until the others have queued theirs, the turns are the same three throughout
    assert sorted(order[:3]) == ["a", "b", "c"] and order == order[:3] * 6, order
