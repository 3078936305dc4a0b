"""Multi-head attention and the transformer block, from scratch; plus the padding-mask experiment on a real encoder.

Pure numpy (torch only inside :func:`padding_experiment`), no Streamlit. Shapes: ``x (n_tokens, d_model)``,
per-head tensors ``(n_heads, n_tokens, d_head)``, weights ``(n_heads, n_query, n_key)``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from explorer.labs.quiz import Question
from explorer.maths import attention
from explorer.words import numbers
from explorer.words.i18n import N_, _

# The seed's demo: three 4-dimensional token vectors, weights drawn with np.random.seed(42).
SEED_X = np.array([[1.0, 0.5, 0.2, 0.1],
                   [0.3, 0.8, 0.1, 0.9],
                   [0.1, 0.2, 0.9, 0.4]])
# What the seed prints as the block's output (rounded to 3 places). Its rows have mean 0 but population std
# 0.82 / 0.89 / 0.94, so no (x - mean) / (std + 1e-5) layer norm can have produced them; see seed_block().
SEED_PRINTED = np.array([[1.402, -0.632, -0.354, -0.416],
                         [-0.42, 1.535, -0.691, -0.424],
                         [-0.805, -0.413, 1.606, -0.388]])


# ------------------------------------------------------------------------------------------- multi-head
def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """``(n, d_model)`` -> ``(n_heads, n, d_head)``: head ``h`` gets columns ``h*d_head .. (h+1)*d_head - 1``."""
    n, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(f"d_model {d_model} is not divisible by {n_heads} heads")
    return x.reshape(n, n_heads, d_model // n_heads).transpose(1, 0, 2)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(n_heads, n, d_head)`` -> ``(n, n_heads * d_head)``: the heads' outputs side by side (concatenation)."""
    h, n, d_head = x.shape
    return x.transpose(1, 0, 2).reshape(n, h * d_head)


@dataclass(frozen=True)
class MultiHead:
    """Every intermediate of one multi-head attention call."""
    q: np.ndarray  # (h, n, d_head)
    k: np.ndarray  # (h, n, d_head)
    v: np.ndarray  # (h, n, d_head)
    weights: np.ndarray  # (h, n, n), rows sum to 1
    heads: np.ndarray  # (h, n, d_head): each head's weighted sum of values
    concat: np.ndarray  # (n, d_model)
    output: np.ndarray  # (n, d_model): concat @ wo (or concat when wo is None)


def multi_head_attention(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray, n_heads: int,
                         wo: np.ndarray | None = None, mask: np.ndarray | None = None) -> MultiHead:
    """Project once at full width, split into ``n_heads`` slices, attend per head, concatenate, project with ``wo``.

    Each head uses the scale ``1/sqrt(d_head)``. ``mask (n, n)`` is boolean, True = may attend.
    """
    q, k, v = (split_heads(x @ w, n_heads) for w in (wq, wk, wv))  # (h, n, d_head)
    heads, weights = attention(q, k, v, mask=mask)  # (h, n, d_head), (h, n, n)
    concat = merge_heads(heads)  # (n, d_model)
    return MultiHead(q, k, v, weights, heads, concat, concat if wo is None else concat @ wo)


@dataclass(frozen=True)
class HeadCost:
    """Multiplications in the attention maths of one layer (projections counted apart)."""
    n_tokens: int
    d_model: int
    n_heads: int
    d_head: int
    per_head: int  # scores (n*n*d_head) + weighted sum (n*n*d_head) for one head
    all_heads: int  # n_heads * per_head
    one_full_head: int  # the same two products for a single head of width d_model
    projections: int  # Q, K, V and output projections: 4 * n * d_model**2, whatever the number of heads


def head_cost(n_tokens: int, d_model: int, n_heads: int) -> HeadCost:
    """Count multiplications: h heads of width d_model/h cost exactly what one head of width d_model costs."""
    if d_model % n_heads:
        raise ValueError(f"d_model {d_model} is not divisible by {n_heads} heads")
    d_head = d_model // n_heads
    per_head = 2 * n_tokens * n_tokens * d_head
    return HeadCost(n_tokens, d_model, n_heads, d_head, per_head, n_heads * per_head,
                    2 * n_tokens * n_tokens * d_model, 4 * n_tokens * d_model * d_model)


