"""Where one score comes from, by the way the model puts position in.

* Learned positions (BERT-like encoders, GPT-2), first layer: the attention reads norm(token + position (+ token
  type)). Once each token's norm scale 1/σ is held at the value it had, the norm is linear, so the input splits
  into a token part, a position part and the rest (token type, the norm's shift, the projection's bias), and the
  score into token·token, token·position, position·token, position·position and the terms touching the rest. They
  add up to the score exactly (up to float rounding).
* Rotary decoders (Llama-like): the captured queries and keys are rotated; turning them back with the model's own
  frequencies gives the vectors before rotation. Their score at every distance is the relative-position curve;
  at the pair's own distance it is the heatmap's score. The rotation maths is the Positional encodings lab's.
* Relative-position biases (T5): the bias is its own term of the score (in :mod:`explorer.attention.breakdown`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.attention.breakdown import ScoreBreakdown
from explorer.attention.result import AttentionResult
from explorer.labs.positions import rope_cos_sin, rotate_halves, unrotate_halves
from explorer.labs.quiz import Question

SIDES = ("token", "position", "type", "shift", "bias")   # what each side's vector is split into
MAIN = ("token", "position")
LATER_LAYERS = ("From layer 1 on, each token's vector is the sum of everything earlier layers wrote into it: "
                "attention mixed other tokens' token and position parts in, and the norms and the feed-forward "
                "block's nonlinearity blend them, so it no longer splits into a token part and a position part.")
CURVE_SPAN = 128   # the relative-position curve reaches at least this many positions back


# ---------------------------------------------------------------------------------------------- family facts

# move to model/families.py once it exists
def family_layout(model: torch.nn.Module) -> dict:
    """Where a loaded model keeps what the score's origin needs, by family: ``kind`` "learned" (with the first
    layer's embedding tables, norm and q/k projections as ``(weight (out, in), bias)``), "rope" (``inv_freq``,
    ``scaling``: the model's own rotary table), "bias" (a relative-position bias) or "none" (with ``why``)."""
    cfg = model.config
    family = cfg.model_type
    emb = getattr(model, "embeddings", None)
    if family == "bert" and getattr(cfg, "position_embedding_type", "absolute") == "absolute" and emb is not None:
        attn = model.encoder.layer[0].attention.self
        return dict(kind="learned", token=emb.word_embeddings.weight, position=emb.position_embeddings.weight,
                    token_type=emb.token_type_embeddings.weight, norm=emb.LayerNorm,
                    q=(attn.query.weight, attn.query.bias), k=(attn.key.weight, attn.key.bias))
    if family == "gpt2":
        c_attn, d = model.h[0].attn.c_attn, cfg.n_embd   # Conv1D: weight (in, 3·d_model), [q | k | v]
        return dict(kind="learned", token=model.wte.weight, position=model.wpe.weight, token_type=None,
                    norm=model.h[0].ln_1, q=(c_attn.weight[:, :d].T, c_attn.bias[:d]),
                    k=(c_attn.weight[:, d:2 * d].T, c_attn.bias[d:2 * d]))
    rotary = getattr(model, "rotary_emb", None)
    if rotary is not None and hasattr(rotary, "inv_freq"):
        return dict(kind="rope", inv_freq=rotary.inv_freq, scaling=float(getattr(rotary, "attention_scaling", 1.0)))
    if family in {"t5", "mt5", "umt5", "longt5"}:
        return dict(kind="bias")
    if family in {"bloom", "mpt", "falcon"} or getattr(cfg, "alibi", False):
        return dict(kind="none", why="This model adds an ALiBi distance penalty to every score; its query·key part "
                                     "is taken apart above, but where that part comes from is not worked out "
                                     "for ALiBi models yet.")
    return dict(kind="none", why=f"The score's origin is worked out for learned-position encoders, GPT-2, rotary "
                                 f"decoders and T5's position bias; the {family} family is not one of them yet.")


def _numpy(t) -> np.ndarray:
    return t.detach().double().cpu().numpy()


# ---------------------------------------------------------------------------------------------- learned positions

@dataclass(frozen=True)
class PositionSplit:
    """``terms[(query part, key part)]``: scale · (query's part) · (key's part) for every pair of ``SIDES`` (type
    absent when the model has no token-type table). ``parts``: the five shown: token·token, token·position,
    position·token, position·position and "rest" (every term touching type, shift or bias). ``score``: the score
    they should add up to (the heatmap's, from the captured vectors)."""
    terms: dict[tuple[str, str], float]
    parts: dict[str, float]
    score: float

    @property
    def total(self) -> float:
        return float(sum(self.parts.values()))


