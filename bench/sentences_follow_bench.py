"""Row S2 of the class's own sentences (issue 47): 30 followers receive the figure after the teacher shows it.

    .venv/bin/python bench/sentences_follow_bench.py [--followers 30] [--rounds 3] [--model encoder|decoder|both]
    .venv/bin/python bench/sentences_follow_bench.py --smoke    # 2 followers, 1 round, short pauses (CI)

One server (``streamlit run app.py``) with a temporary classroom file; a room made through the store API, its view
the Classroom page; N browser-less followers (``bench/wsclient.py``'s websocket client, as ``bench/lesson_bench.py``
drives them) joined and on that page. Each round the teacher asks for sentences (``open_sentences``), every
student writes one of 20 words through the store (new ones each round, so no batch is cached), and, once the
followers have settled, the teacher shows them: ``show_sentences`` with the model, its middle layer, head 0 and no
word (one heatmap per sentence: a word would first ask the class question, which waits for the teacher's reveal).
A follower's figure is the plotly chart whose title says "across N sentences".
That write is what the teacher's click makes; the teacher's own run is not in the number, so the batch through the
model is computed inside it, by the first follower run that needs it (the others wait for that one: drawn once).
Per follower and round: the seconds from the write to the end (script_finished) of its first run that drew the
figure (a plotly chart), and the bytes it received meanwhile. Then "again": two seconds later the teacher shows
head 1 of the same layer, whose batch is already computed: the fan-out alone (the figure drawn once, replayed).
The first round (the model's load) is a warm-up, printed apart. ``--url`` (with ``--classroom``, its SQLite
file, and ``--pids``) sends the class to a server already running. Loopback only; a server started here is stopped
here.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.classroom_run import Follower, classroom_server, join_class  # noqa: E402
from bench.lesson_bench import cpu_seconds  # noqa: E402
from bench.sentences_bench import sentence  # noqa: E402
from bench.stats import median, quantile  # noqa: E402
from bench.ws_load import fmt_ms  # noqa: E402
from bench.wsclient import element_text  # noqa: E402


class FigureFollower(Follower):
    """A student on the Classroom page who notes when the first run that drew the figure finished."""

    def __init__(self, url: str, n: int):
        super().__init__(url)
        self.title = f"across {n} sentences"   # the figure's title names how many sentences it shows
        self.drew = False                  # the run under way drew a plotly chart
        self.prompt_seen = False           # a run drew the teacher's prompt (the student's panel is on the page)
        self.got: float | None = None      # when the first run that drew the figure finished
        self.bytes: int | None = None      # bytes received from the teacher's write to then

    def seen(self, element) -> None:
        text = element_text(element)
        if element.WhichOneof("type") == "plotly_chart" and self.title in text:
            self.drew = True
        elif PROMPT in text.replace("\\", ""):   # markdown escapes taken out
            self.prompt_seen = True

    def run_finished(self) -> None:
        if self.drew and self.got is None:
            self.got, self.bytes = time.monotonic(), self.received
        self.drew = False

    def reset(self) -> None:
        self.got, self.bytes, self.received, self.drew = None, None, 0, False


PROMPT = "Write a sentence where it could mean two things."


async def class_of(url: str, env: dict, n: int, rounds: int, model: str, pids: list[int],
                   pause: float = 1.0) -> dict:
    from explorer.classroom import open_store
    from explorer.model import embedded

    store = open_store({**env, "EXPLORER_MAX_STUDENTS": str(max(n, 60))})
    room, key = store.create_room()
    store.set_view(room, key, {"page": "pages/classroom.py", "params": {}, "opts": {}})
    followers = [FigureFollower(url, n) for _ in range(n)]
    await join_class(store, room, followers)
    layers, _heads = embedded.layers_and_heads(model)
    rng = random.Random(47)
    out = {"model": model, "followers": n, **{what: {"delays": [], "bytes": [], "missed": 0, "cpu": []}
                                              for what in ("show", "again")}}
    try:
        for r in range(rounds + 1):
            store.open_sentences(room, key, PROMPT)
            await asyncio.sleep(2.0 * pause)
            for f in followers:
                store.write_sentence(room, f.me, sentence(rng, 20) + f" {r}")
            await asyncio.sleep(3.0 * pause)   # every follower's rerun after the open has ended
            ready = sum(f.prompt_seen for f in followers)
            for head, what in ((0, "show"), (1, "again")):   # again: another head, the batch already computed
                if head:
                    await asyncio.sleep(2.0 * pause)
                for f in followers:
                    f.reset()
                t0, cpu0 = time.monotonic(), cpu_seconds(pids)
                store.show_sentences(room, key, {"model": model, "layer": layers // 2, "head": head, "word": ""})
                limit = t0 + 60
                while time.monotonic() < limit and not all(f.got is not None for f in followers):
                    await asyncio.sleep(0.02)
                got = [f.got - t0 for f in followers if f.got is not None]
                cpu = (cpu_seconds(pids) - cpu0) / n
                sizes = [f.bytes for f in followers if f.bytes is not None]
                name = "warm-up (the model's load)" if r == 0 else f"round {r}"
                print(f"  {model} {name} {what}: {len(got)}/{n} drew the figure ({ready} had the prompt), p50 "
                      f"{fmt_ms(median(got))}, p95 {fmt_ms(quantile(got, 0.95))}, max "
                      f"{fmt_ms(max(got) if got else None)}, {median(sizes) / 1000 if sizes else 0:.0f} kB a "
                      f"follower, server CPU {cpu * 1000:.0f} ms a follower; load average {os.getloadavg()[0]:.1f}",
                      flush=True)
                if r == 0:
                    continue
                row = out[what]
                row["delays"] += got
                row["missed"] += n - len(got)
                row["bytes"] += sizes
                row["cpu"].append(cpu)
    finally:
        await asyncio.gather(*(f.close() for f in followers), return_exceptions=True)
    for what, row in ((w, out[w]) for w in ("show", "again")):
        d = row["delays"]
        row["p50"], row["p95"], row["max"] = median(d), quantile(d, 0.95), max(d) if d else None
        print(f"S2 {model}, {what}: teacher's write -> follower's figure, {n} followers x {rounds} rounds: p50 "
              f"{fmt_ms(row['p50'])}, p95 {fmt_ms(row['p95'])} (target ≤ 1.5 s: "
              f"{'yes' if row['p95'] <= 1.5 else 'no'}), max {fmt_ms(row['max'])}, missed {row['missed']}, "
              f"{median(row['bytes']) / 1000:.0f} kB and {median(row['cpu']) * 1000:.0f} ms server CPU a follower",
              flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--followers", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--model", default="encoder", choices=["encoder", "decoder", "both"])
    p.add_argument("--url", help="a running server on loopback instead of one started here")
    p.add_argument("--classroom", help="with --url: its classroom file (SQLite)")
    p.add_argument("--pids", default="", help="with --url: the server processes whose CPU to count (comma-separated)")
    p.add_argument("--smoke", action="store_true", help="2 followers, 1 round, short pauses (CI: that it still runs)")
    args = p.parse_args(argv)
    pause = 1.0
    if args.smoke:
        args.followers, args.rounds, args.model, pause = 2, 1, "encoder", 0.4

    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    models = {"encoder": [EMBEDDED_ENCODER], "decoder": [EMBEDDED_DECODER],
              "both": [EMBEDDED_ENCODER, EMBEDDED_DECODER]}[args.model]
    if args.url:
        env = {"EXPLORER_CLASSROOM_DB": args.classroom or "", "EXPLORER_CLASSROOM_URL": ""}
        for model in models:
            asyncio.run(class_of(args.url, env, args.followers, args.rounds, model,
                                 [int(x) for x in args.pids.split(",") if x.strip()], pause))
        return 0
    students = str(max(args.followers, 60))
    with classroom_server("sentences-follow-bench", EXPLORER_MAX_STUDENTS=students) as (server, env):
        for model in models:
            asyncio.run(class_of(server.url, env, args.followers, args.rounds, model, [server.proc.pid], pause))
    return 0


if __name__ == "__main__":
    sys.exit(main())