# ------------------------------------------------------------------------------------------------ the block
def layer_norm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Normalise each row to mean 0 and (population) std 1: ``(x - mean) / (std + eps)``; no learned scale/shift."""
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / (x.std(axis=-1, keepdims=True) + eps)


@dataclass(frozen=True)
class BlockParams:
    """Weights of a tiny block. ``wo`` None means no output projection (the seed's block has none)."""
    wq: np.ndarray  # (d_model, d_model)
    wk: np.ndarray
    wv: np.ndarray
    w1: np.ndarray  # (d_model, d_ff)
    b1: np.ndarray  # (d_ff,)
    w2: np.ndarray  # (d_ff, d_model)
    b2: np.ndarray  # (d_model,)
    wo: np.ndarray | None = None
    n_heads: int = 1


def seeded_params(seed: int = 42, d_model: int = 4, d_ff: int = 8, scale: float = 0.1, n_heads: int = 1,
                  output_projection: bool = False) -> BlockParams:
    """Draw block weights the way the seed does: one legacy-numpy stream seeded ``seed``, standard normals times
    ``scale``, in the order Wq, Wk, Wv, W1, W2 (biases are zeros and draw nothing). ``wo``, if asked for, is drawn
    last so the other weights stay the seed's."""
    rng = np.random.RandomState(seed)  # same stream as np.random.seed(seed); np.random.randn
    wq, wk, wv = (rng.randn(d_model, d_model) * scale for _ in range(3))
    w1 = rng.randn(d_model, d_ff) * scale
    w2 = rng.randn(d_ff, d_model) * scale
    wo = rng.randn(d_model, d_model) * scale if output_projection else None
    return BlockParams(wq, wk, wv, w1, np.zeros(d_ff), w2, np.zeros(d_model), wo, n_heads)


def feed_forward(x: np.ndarray, p: BlockParams) -> np.ndarray:
    """Position-wise ReLU network: ``max(0, x W1 + b1) W2 + b2``, applied to every row on its own."""
    return np.maximum(0.0, x @ p.w1 + p.b1) @ p.w2 + p.b2


@dataclass(frozen=True)
class BlockTrace:
    """The block's output and every named intermediate, in the order they are computed."""
    norm: str  # "post" or "pre"
    steps: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (n, d_model)
    weights: np.ndarray | None = None  # (n_heads, n, n)

    @property
    def output(self) -> np.ndarray:
        return list(self.steps.values())[-1]


def transformer_block(x: np.ndarray, p: BlockParams, norm: str = "post", mask: np.ndarray | None = None,
                      final_norm: bool = True, eps: float = 1e-5) -> BlockTrace:
    """One block. ``norm="post"`` (2017): ``x = LN(x + Attn(x)); x = LN(x + FFN(x))``.
    ``norm="pre"``: ``x = x + Attn(LN(x)); x = x + FFN(LN(x))``, then one final LN when ``final_norm``
    (a pre-norm stack normalises once after its last block)."""
    steps = {N_("input"): x}   # step names marked for the catalogues, translated where shown
    if norm == "post":
        mh = multi_head_attention(x, p.wq, p.wk, p.wv, p.n_heads, p.wo, mask)
        steps[N_("attention")] = mh.output
        steps[N_("x + attention")] = x + mh.output
        steps[N_("layer norm 1")] = h = layer_norm(x + mh.output, eps)
        steps[N_("feed-forward")] = ff = feed_forward(h, p)
        steps[N_("h + feed-forward")] = h + ff
        steps[N_("layer norm 2 = output")] = layer_norm(h + ff, eps)
    elif norm == "pre":
        steps[N_("layer norm 1")] = n1 = layer_norm(x, eps)
        mh = multi_head_attention(n1, p.wq, p.wk, p.wv, p.n_heads, p.wo, mask)
        steps[N_("attention")] = mh.output
        steps[N_("x + attention")] = h = x + mh.output
        steps[N_("layer norm 2")] = n2 = layer_norm(h, eps)
        steps[N_("feed-forward")] = ff = feed_forward(n2, p)
        steps[N_("h + feed-forward")] = h + ff
        if final_norm:
            steps[N_("final layer norm = output")] = layer_norm(h + ff, eps)
    else:
        raise ValueError(f"norm must be 'post' or 'pre', got {norm!r}")
    return BlockTrace(norm, steps, mh.weights)


def seed_block() -> BlockTrace:
    """The seed's demo rebuilt: seed 42, d_model 4, d_ff 8, one head, no output projection, post-norm, on SEED_X.

    Faithful to the seed's code, this prints ``[[1.674 -0.146 -0.7 -0.828] [-0.591 0.516 -1.263 1.338]
    [-0.812 -0.922 1.57 0.164]]``, not the seed's printed ``SEED_PRINTED`` (which no such layer norm can output).
    """
    return transformer_block(SEED_X, seeded_params(42, 4, 8), norm="post")


def row_stats(x: np.ndarray) -> np.ndarray:
    """``(n, 2)``: each row's mean and population std; a layer-normed row reads ``(0, 1)``."""
    return np.stack([x.mean(axis=-1), x.std(axis=-1)], axis=-1)


# ------------------------------------------------------------------------------------ padding-mask experiment
@dataclass(frozen=True)
class PaddingExperiment:
    """A short and a long sentence in one padded batch through a real encoder, with and without ``attention_mask``.

    The reference is the short sentence run alone (no padding). Changes are per real token of the short sentence,
    measured on the last hidden state: ``|batched - alone| / |alone|`` (relative L2 distance).
    """
    short: str
    long: str
    tokens: list[str]  # the short sentence's row in the batch, padding included
    n_real: int  # its real tokens (the first n_real entries of tokens)
    change_masked: np.ndarray  # (n_real,)
    change_unmasked: np.ndarray  # (n_real,)
    pad_weight_masked: np.ndarray  # (n_layers,) mean attention the real tokens put on padding, mask on
    pad_weight_unmasked: np.ndarray  # (n_layers,) the same with the mask left off

    @property
    def n_pad(self) -> int:
        return len(self.tokens) - self.n_real


PADDING_PAIR = ("I love cats.", "The report that the committee finally published last Tuesday was widely condemned.")


class PaddingError(ValueError):
    """Why the padding experiment cannot run: an English message (marked for the catalogues) and its fields, which
    the page translates where it shows them; the experiment itself runs in the forward queue's thread, which
    knows no session and so no language."""

    def __init__(self, message: str, **fields):
        super().__init__(message.format(**fields))
        self.message, self.fields = message, fields


def padding_experiment(loaded, short: str, long: str) -> PaddingExperiment:
    """Run ``[short, long]`` padded to the same length twice (mask on / mask off) and ``short`` alone.

    ``loaded`` is an ``explorer.model.loading.LoadedModel`` of an encoder (right padding, learned positions).
    """
    import torch

    tok, model = loaded.tokenizer, loaded.model
    if tok.pad_token is None:
        raise PaddingError(N_("{model} has no padding token; the padding lesson needs an encoder such as BERT"),
                           model=loaded.spec.name)
    batch = tok([short, long], padding=True, return_tensors="pt").to(loaded.device)
    alone = tok([short], return_tensors="pt").to(loaded.device)
    n_real = int(alone["input_ids"].shape[1])
    if int(batch["attention_mask"][0].sum()) != n_real or batch["input_ids"].shape[1] <= n_real:
        raise PaddingError(N_("the first sentence must be shorter (in tokens) than the second"))

    def run(enc, attention_mask):
        with loaded.lock, torch.inference_mode():
            out = model(**{**enc, "attention_mask": attention_mask}, output_attentions=True)
        if not out.attentions:
            raise RuntimeError("the model returned no attentions: load it with attn_implementation='eager'")
        hidden = out.last_hidden_state[0, :n_real].float().cpu().numpy().astype(np.float64)  # (n_real, d_model)
        att = torch.stack(out.attentions)[:, 0].float().cpu().numpy()  # (layer, head, query, key)
        pad_weight = att[:, :, :n_real, n_real:].sum(-1).mean(axis=(1, 2))  # (layer,)
        return hidden, pad_weight

    ref, _unused = run(alone, alone["attention_mask"])
    masked, pad_masked = run(batch, batch["attention_mask"])
    unmasked, pad_unmasked = run(batch, torch.ones_like(batch["attention_mask"]))
    norm = np.linalg.norm(ref, axis=-1)

    def change(h):
        return np.linalg.norm(h - ref, axis=-1) / norm

    tokens = tok.convert_ids_to_tokens(batch["input_ids"][0].tolist())
    return PaddingExperiment(short, long, tokens, n_real, change(masked), change(unmasked), pad_masked, pad_unmasked)


def heads_cost_question(cost: HeadCost, n_tokens: int, d_model: int, n_heads: int) -> Question:
    """"Do h narrower heads need more multiplications than one full-width head?", answered by ``cost``: the same."""
    options = (_("more: every head pays for all n² pairs"), _("the same"), _("less: each head is narrower"))
    return Question(
        prompt=_("One head {d} wide needs {full} multiplications for QKᵀ and weights·V on {n} tokens. Split into {h} "
                 "heads {d_head} wide, do all heads together need more, the same or less? Which of these three?"
                 ).format(d=d_model, full=numbers.integer(cost.one_full_head), n=n_tokens, h=n_heads,
                          d_head=cost.d_head),
        options=options, correct=options[1],
        reveal=_("{h} × 2 · {n}² · {d_head} = **{all}** = 2 · {n}² · {d}. Each head does n² comparisons, but in a "
                 "slice 1/h as wide: the h relationship types come free.").format(
            h=n_heads, n=n_tokens, d_head=cost.d_head, all=numbers.integer(cost.all_heads), d=d_model))


def padding_question(exp: PaddingExperiment, model: str, shown: Callable[[str], str] = str) -> Question:
    """"How far do the short sentence's vectors move without the attention mask?", answered by ``exp`` in three bands
    (under 0.01 %, under 5 %, 5 % or more). ``shown`` turns typed text into what the page shows (its escape)."""
    options = (_("not at all (under 0.01%)"), _("a little (under 5%)"), _("a lot (5% or more)"))
    mean_off, mean_on = float(exp.change_unmasked.mean()), float(exp.change_masked.max())
    worst = exp.tokens[:exp.n_real][int(exp.change_unmasked.argmax())]
    return Question(
        prompt=_("“{sentence}” ({n_real} tokens) is padded with {n_pad} [PAD] tokens and the batch is run through "
                 "{model} **without** the attention mask. Compared with running it alone, how far do its real "
                 "tokens' final vectors move (relative distance, averaged over its tokens)? Which of these three "
                 "bands, from under 0.01% to 5% or more?").format(
            sentence=shown(exp.short), n_real=exp.n_real, n_pad=exp.n_pad, model=model),
        options=options, correct=options[0 if mean_off < 1e-4 else 1 if mean_off < 0.05 else 2],
        reveal=_("Without the mask they move by **{mean_off}** on average (most: {most}, at “{token}”). With the "
                 "mask the largest change is **{mean_on}**: float rounding, the same vectors as running the sentence "
                 "alone.").format(mean_off=numbers.percent(mean_off, 1),
                                  most=numbers.percent(exp.change_unmasked.max(), 1), token=shown(worst),
                                  mean_on=numbers.scientific(mean_on, 1)))


def seed_mismatch(ours: np.ndarray) -> str:
    """Why the seed's printed matrix cannot be its code's: a layer norm's rows have standard deviation 1 (``ours``)."""
    printed = row_stats(SEED_PRINTED)[:, 1]
    return _("The seed prints a different matrix, {printed}. Its rows have standard deviation {printed_std}, yet a "
             "row straight out of this layer norm always has standard deviation 1.000 (ours: {ours_std}). So no "
             "weights can make that code print those numbers: we show what the code really computes.").format(
        printed=np.array2string(SEED_PRINTED), printed_std=numbers.joined(numbers.number(s, 3) for s in printed),
        ours_std=numbers.joined(numbers.number(s, 3) for s in row_stats(ours)[:, 1]))
