"""Generation one token at a time with the key/value cache, recording what each step saw and weighed.

Step ``s`` feeds the model the newest token only (step 0 feeds the whole prompt), with the keys and values of
every earlier token taken from the cache; the newest position's attention row (every layer and head), its
logits, the residual stream, each head's output and each MLP's output are kept, and the next token is picked
(``sampling.pick``). Step ``s`` reads position ``n_prompt - 1 + s`` and writes the token at ``n_prompt + s``.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from explorer.attention.result import token_texts
from explorer.generation import taps
from explorer.generation.sampling import Settings, pick, uniforms
from explorer.heads_do.measures import output_embedding
from explorer.model import families
from explorer.model.capture import recording
from explorer.model.loading import LoadedModel
from explorer.words.i18n import N_, Later

KINDS = {"encoder": N_("encoder"), "decoder": N_("decoder"), "encoder-decoder": N_("encoder-decoder")}   # in words

Runner = Callable[[Callable[[], object]], object]


def max_prompt_tokens() -> int:
    """The longest prompt generation reads (``EXPLORER_MAX_PROMPT_TOKENS``, default 128): the recorded
    attention grows with (prompt + new tokens)² × layers × heads."""
    raw = os.environ.get("EXPLORER_MAX_PROMPT_TOKENS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else 128


@dataclass
class Generation:
    """One recorded generation. Arrays (all numpy, read-only once stored):

    ``weights[layer, head, query, key]`` (float32): the causal attention of every position that was fed,
    ``query`` = 0 … n_prompt + steps − 2 (the prompt's rows come from step 0, then one row a step);
    ``logits[step, vocab]`` (float32); ``draws[step]`` the uniform draw u (NaN when greedy);
    ``resid[step, layer + 1, d_model]`` the residual stream at the step's position before the first block and
    after each block; ``heads[step, layer, head, d_head]`` each head's output there (before W_O);
    ``mlp[step, layer, d_model]`` each MLP's output (None if the blocks have no ``mlp``);
    ``step_ms[step]`` the time of each forward call (step 0: the prompt).
    """
    model: str
    prompt: str
    settings: Settings
    ids: list[int]
    tokens: list[str]
    n_prompt: int
    weights: np.ndarray
    logits: np.ndarray
    draws: np.ndarray
    resid: np.ndarray
    heads: np.ndarray
    mlp: np.ndarray | None
    step_ms: np.ndarray
    stopped: str                 # "eos" | "length" | "context"
    truncated: bool              # the prompt was cut to max_prompt_tokens()
    n_kv_heads: int
    d_head: int
    dtype_bytes: int
    cache_bytes: int             # bytes the real cache held after the last step
    full_ms: float = float("nan")        # one forward over the whole sequence, no cache
    fidelity: float = float("nan")       # largest |cached row − full-forward row|

    @property
    def steps(self) -> int:
        return len(self.logits)

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]

    def query(self, step: int) -> int:
        """The position step ``step`` reads (its attention row)."""
        return self.n_prompt - 1 + step

    def picked(self, step: int) -> int:
        return self.ids[self.n_prompt + step]

    def row(self, step: int, layer: int, head: int) -> np.ndarray:
        """Step ``step``'s attention over positions 0 … query(step), one head."""
        q = self.query(step)
        return self.weights[layer, head, q, :q + 1]


def eos_ids(loaded: LoadedModel) -> set[int]:
    """Token ids that end a generation: the model's and generation config's ``eos_token_id``, the tokenizer's."""
    found: set[int] = set()
    for source in (loaded.model.config, getattr(loaded.model, "generation_config", None), loaded.tokenizer):
        value = getattr(source, "eos_token_id", None)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, int):
                found.add(v)
    return found


def prompt_ids(loaded: LoadedModel, prompt: str) -> tuple[list[int], bool]:
    """The prompt's token ids (the tokenizer's special tokens included), cut to ``max_prompt_tokens()`` and to
    one less than the model's context, so that at least one token can be written."""
    ids = loaded.tokenizer(prompt, add_special_tokens=True)["input_ids"]
    limit = min(max_prompt_tokens(), families.context_length(loaded.model.config) - 1)
    return list(ids[:limit]), len(ids) > limit


def text_for(tokenizer, ids: list[int]) -> str | None:
    """A text that the tokenizer turns back into exactly ``ids`` (special tokens added as every page adds them),
    so that a page fed that text shows these very tokens; None when there is none: a written sequence need not be
    the tokenizer's own split of its text (SmolLM2 writes "\\n" twice where its tokenizer reads one "\\n\\n")."""
    for skip in (True, False):
        text = tokenizer.decode([int(i) for i in ids], skip_special_tokens=skip)
        if list(tokenizer(text, add_special_tokens=True)["input_ids"]) == [int(i) for i in ids]:
            return text
    return None


