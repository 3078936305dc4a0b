"""Computations behind the concept labs that use a real model (or tables for display). No Streamlit.

Functions take arrays, an ``AttentionResult`` or a ``LoadedModel`` (the embedded encoder, a BERT: word table
``embeddings.word_embeddings``, learned positions ``embeddings.position_embeddings``) and return arrays,
dataclasses or DataFrames for the pages to show.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from explorer import maths
from explorer.labs.notation import format_weights
from explorer.labs.positions import learned_position_table
from explorer.labs.quiz import Question, nearest_option
from explorer.words import numbers
from explorer.words.i18n import _

# --------------------------------------------------------------------------------------- a real head's scores


# The labs' first views (what a page opens on; ``ui.prefetch`` prepares the same before a class arrives)
SOFTMAX_D_K = 64
TEMPERATURE_TEXT = "The animal did not cross the street because it was too tired."
TEMPERATURE_HEAD = (2, 0)   # (layer, head) as indices
PERMUTATION_TEXT = "dog bites man"


def spread_question(std_256: float) -> Question:
    """The softmax lab's question: how big a raw score q·k is for d_k = 256, answered by ``std_256`` (the spread
    measured over 4000 random pairs)."""
    sizes = {_("about {n}").format(n=n): n for n in (1, 16, 256)}
    return Question(
        prompt=_("With d_k = 256 and unit-variance random q and k, how big is a typical raw score q·k (its standard "
                 "deviation)? Which of these three sizes, 1, 16 or 256, is it closest to?"),
        options=tuple(sizes), correct=nearest_option(std_256, sizes),
        reveal=_("Measured over 4000 random pairs: **{std}**, close to √256 = 16. Divided by √d_k it comes back "
                 "to {scaled}.").format(std=numbers.number(std_256, 2),
                                           scaled=numbers.number(std_256 / 16, 2)))


def first_order(n: int) -> list[int]:
    """The permutation lab's first shuffle of ``n`` tokens: reversed."""
    return list(range(n))[::-1]


def head_scores(result, layer: int, head: int) -> np.ndarray:
    """Pre-softmax scores ``(query, key)`` of one head of an ``AttentionResult`` (scale included, -inf = masked)."""
    if result.score_records is None:
        raise ValueError(f"{result.facts.name} returned no pre-softmax scores for this text; only the weights are "
                         "available, so the temperature view cannot be drawn.")
    n_layers, n_heads = result.weights.shape[:2]
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise ValueError(f"layer {layer}, head {head} is outside this model's {n_layers} layers x {n_heads} heads")
    return np.asarray(result.head_scores(layer, head), dtype=np.float64)


@dataclass(frozen=True)
class TemperatureView:
    weights: np.ndarray        # (query, key) softmax(scores / temperature)
    mean_max_weight: float     # average over queries of the largest weight in the row
    mean_entropy: float        # nats, averaged over queries
    one_hot_rows: int          # rows whose largest weight is above 0.99


def temperature_view(scores: np.ndarray, temperature: float) -> TemperatureView:
    """Re-run the softmax of a real head's scores at another temperature and summarise how peaked it is."""
    w = maths.temperature_softmax(scores, temperature)
    peak = w.max(axis=-1)
    return TemperatureView(w, float(peak.mean()), float(maths.entropy(w).mean()), int((peak > 0.99).sum()))


# ----------------------------------------------------------------------------------------------- permutation


def content_token_ids(loaded, text: str) -> list[int]:
    """Token ids of ``text`` without the special tokens ([CLS], [SEP])."""
    ids = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
    if not ids:
        raise ValueError(_("The text has no tokens: type a few words."))
    return ids


def token_vectors(loaded, ids: list[int]) -> np.ndarray:
    """Rows of the model's word-embedding table for ``ids``: ``(n, d_model)`` float32, no position added."""
    table = loaded.model.get_input_embeddings().weight
    return table[torch.as_tensor(ids, device=table.device)].detach().float().cpu().numpy()


