"""Watch it write: what the recording costs, how long a generation takes, and what a slider rerun costs.

    .venv/bin/python bench/generation_bench.py            # SmolLM2, all rows (~2 minutes on 2 busy cores)
    .venv/bin/python bench/generation_bench.py --reps 3   # fewer repetitions
    .venv/bin/python bench/generation_bench.py --smoke    # every row once, 8 new tokens (CI: that they still run)

Rows (printed as markdown; copied by hand into docs/benchmarks.md, "Watch it write"):
- G1: one cached step with the page's recording (attention records, residual / head / MLP taps, numpy copies,
  the logits) ÷ a bare cached step (``model(input_ids, past_key_values=cache)`` and the logits of the newest
  position, which any generation needs); median per step over 32 steps after a 16-token prompt, the two loops
  alternating, ``--reps`` times.
- G2: 32 new tokens after a 16-token prompt: ``generate`` to its last token (without the fidelity pass), and the
  fidelity pass alone; then the page's first run in AppTest (the model loaded, nothing cached): to the last token on
  the page including every figure.
- G3: page reruns in AppTest with the generation stored: moving the view temperature (no model), moving the step to
  a step already read (no model), to a new step (its logit lens and direct effect are computed once).
- G4: bytes a 64-token generation holds in the result cache (``lru.nbytes``) against its budget.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "app")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from bench.stats import median, spread  # noqa: E402
from explorer.generation.sampling import Settings  # noqa: E402
from explorer.generation.steps import _forward, generate  # noqa: E402
from explorer.heads_do.measures import output_embedding  # noqa: E402
from explorer.model.registry import EMBEDDED_DECODER  # noqa: E402
from explorer.serving.cache import nbytes  # noqa: E402

PROMPT16 = "In the small town by the river, the old baker opened his shop every morning before"


def bare_steps(loaded, ids: list[int], n: int) -> list[float]:
    from transformers import DynamicCache
    cache, times = DynamicCache(config=loaded.model.config), []
    w_u, _ = output_embedding(loaded)
    feed = ids
    with torch.inference_mode():
        for _ in range(n):
            start = time.perf_counter()
            out = loaded.model(input_ids=torch.tensor([feed]), past_key_values=cache, use_cache=True)
            logits = out.last_hidden_state[0, -1] @ w_u.T
            times.append((time.perf_counter() - start) * 1e3)
            feed = [int(logits.argmax())]
    return times[1:]                                   # without the prompt's step


def recorded_steps(loaded, ids: list[int], n: int) -> list[float]:
    from transformers import DynamicCache
    cache, times, feed = DynamicCache(config=loaded.model.config), [], ids
    for _ in range(n):
        start = time.perf_counter()
        tap, records, logits, _ = _forward(loaded, feed, cache)
        [r["weights"][0].float().cpu().numpy() for r in records]
        [torch.stack(tap[k]).numpy() for k in ("resid", "heads", "mlp")]
        times.append((time.perf_counter() - start) * 1e3)
        feed = [int(logits.argmax())]
    return times[1:]


def row(name: str, xs: list[float], unit: str = "ms", note: str = "") -> str:
    lo, hi = spread(xs)
    return f"| {name} | {median(xs):.1f} {unit} | {lo:.1f}–{hi:.1f} | {len(xs)} | {note} |"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--smoke", action="store_true",
                        help="every row once with 8 new tokens instead of 32 (CI: that they still run)")
    args = parser.parse_args(argv)
    new = 8 if args.smoke else 32   # new tokens of rows G1-G3; G4 holds twice as many
    if args.smoke:
        args.reps = 1
    from explorer.generation import taps
    from explorer.ui import cached
    loaded = cached.WORKER.get(EMBEDDED_DECODER)
    taps.install(loaded.model)
    ids = loaded.tokenizer(PROMPT16)["input_ids"]
    print(f"prompt: {len(ids)} tokens; torch threads {torch.get_num_threads()}; cores {os.cpu_count()}", flush=True)
    bare, ours, ratios = [], [], []
    for _ in range(args.reps):
        b, o = bare_steps(loaded, ids, new + 1), recorded_steps(loaded, ids, new + 1)
        bare += b
        ours += o
        ratios.append(median(o) / median(b))
    lines = ["| row | median | 25–75 % | n | note |", "|---|---|---|---|---|",
             row("G1 bare cached step (+ logits)", bare), row("G1 cached step with recording", ours),
             row("G1 ratio recording ÷ bare", ratios, "×", "median of each rep's medians")]
    to_last, check, totals = [], [], []
    for rep in range(args.reps):
        start = time.perf_counter()
        gen = generate(loaded, PROMPT16, Settings(new_tokens=new, seed=rep), check=False)
        to_last.append((time.perf_counter() - start) * 1e3)
        from explorer.generation.kvcache import full_forward
        start = time.perf_counter()
        full_forward(loaded, gen.ids[:-1])
        check.append((time.perf_counter() - start) * 1e3)
    lines += [row(f"G2 generate {new} tokens (to the last token)", to_last, "ms", f"{gen.steps} steps"),
              row("G2 fidelity pass (one full forward)", check)]
    from pagetest import open_page
    for rep in range(1 if args.smoke else max(2, args.reps // 2)):
        start = time.perf_counter()
        at = open_page("pages/write.py", prompt=PROMPT16 + " " * (rep + 1), new=str(new))
        totals.append((time.perf_counter() - start) * 1e3)
    lines.append(row(f"G2 page's first run, {new} tokens (AppTest)", totals, "ms", "all figures included"))
    temp, revisit, fresh = [], [], []
    for i in range(args.reps):
        start = time.perf_counter()
        at.slider(key="vtemp").set_value(round(0.3 + 0.2 * i, 2)).run()
        temp.append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        at.slider(key="step").set_value(min(5 + i, new - 1)).run()
        fresh.append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        at.slider(key="step").set_value(0).run()
        revisit.append((time.perf_counter() - start) * 1e3)
        assert not at.exception
    lines += [row("G3 rerun: view temperature", temp), row("G3 rerun: step already read", revisit),
              row("G3 rerun: new step (lens + direct effect)", fresh)]
    big = generate(loaded, PROMPT16, Settings(new_tokens=2 * new), check=False)
    budget = cached.result_cache().max_bytes
    lines.append(f"| G4 a {2 * new}-token generation in the result cache | {nbytes(big) / 2**20:.1f} MB | | 1 | "
                 f"{big.steps} steps; budget {budget / 2**20:.0f} MB ({nbytes(big) / budget:.1%}) |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