def _forward(loaded: LoadedModel, feed: list[int], cache) -> tuple[dict, list[dict], np.ndarray, float]:
    """One forward call on ``feed`` continuing ``cache``: what the taps kept, the attention records, the
    newest position's logits (vocab,) and the forward call's milliseconds."""
    x = torch.tensor([feed], device=loaded.device)
    w_u, b_u = output_embedding(loaded)
    own = not families.captured(loaded.model)   # attention in the family's own code: read the returned weights
    with recording() as records, taps.tapping() as tap, loaded.lock, torch.inference_mode():
        start = time.perf_counter()
        out = loaded.model(input_ids=x, past_key_values=cache, use_cache=True, **({"output_attentions": True}
                                                                                     if own else {}))
        ms = (time.perf_counter() - start) * 1e3
        if own:
            records = [{"weights": w} for w in out.attentions]
        logits = out.last_hidden_state[0, -1].to(w_u) @ w_u.T
        if b_u is not None:
            logits = logits + b_u
        logits = families.final_logits(loaded.model, logits)
    return tap, records, logits.float().cpu().numpy(), ms


def generate(loaded: LoadedModel, prompt: str, settings: Settings, *, run: Runner | None = None,
             on_token: Callable[[int, str], None] | None = None, check: bool = True) -> Generation:
    """Generate up to ``settings.new_tokens`` tokens after ``prompt``, one cached step at a time.

    ``run(fn)`` runs each step's forward (default: at once; the app passes the fair queue, so sessions take turns
    step by step). ``on_token(step, text_so_far)`` is called after every step. ``check``: after the last step, one
    full forward over the whole sequence gives ``full_ms`` and ``fidelity``. Raises ValueError for a model that is
    not a decoder or an empty prompt.
    """
    from transformers import DynamicCache

    if loaded.kind != "decoder":
        kind = Later(KINDS.get(loaded.kind, loaded.kind))
        raise ValueError(Later(N_("{model} is an {kind}: generation needs a causal decoder, which predicts each next "
                                  "token from the ones before it."), model=loaded.spec.name, kind=kind))
    families.require(loaded.model, "generation")
    run = run or (lambda fn: fn())
    model, tok = loaded.model, loaded.tokenizer
    taps.install(model)
    ids, truncated = prompt_ids(loaded, prompt)
    if not ids:
        raise ValueError(Later(N_("The prompt is empty: type a few words for the model to continue.")))
    n_prompt, stop, limit = len(ids), eos_ids(loaded), families.context_length(model.config)
    draws = np.full(settings.new_tokens, np.nan) if settings.greedy else uniforms(settings.seed, settings.new_tokens)
    cache = DynamicCache(config=model.config)
    rows, logits, resid, heads, mlp, times = [], [], [], [], [], []
    stopped = "length"
    for step in range(settings.new_tokens):
        if len(ids) >= limit:
            stopped = "context"
            break
        feed = ids if step == 0 else ids[-1:]
        tap, records, logit, ms = run(lambda feed=feed: _forward(loaded, feed, cache))
        rows.append([r["weights"][0].float().cpu().numpy() for r in records])   # per layer (head, fed, key)
        logits.append(logit)
        resid.append(torch.stack(tap["resid"]).numpy())
        heads.append(torch.stack(tap["heads"]).numpy())
        if "mlp" in tap:
            mlp.append(torch.stack(tap["mlp"]).numpy())
        times.append(ms)
        ids.append(pick(logit, settings, draws[step]))
        if on_token:
            on_token(step, tok.decode(ids[n_prompt:]))
        if ids[-1] in stop:
            stopped = "eos"
            break
    steps = len(logits)
    n_layers, n_heads = len(rows[0]), rows[0][0].shape[0]
    fed = n_prompt + steps - 1
    weights = np.zeros((n_layers, n_heads, fed, fed), dtype=np.float32)
    for layer in range(n_layers):
        weights[layer, :, :n_prompt, :n_prompt] = rows[0][layer]
        for step in range(1, steps):
            q = n_prompt - 1 + step
            row = rows[step][layer][:, 0]                 # (head, keys): the last keys only, in a sliding window
            weights[layer, :, q, q + 1 - row.shape[-1]:q + 1] = row
    d_head = heads[0].shape[-1] // n_heads
    c = model.config
    gen = Generation(
        model=loaded.spec.name, prompt=prompt, settings=settings, ids=ids,
        tokens=token_texts(tok, ids), n_prompt=n_prompt,
        weights=weights, logits=np.stack(logits), draws=draws[:steps], resid=np.stack(resid),
        heads=np.stack(heads).reshape(steps, n_layers, n_heads, d_head), mlp=np.stack(mlp) if mlp else None,
        step_ms=np.array(times), stopped=stopped, truncated=truncated,
        n_kv_heads=families.n_kv_heads(c), d_head=d_head,
        dtype_bytes=next(model.parameters()).element_size(),
        cache_bytes=sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers))
    if check:
        from explorer.generation.kvcache import full_forward
        full, gen.full_ms = run(lambda: full_forward(loaded, ids[:fed]))
        gen.fidelity = float(np.abs(full - weights).max())
    return gen