def side_parts(token: np.ndarray, position: np.ndarray, token_type: np.ndarray | None, gamma: np.ndarray,
               beta: np.ndarray, eps: float, weight: np.ndarray, bias: np.ndarray) -> dict[str, np.ndarray]:
    """One token's query (or key) vector ``weight @ norm(x) + bias``, with ``x = token + position + token_type``,
    split into what each input part gives, the norm's scale σ held at ``x``'s own:

        norm(x) = gamma · (x − mean(x)) / σ + beta,   σ = sqrt(var(x) + eps)
                = Σ_part gamma · (part − mean(part)) / σ + beta

    ``weight`` ``(d_head, d_model)`` (one head's rows), the rest ``(d_model,)``; -> ``{side: (d_head,)}``."""
    parts = {"token": token, "position": position}
    if token_type is not None:
        parts["type"] = token_type
    x = sum(parts.values())
    sigma = np.sqrt(x.var() + eps)
    out = {name: weight @ (gamma * (v - v.mean()) / sigma) for name, v in parts.items()}
    out["shift"] = weight @ beta
    out["bias"] = np.asarray(bias, dtype=np.float64)
    return out


def split_terms(query_parts: dict[str, np.ndarray], key_parts: dict[str, np.ndarray], scale: float,
                score: float) -> PositionSplit:
    """Every (query part, key part) term of ``scale · q · k`` and the five shown parts."""
    terms = {(a, b): float(query_parts[a] @ key_parts[b]) * scale for a in query_parts for b in key_parts}
    parts = {f"{a}·{b}": terms[(a, b)] for a in MAIN for b in MAIN}
    parts["rest"] = float(sum(v for (a, b), v in terms.items() if a not in MAIN or b not in MAIN))
    return PositionSplit(terms, parts, score)


def learned_split(layout: dict, result: AttentionResult, b: ScoreBreakdown) -> PositionSplit:
    """The first layer's score of ``b`` split into token and position parts (``family_layout`` kind "learned")."""
    d_head = b.d_head
    rows = slice(b.head * d_head, (b.head + 1) * d_head)
    norm = layout["norm"]
    gamma, beta, eps = _numpy(norm.weight), _numpy(norm.bias), float(norm.eps)

    def side(position: int, projection) -> dict[str, np.ndarray]:
        ids = result.token_ids[position]
        token_type = None if layout["token_type"] is None else _numpy(layout["token_type"][0])   # one segment
        w, bias = projection
        return side_parts(_numpy(layout["token"][ids]), _numpy(layout["position"][position]), token_type, gamma,
                          beta, eps, _numpy(w[rows]), _numpy(bias[rows]))

    return split_terms(side(b.query, layout["q"]), side(b.key, layout["k"]), b.scale, b.score - b.bias)


# ---------------------------------------------------------------------------------------------- rotary

@dataclass(frozen=True)
class RotaryView:
    """One pair's score with and without rotation. ``query_before``/``key_before``: the vectors before rotation
    ``(d_head,)``; ``before``: scale · their dot product (the score if neither were rotated); ``after``: the
    heatmap's score (pre-softmax, mask aside). ``curve[i]``: the same two vectors' score with the query
    ``distances[i]`` positions after the key; ``own``: the pair's own distance (query − key)."""
    query_before: np.ndarray
    key_before: np.ndarray
    before: float
    after: float
    distances: np.ndarray
    curve: np.ndarray
    own: int

    @property
    def at_own(self) -> float:
        return float(self.curve[self.distances == self.own][0])

    def peak(self, within: int | None = None) -> int:
        """The distance (0 … ``within``, default all) where the curve is highest."""
        keep = self.distances <= (self.distances.max() if within is None else within)
        return int(self.distances[keep][np.argmax(self.curve[keep])])


def relative_curve(query_before: np.ndarray, key_before: np.ndarray, distances: np.ndarray, inv_freq: np.ndarray,
                   scaling: float, scale: float) -> np.ndarray:
    """scale · rotate(query, d) · rotate(key, 0) for each distance ``d``: RoPE's score depends on the distance
    alone, so putting the key at 0 and the query at d gives the score at distance d anywhere in a text."""
    cos, sin = rope_cos_sin(distances, inv_freq, scaling)               # (D, d_rot/2)
    cos0, sin0 = rope_cos_sin(np.array([0]), inv_freq, scaling)
    queries = rotate_halves(query_before, cos, sin)                     # (D, d_head)
    key = rotate_halves(key_before, cos0[0], sin0[0])                   # (d_head,)
    return queries @ key * scale


