"""Floors under rows 1, 2 and 9: what a rerun of the heatmap page costs when it has nothing new to compute.

    .venv/bin/python bench/floors.py            # both embedded models, 20 texts each (about a minute)
    .venv/bin/python bench/floors.py --texts 40
    .venv/bin/python bench/floors.py --smoke     # one text, the encoder only: that it still runs (CI)
    .venv/bin/python bench/floors.py --split     # only a new-text rerun's CPU split by thread (page, extraction,
                                                 # AppTest's own), against the bare forward

For each model, in this process (AppTest, as rows 1 and 2 measure): a rerun with a new 32-token text (extraction
included), the same page run again with nothing changed (result, statistics and pictures already remembered: what
is left is Streamlit's elements and the figures' building), the bare forward pass, and AppTest's own rerun of a
one-line page. ``bare + unchanged`` over ``bare`` is the ratio a new text would reach if extraction, statistics and
pictures cost nothing. Row 9's floor: the encoder's forward on texts like ``ws_load``'s (CPU time), against its
target of 20 ms of server CPU a request. Results are written by hand into docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from explorer.serving import process  # noqa: E402

process.server_defaults()   # as app.py does, before numpy and torch

from bench import server_side as ss  # noqa: E402
from bench.stats import median, timed  # noqa: E402
from bench.texts import fit, single_token_markers  # noqa: E402
from bench.ws_load import make_text  # noqa: E402


def _heatmap_page(name: str, n_texts: int):
    """The heatmap page opened on ``name`` in AppTest (warm, the heap frozen as a server's) -> (the page, the
    loaded model, ``n_texts`` + 3 texts of ``ss.N_TOKENS`` tokens, each with its own marker)."""
    from streamlit.testing.v1 import AppTest

    from explorer.model.loading import freeze_heap
    from explorer.ui import cached

    ss.quiet()
    ss.apptest_as_a_server()
    at = AppTest.from_file(str(ss.PAGE), default_timeout=600)
    at.query_params["model"] = name
    at.run()
    freeze_heap()
    loaded = cached.get_model(name)
    markers = single_token_markers(loaded.tokenizer, n_texts + 3)
    return at, loaded, [fit(loaded.tokenizer, ss.N_TOKENS, seed=i, marker=m) for i, m in enumerate(markers)]


def page_floors(name: str, n_texts: int) -> dict:
    """Medians (seconds) of a new-text rerun, an unchanged rerun, the bare forward and a one-line page."""
    import torch
    from streamlit.testing.v1 import AppTest

    at, loaded, texts = _heatmap_page(name, n_texts)
    new, unchanged, bare = [], [], []
    for text in texts:
        at.text_area(key="text").set_value(text)
        new.append(timed(at.run)[0])
        unchanged.append(timed(at.run)[0])
        if at.exception:
            raise RuntimeError(f"the heatmap page failed on {name}: {at.exception[0].value}")
        inputs = loaded.tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            loaded.model(**inputs, output_attentions=True)   # warm, as row 1 does
            bare.append(timed(lambda inputs=inputs: loaded.model(**inputs, output_attentions=True))[0])
    one = AppTest.from_string("import streamlit as st\nst.write('x')", default_timeout=60)
    one.run()
    empty = [timed(one.run)[0] for _ in range(n_texts + 3)]   # the first 3 warm up, as above
    warm = slice(3, None)
    return dict(new=median(new[warm]), unchanged=median(unchanged[warm]), bare=median(bare[warm]),
                one_line=median(empty[warm]))


def cpu_split(name: str, n_texts: int) -> dict:
    """Medians (CPU seconds) of a new-text rerun split by thread: the whole process, the page's script thread,
    extraction (the forward queue's thread), AppTest's own rest, and the bare forward on the same text. Run in a
    fresh process: it counts the script runs from here on (``server_side.thread_cpu``)."""
    import torch

    spent = ss.thread_cpu()
    at, loaded, texts = _heatmap_page(name, n_texts)
    rows = []
    for text in texts:
        at.text_area(key="text").set_value(text)
        spent.update(script=0.0, extract=0.0)
        cpu = timed(at.run)[1]
        if at.exception:
            raise RuntimeError(f"the heatmap page failed on {name}: {at.exception[0].value}")
        inputs = loaded.tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            loaded.model(**inputs, output_attentions=True)   # warm, as row 1 does
            bare = [thread_seconds(lambda inputs=inputs: loaded.model(**inputs, output_attentions=True))
                    for _ in range(3)]
        rows.append(dict(process=cpu, script=spent["script"], extract=spent["extract"],
                         rest=cpu - spent["script"] - spent["extract"], bare=median(bare)))
    rows = rows[3:]   # the first 3 warm up
    return {k: median([r[k] for r in rows]) for k in rows[0]}


def thread_seconds(fn) -> float:
    """CPU seconds of ``fn()`` in this thread."""
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def ws_load_forward(n_texts: int) -> dict:
    """CPU seconds of the encoder's bare forward on ``ws_load``'s own texts (``make_text``, as its students type)."""
    import torch

    from explorer.model import registry
    from explorer.ui import cached

    loaded = cached.get_model(registry.EMBEDDED_ENCODER)
    rng = random.Random(0)
    cpu, tokens = [], []
    for _ in range(n_texts + 3):
        inputs = loaded.tokenizer(make_text(rng, "zebra"), return_tensors="pt")
        with torch.inference_mode():
            loaded.model(**inputs, output_attentions=True)
            start = time.thread_time()
            loaded.model(**inputs, output_attentions=True)
            cpu.append(time.thread_time() - start)
        tokens.append(inputs["input_ids"].shape[1])
    return dict(cpu=median(cpu[3:]), tokens=median(tokens))


def main(argv=None) -> None:
    from explorer.model import registry

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=20, help="texts per model (the first 3 warm up)")
    parser.add_argument("--smoke", action="store_true", help="one text, the encoder only (CI: that it still runs)")
    parser.add_argument("--split", action="store_true", help="only the CPU of a new-text rerun split by thread")
    args = parser.parse_args(argv)
    ms = 1000
    models = (registry.EMBEDDED_ENCODER,) if args.smoke else (registry.EMBEDDED_ENCODER, registry.EMBEDDED_DECODER)
    if args.smoke:
        args.texts = 1
    if args.split or args.smoke:
        for name in models:
            c = cpu_split(name, args.texts)
            print(f"{name}: CPU of a new-text rerun {c['process'] * ms:.1f} ms = the page's script thread "
                  f"{c['script'] * ms:.1f} + extraction {c['extract'] * ms:.1f} + AppTest's own "
                  f"{c['rest'] * ms:.1f}; bare forward {c['bare'] * ms:.1f} ms; process ÷ bare "
                  f"{c['process'] / c['bare']:.2f}×, (script + extraction) ÷ bare "
                  f"{(c['script'] + c['extract']) / c['bare']:.2f}×", flush=True)
        if args.split:
            return
    for name in models:
        f = page_floors(name, args.texts)
        print(f"{name}: new text {f['new'] * ms:.1f} ms, unchanged {f['unchanged'] * ms:.1f} ms, bare forward "
              f"{f['bare'] * ms:.1f} ms, one-line page {f['one_line'] * ms:.1f} ms; new ÷ bare "
              f"{f['new'] / f['bare']:.2f}×, (bare + unchanged) ÷ bare {1 + f['unchanged'] / f['bare']:.2f}×",
              flush=True)
    w = ws_load_forward(args.texts)
    print(f"row 9: the encoder's bare forward on a ws_load text ({w['tokens']:.0f} tokens) takes "
          f"{w['cpu'] * ms:.1f} ms of CPU, against a target of 20 ms of server CPU for the whole request")


if __name__ == "__main__":
    main()
