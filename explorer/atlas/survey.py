"""The atlas's pass: one model reads every corpus window; every head's measures are summed over the corpus and its
strongest examples kept.

Each window is read as the heatmap page reads a text (``attention.result.extract``: the same tokens, the same
weights), so an example opened there shows exactly the row the atlas kept. Per head and per measure of
``head_stats.EXAMPLE_MEASURES`` the ``TOP`` queries with the largest value are kept (ties: the earliest window and
query; from query ``FROM_QUERY`` on, since at query 1 the previous token is the first token and an example there
would show both at once), each with its ``KEYS`` heaviest keys and their weights. The first ``SLICE`` windows'
means are kept apart, so a test can read those windows again and compare.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from explorer.atlas import head_stats
from explorer.attention.result import extract, model_facts
from explorer.model import families
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import N_, Later

TOP, KEYS, SLICE = 3, 3, 2
FROM_QUERY = 2   # examples are taken from this query on


class AtlasUnavailable(ValueError):
    """The pass cannot run for this model or these bounds; the message says why in one sentence."""


@dataclass
class Survey:
    """One model's atlas. ``means[name]``: float32 ``[layer, head]`` per measure (``head_stats.MEASURES`` and
    ``SHARES``); ``counts[name]``: queries it averages over. ``examples``: per measure of EXAMPLE_MEASURES, arrays
    ``value``, ``window``, ``query`` ``[layer, head, TOP]`` and ``keys``, ``key_weights`` ``[layer, head, TOP, KEYS]``
    (positions in the window's tokens). ``tokens[window]``: the window's tokens as the model reads them, a leading
    space where the text has one (:func:`spaced`; every window here; the store keeps those the examples name).
    ``slice_means``: the means over windows 0…SLICE−1."""
    model: str
    kind: str
    n_layers: int
    n_heads: int
    n_tokens: int
    n_windows: int
    means: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]
    examples: dict[str, dict[str, np.ndarray]]
    tokens: dict[int, list[str]] = field(default_factory=dict)
    slice_means: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0


def _merge(best: dict[str, np.ndarray] | None, value, window, query, keys, key_weights) -> dict[str, np.ndarray]:
    """The TOP largest of the kept examples and a window's candidates (kept first: ties keep the earlier)."""
    new = dict(value=value, window=window, query=query, keys=keys, key_weights=key_weights)
    if best is None:
        both = new
    else:
        both = {k: np.concatenate([best[k], new[k]], axis=2) for k in new}
    order = np.argsort(-both["value"], axis=-1, kind="stable")[..., :TOP]
    out = {}
    for k, v in both.items():
        index = order if v.ndim == 3 else order[..., None]
        out[k] = np.take_along_axis(v, index, axis=2)
    return out


def _candidates(values: np.ndarray, w: np.ndarray, window: int):
    """A window's strongest query per head by ``values`` ``[L, H, n−1]`` (queries 1…) with its top keys from ``w``."""
    filled = np.where(np.isnan(values), -np.inf, values)
    filled[..., :FROM_QUERY - 1] = -np.inf      # query 1's previous token is the first token: say neither
    k = 1   # one candidate a window: a head's top examples come from TOP different windows
    order = np.argsort(-filled, axis=-1, kind="stable")[..., :k]                  # (L, H, k), query − 1
    value = np.take_along_axis(filled, order, -1)
    query = order + 1
    rows = np.take_along_axis(w, query[..., None].repeat(w.shape[-1], -1), axis=2)  # (L, H, k, n)
    keys = np.argsort(-rows, axis=-1, kind="stable")[..., :KEYS]
    weights = np.take_along_axis(rows, keys, -1)
    if keys.shape[-1] < KEYS:
        pad = KEYS - keys.shape[-1]
        keys = np.pad(keys, [(0, 0)] * 3 + [(0, pad)], constant_values=-1)
        weights = np.pad(weights, [(0, 0)] * 3 + [(0, pad)])
    return value, np.full(value.shape, window, dtype=np.int32), query.astype(np.int32), keys.astype(np.int32), \
        weights.astype(np.float32)


def spaced(tokenizer, text: str, tokens: list[str], special: list[bool] | None = None) -> list[str]:
    """``tokens`` (as pages show them) with a leading space on each that follows a space in ``text``, so a window
    reads as written when its tokens are joined ("St" "ellar" stay one word); a special token and a line break
    (⏎) stand apart. Unchanged when the tokenizer gives no
    offsets or other tokens than ``tokens``."""
    try:
        spans = tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
    except (NotImplementedError, ValueError, KeyError):
        return tokens
    if len(spans) != len(tokens):
        return tokens
    special = special or [False] * len(tokens)
    out, end, apart = [], None, False
    for token, (a, b), own in zip(tokens, spans, special):
        gap = end is not None and a > end or 0 < a < len(text) and text[a].isspace() and b > a
        out.append((" " + token) if out and (gap or apart or own) else token)
        end = b if b > a else end
        apart = own or token == "⏎"
    return out


def survey(loaded: LoadedModel, windows: list[str], progress=None, max_tokens: int | None = None,
           max_seconds: float | None = None) -> Survey:
    """Every head of ``loaded`` over ``windows``. ``progress(fraction, message)`` after each window. Stops early,
    keeping what it read, once ``max_tokens`` tokens are read or ``max_seconds`` have passed (a bounded on-demand
    pass). Raises AtlasUnavailable before any forward pass for a model whose weights cannot be read."""
    families.require(loaded.model, "roles")
    facts = model_facts(loaded)
    if loaded.kind == "encoder-decoder":
        raise AtlasUnavailable(Later(N_("{model} is an encoder-decoder; the head atlas reads encoders and decoders "
                                        "only."), model=facts.name))
    report = progress or (lambda fraction, message: None)
    start = time.perf_counter()
    total: dict[str, np.ndarray] = {}
    count: dict[str, np.ndarray] = {}
    examples: dict[str, dict[str, np.ndarray] | None] = {m: None for m in head_stats.EXAMPLE_MEASURES}
    tokens: dict[int, list[str]] = {}
    slice_means: dict[str, np.ndarray] = {}
    n_tokens = read = 0
    for index, text in enumerate(windows):
        result = extract(loaded, text)
        w = result.weights
        if w.shape[:2] != (facts.n_layers, facts.n_heads):
            raise AtlasUnavailable(Later(N_("The attention weights of {model} could not be read."), model=facts.name))
        punct = np.array([head_stats.is_punctuation(t) and not s for t, s in zip(result.tokens, result.special)])
        values = head_stats.per_query(w, np.asarray(result.token_ids), punct)
        s, c = head_stats.sums(values)
        for k in s:
            total[k] = total.get(k, 0) + s[k]
            count[k] = count.get(k, 0) + c[k]
        for m in head_stats.EXAMPLE_MEASURES:
            examples[m] = _merge(examples[m], *_candidates(values[m], w, index))
        tokens[index] = spaced(loaded.tokenizer, text, list(result.tokens), list(result.special))
        n_tokens += len(result.tokens)
        read = index + 1
        if read == min(SLICE, len(windows)):
            slice_means = {k: v.astype(np.float32) for k, v in head_stats.means(total, count).items()}
        report(read / len(windows), Later(N_("Reading the corpus: window {done} of {n}…"), done=read,
                                          n=len(windows)))
        if (max_tokens is not None and n_tokens >= max_tokens) or (
                max_seconds is not None and time.perf_counter() - start >= max_seconds):
            break
    if not read:
        raise AtlasUnavailable(Later(N_("The corpus is empty: the atlas has nothing to read.")))
    return Survey(model=facts.name, kind=loaded.kind, n_layers=facts.n_layers, n_heads=facts.n_heads,
                  n_tokens=n_tokens, n_windows=read,
                  means={k: v.astype(np.float32) for k, v in head_stats.means(total, count).items()},
                  counts=count, examples=examples, tokens=tokens, slice_means=slice_means,
                  seconds=time.perf_counter() - start)


def describe(s: Survey) -> str:
    """One line for the tool's log: model, tokens, windows, seconds."""
    return f"{s.model}: {numbers.integer(s.n_tokens)} tokens in {s.n_windows} windows, {numbers.number(s.seconds, 1)} s"
