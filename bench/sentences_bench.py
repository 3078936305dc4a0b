"""Benchmark rows for the class's own sentences (issue 47), on both embedded models, without a browser.

    .venv/bin/python bench/sentences_bench.py [--repeat 5] [--sentences 40] [--words 20] [--device cpu]
    .venv/bin/python bench/sentences_bench.py --smoke    # 4 sentences of 5 words, once (CI: that it still runs)

Rows (median wall and CPU time of the server's work, the load average printed beside them):
  S1 the last of 40 sentences (20 words each) submitted -> the projector's figure ready: the last student's write to
     the store (SQLite), the teacher's read of the sentences, the one padded batch through the model, the summary,
     the class question and the figure serialised as Streamlit sends it (plotly JSON). Each repetition's last
     sentence is new, so nothing is cached. The batch stops after the shown layer (the middle one), as the
     panel's does.                                                  target ≤ 2 s (encoder) / ≤ 5 s (decoder)
  S3 one sentence in the batch vs the same sentence alone: the largest |difference| of any weight over the 40
     sentences, every layer and head (a full batch), and the stopped batch vs the full one        target ≤ 1e-5
(S2, 30 followers receiving the figure, is bench/sentences_follow_bench.py: websocket clients on a server.)
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

NOUNS = ("dog cat bird trophy suitcase teacher student phone car ball river table window garden hippopotamus "
         "wheelbarrow xylophone kaleidoscope").split()   # the last ones take several tokens: the batch is padded
VERBS = "chased saw followed dropped carried found pushed watched".split()
FILL = "because it was very tired after the long day and everyone in the town knew that well".split()


def sentence(rng: random.Random, words: int) -> str:
    """A sentence of ``words`` words with "it" after two nouns."""
    head = ["The", rng.choice(NOUNS), rng.choice(VERBS), "the", rng.choice(NOUNS)]
    return " ".join((head + FILL)[:words]) + "."


def row(loaded, repeat: int, n: int, words: int) -> tuple[float, float, float]:
    """S1's median wall and CPU seconds, and S3's largest difference."""
    import numpy as np
    import plotly.io as pio

    from explorer.attention.result import extract
    from explorer.classroom import SqliteStore
    from explorer.plots.sentences import head_across
    from explorer.sentences.batch import class_attention
    from explorer.sentences.head_in_words import follow_question

    rng = random.Random(47)
    texts = [sentence(rng, words) for _ in range(n - 1)]
    layer = loaded.model.config.num_hidden_layers // 2
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "c.sqlite3")
        code, key = store.create_room()
        for i in range(n):
            store.join(code, f"s{i}", f"n{i}")
        store.open_sentences(code, key, "Write a sentence with it.")
        for i, text in enumerate(texts):
            store.write_sentence(code, f"s{i}", text)
        for k in range(repeat + 1):   # the first is a warm-up
            last = sentence(rng, words - 1) + f" {k}"
            wall, cpu = time.perf_counter(), time.process_time()
            store.write_sentence(code, f"s{n - 1}", last)
            shown = store.class_sentences(code)
            ca = class_attention(loaded, shown, up_to=layer)   # as the panel: stop after the shown layer
            follow_question(ca, layer, "it")
            pio.to_json(head_across(ca, layer, 0, "it").to_dict(), validate=False)
            if k:
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
    lengths = {w.shape[-1] for w in ca.weights}
    print(f"   tokens per sentence: {min(lengths)}-{max(lengths)}")
    whole = class_attention(loaded, ca.sentences)   # S3 over every layer and head
    worst = max(float(np.abs(w - extract(loaded, t).weights).max()) for t, w in zip(whole.sentences, whole.weights))
    worst = max(worst, max(float(np.abs(w - v[:layer + 1]).max()) for w, v in zip(ca.weights, whole.weights)))
    return statistics.median(walls), statistics.median(cpus), worst


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--words", type=int, default=20)
    parser.add_argument("--device", default=None)
    parser.add_argument("--smoke", action="store_true", help="one repetition of 4 sentences of 5 words (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat, args.sentences, args.words = 1, 4, 5
    from explorer.model.loading import load_model
    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    for name, target in ((EMBEDDED_ENCODER, 2.0), (EMBEDDED_DECODER, 5.0)):
        loaded = load_model(name, device=args.device)
        wall, cpu, worst = row(loaded, args.repeat, args.sentences, args.words)
        print(f"S1 {name} on {loaded.device}: last of {args.sentences} sentences ({args.words} words) -> figure: "
              f"wall {wall:.3f} s, CPU {cpu:.3f} s (target ≤ {target:g} s: {'yes' if wall <= target else 'no'}); "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"S3 {name}: batch vs alone, largest |difference| {worst:.2e} (target ≤ 1e-5: "
              f"{'yes' if worst <= 1e-5 else 'no'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