def position_vectors(loaded, n: int) -> np.ndarray:
    """The first ``n`` rows of the model's learned position table, ``(n, d_model)`` float32."""
    table = learned_position_table(loaded)
    if n > table.shape[0]:
        raise ValueError(f"{n} tokens is more than the {table.shape[0]} positions this model learned")
    return table[:n].astype(np.float32)


@dataclass(frozen=True)
class PermutationDemo:
    tokens: list[str]            # original order
    order: np.ndarray            # shuffled sentence = tokens[order]
    shuffled: list[str]
    out: np.ndarray              # (n, d_k) attention outputs of the original sentence, no positions
    out_shuffled: np.ndarray     # (n, d_k) outputs of the shuffled sentence, no positions
    gap_plain: np.ndarray        # (n,) per token: max |difference| between its two outputs, no positions
    gap_positions: np.ndarray    # (n,) the same with the learned positions added
    gap_model: np.ndarray        # (n,) the same for the real model's final hidden states
    gap_model_no_pos: np.ndarray  # (n,) real model with every position id set to 0


def _per_token_gap(out: np.ndarray, out_shuffled: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Compare each token's output in the shuffled run with its own output in the original run: ``(n,)``."""
    return np.abs(out_shuffled - out[order]).max(axis=-1)


def model_states(loaded, ids: list[int], zero_positions: bool = False) -> np.ndarray:
    """Final hidden states ``(n, d_model)`` of the content tokens (``ids`` wrapped in [CLS] … [SEP])."""
    tok = loaded.tokenizer
    full = torch.tensor([[tok.cls_token_id, *ids, tok.sep_token_id]], device=loaded.device)
    kwargs = {"position_ids": torch.zeros_like(full)} if zero_positions else {}
    with loaded.lock, torch.inference_mode():
        hidden = loaded.model(input_ids=full, **kwargs).last_hidden_state
    return hidden[0, 1:-1].float().cpu().numpy()


def permutation_demo(loaded, text: str, order, d_k: int = 64, seed: int = 0) -> PermutationDemo:
    """Run ``text`` and its shuffle ``tokens[order]`` through from-scratch attention (token vectors from the
    model's embedding table, each standardised like BERT's embedding layer norm, seeded random W_Q, W_K, W_V),
    with and without the learned positions, and through the
    real model; every gap compares a token with itself across the two orders."""
    ids = content_token_ids(loaded, text)
    order = np.asarray(order)
    if sorted(order.tolist()) != list(range(len(ids))):
        raise ValueError(f"order must be a rearrangement of 0..{len(ids) - 1}, got {order.tolist()}")
    tokens = loaded.tokenizer.convert_ids_to_tokens(ids)
    x, shuffled_ids = token_vectors(loaded, ids), [ids[i] for i in order]
    w = maths.random_projections(x.shape[1], d_k, seed)
    pos = position_vectors(loaded, len(ids))
    out, _w = maths.self_attention(x, *w, standardize=True)
    out_s, _w = maths.self_attention(x[order], *w, standardize=True)
    out_p, _w = maths.self_attention(x, *w, positions=pos, standardize=True)
    out_ps, _w = maths.self_attention(x[order], *w, positions=pos, standardize=True)
    gaps_model = [_per_token_gap(model_states(loaded, ids, z), model_states(loaded, shuffled_ids, z), order)
                  for z in (False, True)]
    return PermutationDemo(tokens, order, [tokens[i] for i in order], out, out_s, _per_token_gap(out, out_s, order),
                           _per_token_gap(out_p, out_ps, order), *gaps_model)


def permutation_question(demo: PermutationDemo, shown: Callable[[str], str] = str) -> Question:
    """"Does the first token get the same output vector in both orders, with no positions?", answered by ``demo``
    (yes: the largest difference is float32 rounding). ``shown`` turns a token into what the page shows."""
    first, gap = demo.tokens[0], demo.gap_plain[demo.order.tolist().index(0)]
    same, different = _("yes, the same vector"), _("no, a different vector")
    return Question(
        prompt=_("With no positions, does “{token}” get the same output vector in both orders? Which of these "
                 "two?").format(token=shown(first)), options=(same, different),
        correct=same if gap < 1e-5 else different,
        reveal=_("Largest difference between its two outputs: **{gap}**. That is float32 rounding (about 7 "
                 "significant digits; the sums run in a different order), not a real difference.").format(
            gap=numbers.scientific(gap, 1)))


def gap_metrics(demo: PermutationDemo) -> list[tuple[str, str, str]]:
    """(label, value, what it measures) of the four largest gaps between a token's output in the original and in the
    shuffled sentence: no positions, with positions, the real model, the model with every position id 0."""
    return [(_("no positions"), numbers.scientific(demo.gap_plain.max(), 1),
             _("From-scratch attention on the token vectors alone")),
            (_("with positions"), numbers.number(demo.gap_positions.max(), 3),
             _("The same, after adding the learned positions")),
            (_("real model"), numbers.number(demo.gap_model.max(), 3),
             _("Final-layer hidden states of the whole encoder")),
            (_("model, positions = 0"), numbers.scientific(demo.gap_model_no_pos.max(), 1),
             _("The encoder with every position id 0"))]


def new_order(items: list, current: list, rng=random) -> list:
    """A random order of ``items`` for the "shuffle" button: never ``current`` (a shuffle that changes nothing
    looks broken), and never ``items``' own order while another one is left (always, from three items on)."""
    unwanted = [list(current), list(items) if len(items) > 2 else None]
    order = list(current)
    while order in unwanted:
        order = rng.sample(list(items), len(items))
    return order


def permutation_table(demo: PermutationDemo) -> pd.DataFrame:
    """One row per token (in the shuffled order): its largest output difference in each setting."""
    return pd.DataFrame({
        _("token"): demo.shuffled,
        _("moved"): [f"{i + 1} → {j + 1}" for j, i in enumerate(demo.order)],
        _("no positions"): demo.gap_plain,
        _("with positions"): demo.gap_positions,
        _("real model"): demo.gap_model,
        _("real model, positions = 0"): demo.gap_model_no_pos,
    })


# ----------------------------------------------------------------------------------------------- cost tables

def format_bytes(n: float) -> str:
    """``150994944`` -> ``"144 MiB"``: binary units, three significant figures."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{numbers.number(n, digits=3)} {unit}"
        n /= 1024
    return f"{numbers.number(n, digits=3)} TiB"  # pragma: no cover


def cost_frame(ns, d_model: int = 768, n_layers: int = 12, n_heads: int = 12) -> pd.DataFrame:
    """:func:`explorer.maths.cost_table` as a readable table, one row per sequence length."""
    t = maths.cost_table(ns, d_model, n_layers, n_heads)
    return pd.DataFrame({
        "n": t["n"],
        _("n² per head"): t["score_entries"],
        _("weights, {layers}×{heads} heads").format(layers=n_layers, heads=n_heads):
            [format_bytes(b) for b in t["attention_memory_bytes"]],
        _("work: attention ÷ recurrent"): t["attention_macs"] / t["recurrent_macs"],
        _("steps: recurrent"): t["recurrent_steps"],
        _("steps: attention"): t["attention_steps"],
    })


# ------------------------------------------------------------------------------------------ softmax examples

#: The two score rows of the saturation argument: the second is the first times 8 (the sqrt(d_k) for d_k = 64).
SEED_SCORE_ROWS = ((1.0, 2.0, 3.0), (8.0, 16.0, 24.0))


def softmax_rows_frame(rows=SEED_SCORE_ROWS) -> pd.DataFrame:
    """Softmax of each score row with its entropy, largest weight and gradient size, formatted for display."""
    out = []
    for row in rows:
        p = maths.softmax(np.asarray(row, dtype=np.float64))
        out.append({_("scores"): "[" + numbers.joined(numbers.number(v) for v in row) + "]",
                    "softmax": format_weights(p),
                    _("entropy (nats)"): float(maths.entropy(p)), _("largest weight"): float(p.max()),
                    _("gradient size"): float(maths.softmax_gradient_size(p))})
    return pd.DataFrame(out)