def rotary_view(layout: dict, b: ScoreBreakdown, n_tokens: int) -> RotaryView:
    """Turn ``b``'s captured (rotated) query and key back with the model's own frequency table, and score the
    pair at every distance 0 … max(``CURVE_SPAN`` − 1, ``n_tokens`` − 1)."""
    inv_freq, scaling = _numpy(layout["inv_freq"]), layout["scaling"]
    cos, sin = rope_cos_sin(np.array([b.query, b.key]), inv_freq, scaling)
    q0 = unrotate_halves(b.query_vector, cos[0], sin[0])
    k0 = unrotate_halves(b.key_vector, cos[1], sin[1])
    distances = np.arange(max(CURVE_SPAN, n_tokens))
    curve = relative_curve(q0, k0, distances, inv_freq, scaling, b.scale)
    return RotaryView(q0, k0, float(q0 @ k0 * b.scale), b.dot * b.scale, distances, curve, b.query - b.key)


# ---------------------------------------------------------------------------------------------- one call

@dataclass(frozen=True)
class Origin:
    """What can be said of where ``b``'s score comes from: ``kind`` (as ``family_layout``), a ``sentence`` for the
    page, and the split or the rotary view when there is one."""
    kind: str
    sentence: str
    split: PositionSplit | None = None
    rotary: RotaryView | None = None


def origin(model: torch.nn.Module, result: AttentionResult, b: ScoreBreakdown) -> Origin:
    """The origin of ``b``'s score in ``model`` (the loaded model ``result`` came from)."""
    layout = family_layout(model)
    kind = layout["kind"]
    if result.part == "cross" or (kind == "learned" and result.part not in {"self", "encoder"}):
        return Origin("none", "Cross attention compares decoder queries with encoder keys: they come from two "
                              "different stacks, so there is no single input to split.")
    if kind == "learned":
        if b.layer > 0:
            return Origin("later", LATER_LAYERS)
        return Origin(kind, "Layer 0 reads norm(token + position embedding): with each token's norm scale held at "
                            "its own value the norm is linear, so the score splits exactly into these parts.",
                      split=learned_split(layout, result, b))
    if kind == "rope":
        return Origin(kind, "The query and key are rotated by angles proportional to their positions; turned back, "
                            "the same two vectors can be scored at any distance.",
                      rotary=rotary_view(layout, b, len(result.tokens)))
    if kind == "bias":
        return Origin(kind, f"Position enters as a learned bias added to each score: here {b.bias:+.4f}, beside "
                            f"the content part q·k × scale = {b.dot * b.scale:+.4f}.")
    return Origin("none", layout["why"])


def distance_question(rotary: RotaryView, b: ScoreBreakdown, n_options: int = 4) -> Question:
    """"At what distance does this head score “it” → “animal” highest?", over the distances this text allows the
    pair (0 … the query's position), with the pair's own distance, 0 and 1 among the options."""
    within = b.query
    peak = rotary.peak(within)
    keep = rotary.distances <= within
    ranked = [int(d) for d in rotary.distances[keep][np.argsort(-rotary.curve[keep], kind="stable")]]
    picks = [d for d in dict.fromkeys([peak, rotary.own, 0, 1, *ranked[::3]]) if d <= within][:n_options]

    def label(d: int) -> str:
        return "0 (itself)" if d == 0 else "1 token back" if d == 1 else f"{d} tokens back"
    reveal = (f"The same two vectors score highest **{peak}** positions apart "
              f"({rotary.curve[rotary.distances == peak][0]:+.3f}); at their real distance, {rotary.own}, they "
              f"score {rotary.at_own:+.3f}, the heatmap's score. Unrotated they would score {rotary.before:+.3f} "
              "at every distance.")
    return Question(prompt=f"Layer {b.layer}, head {b.head}: keep the vectors of “{b.query_token}” and "
                           f"“{b.key_token}” and move the key. At what distance before the query would this head "
                           "score the pair highest?",
                    options=tuple(label(d) for d in sorted(picks)), correct=label(peak), reveal=reveal)
