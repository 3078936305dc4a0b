"""A trained run taken apart: which heads it needs (knockout), how its heads compose (K-composition against a
random baseline), and what its induction head reads and writes (its QK and OV circuits over the vocabulary).

Every earlier → later pair of layers counts, not only layer 0 → layer 1: in a three-layer run the induction head may
sit in the last layer and its partner in either layer before it. The partner is the head of an earlier layer than
the (strongest) induction head's whose knockout costs most; :func:`composition` scores every earlier head into every
later one, so a check can ask whether it also composes most with the induction head.

The circuits are products of the weights (:mod:`explorer.learning.network` has no MLP and no biases); with
LayerNorm on, a norm's scaling sits between the matrices and the products no longer equal the model, so
:func:`circuits` refuses such a run in one sentence. Knockouts run the model itself and hold for every run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.learning import data, metrics
from explorer.learning.config import TrainConfig
from explorer.learning.network import next_token_losses
from explorer.learning.train import model_from
from explorer.words.i18n import N_, Later

KNOCKOUT_SIZE = 256        # sequences of the knockout batch (its own stream, not the training data)
INDUCTION_AT = 0.3         # a later-layer head whose prefix-matching score reaches this is an induction head

Head = tuple[int, int]     # (layer, head)


@dataclass(frozen=True)
class Knockouts:
    """Loss on the second copy (nats), intact and with heads knocked out; ``single[layer, head]`` is the loss each
    head alone adds, ``together`` the induction heads at once, ``pair`` the induction heads with their partner (a head
    of any layer before the strongest induction head's)."""
    intact: float
    single: np.ndarray
    induction: tuple[Head, ...]
    partner: Head | None
    together: float
    pair: float

    def cost(self, loss: float) -> float:
        return loss - self.intact


def _second_copy_loss(model, held: data.Batch, heads: list[Head]) -> float:
    _first, second = held.copy_masks()
    with torch.inference_mode(), model.knocked_out(heads):
        return float(next_token_losses(model, held.tokens)[second].mean())


def induction_heads(prefix: np.ndarray) -> tuple[Head, ...]:
    """Heads of layers after the first whose prefix-matching score (``prefix[layer, head]``) reaches INDUCTION_AT,
    strongest first; the single strongest if none does."""
    later = [(float(prefix[l, h]), (l, h)) for l in range(1, prefix.shape[0]) for h in range(prefix.shape[1])]
    if not later:
        return ()
    chosen = [head for score, head in sorted(later, reverse=True) if score >= INDUCTION_AT]
    return tuple(chosen) or (max(later)[1],)


def earlier_heads(head: Head, n_heads: int) -> list[Head]:
    """The heads of every layer before ``head``'s: those whose output its queries and keys can read."""
    return [(l, h) for l in range(head[0]) for h in range(n_heads)]


def partner_by_cost(single: np.ndarray, head: Head) -> Head:
    """The head of an earlier layer than ``head``'s whose knockout costs most (``single[layer, head]``: added loss)."""
    return max(earlier_heads(head, single.shape[1]), key=lambda e: float(single[e]))


def knockouts(cfg: TrainConfig, weights: dict[str, np.ndarray], prefix: np.ndarray) -> Knockouts:
    """Each head knocked out alone, the induction heads together, and with the head of an earlier layer whose
    knockout costs most (their partner, whichever layer it is in), on a fixed batch of the induction task."""
    model = model_from(cfg, weights)
    held = data.batch(cfg, KNOCKOUT_SIZE, data.generator(cfg.seed, 3), task="induction")
    intact = _second_copy_loss(model, held, [])
    single = np.array([[_second_copy_loss(model, held, [(l, h)]) for h in range(cfg.n_heads)]
                       for l in range(cfg.n_layers)]) - intact
    found = induction_heads(prefix)
    partner = partner_by_cost(single, found[0]) if found else None
    together = _second_copy_loss(model, held, list(found)) if found else intact
    pair = _second_copy_loss(model, held, list(found) + [partner]) if found else intact
    return Knockouts(intact, single, found, partner, together, pair)


def qk(weights: dict[str, np.ndarray], layer: int, head: int) -> np.ndarray:
    """``W_QK = W_Q W_Kᵀ`` of one head, ``[d_model, d_model]``."""
    return weights["W_Q"][layer, head] @ weights["W_K"][layer, head].T


def ov(weights: dict[str, np.ndarray], layer: int, head: int) -> np.ndarray:
    """``W_OV = W_V W_O`` of one head, ``[d_model, d_model]``."""
    return weights["W_V"][layer, head] @ weights["W_O"][layer, head]


@dataclass(frozen=True)
class Composition:
    """``k[i, j]``: K-composition of head ``writers[i]`` into head ``readers[j]`` (writers: every head but the last
    layer's, readers: every head but the first layer's, each layer by layer); NaN where the writer's layer is not
    before the reader's. With two layers ``k[h0, h1]`` is layer-0 head h0 into layer-1 head h1. ``baseline``: random
    matrices'; ``cap``: the most each pair could score with its singular values
    (:func:`metrics.aligned_k_composition`)."""
    k: np.ndarray
    baseline: float
    cap: np.ndarray
    writers: tuple[Head, ...] = ()
    readers: tuple[Head, ...] = ()

    def of(self, writer: Head, reader: Head) -> float:
        return float(self.k[self.writers.index(writer), self.readers.index(reader)])

    def best_writer(self, reader: Head) -> Head:
        """The earlier head that ``reader`` reads most of in its keys."""
        column = self.k[:, self.readers.index(reader)]
        return self.writers[int(np.nanargmax(column))]

    def best_pair(self) -> tuple[Head, Head]:
        """(writer, reader) of the largest K-composition of the run."""
        i, j = np.unravel_index(int(np.nanargmax(self.k)), self.k.shape)
        return self.writers[i], self.readers[j]


def composition(cfg: TrainConfig, weights: dict[str, np.ndarray]) -> Composition:
    """The K-composition of every head into every head of a later layer (every earlier → later pair of layers)."""
    writers = [(l, h) for l in range(cfg.n_layers - 1) for h in range(cfg.n_heads)]
    readers = [(l, h) for l in range(1, cfg.n_layers) for h in range(cfg.n_heads)]

    def table(score) -> np.ndarray:
        return np.array([[score(qk(weights, *r), ov(weights, *w)) if w[0] < r[0] else np.nan for r in readers]
                         for w in writers])
    return Composition(table(metrics.k_composition), metrics.random_k_composition(cfg.d_model, cfg.d_head),
                       table(metrics.aligned_k_composition), tuple(writers), tuple(readers))


@dataclass(frozen=True)
class Circuits:
    """Over the tokens 1 … vocab−1 (the start token never comes up mid-sequence): ``ov[read, raised]`` = W_E W_OV W_U
    of the induction head (row: the token it attends to; column: the logit it raises), with its copying score and the
    share of tokens whose top raised logit is themselves; ``qk[query token, previous token of the key]`` = W_E W_QK
    (W_E W_OV⁰)ᵀ through the partner's OV circuit, with the share of query tokens whose top key is "after myself"."""
    head: Head
    partner: Head
    ov: np.ndarray
    copying: float
    ov_diagonal: float
    qk: np.ndarray
    qk_diagonal: float


class NoCircuits(ValueError):
    """The one refusal of :func:`circuits`: a run whose circuits are not products of its weights; ``str()`` is one
    sentence in the reader's language."""

    def __str__(self) -> str:
        return str(self.args[0])


def circuits(cfg: TrainConfig, weights: dict[str, np.ndarray], head: Head, partner: Head) -> Circuits:
    """The OV and QK circuits of ``head`` (through ``partner``); :class:`NoCircuits` for a LayerNorm run."""
    if cfg.layer_norm:
        raise NoCircuits(Later(N_("This run uses LayerNorm, whose scaling sits between the weights, so a product of "
                                  "weight matrices is not what the model computes: its circuits are not shown.")))
    w_e = weights["W_E"][1:]                                                         # (vocab − 1, d)
    ov_circuit = w_e @ ov(weights, *head) @ weights["W_U"][:, 1:]                   # (vocab − 1, vocab − 1)
    qk_circuit = w_e @ qk(weights, *head) @ (w_e @ ov(weights, *partner)).T         # (vocab − 1, vocab − 1)
    return Circuits(head, partner, ov_circuit, metrics.copying_score(ov_circuit), metrics.diagonal_share(ov_circuit),
                    qk_circuit, metrics.diagonal_share(qk_circuit))


@dataclass(frozen=True)
class SeenTokens:
    """On the second copy: the probability the model gives, in all, to tokens that already stood earlier in the
    sequence (``mass``), against the share of the vocabulary those tokens are (``share``, what a model that knows
    nothing of the context would give them). A model that has learnt "tokens come back" has mass > share without
    copying anything."""
    mass: float
    share: float


def seen_tokens(cfg: TrainConfig, weights: dict[str, np.ndarray]) -> SeenTokens:
    model = model_from(cfg, weights)
    held = data.batch(cfg, KNOCKOUT_SIZE, data.generator(cfg.seed, 3), task="induction")
    with torch.inference_mode():
        p = model(held.tokens).softmax(dim=-1)[:, :-1]                                   # (B, T − 1, vocab)
    hot = torch.nn.functional.one_hot(held.tokens[:, :-1], cfg.vocab).bool()             # (B, T − 1, vocab)
    seen = hot.cummax(dim=1).values                                                      # seen at or before t
    seen[..., data.BOS] = False
    _first, second = held.copy_masks()
    mass = (p * seen).sum(dim=-1)[second].mean()
    share = (seen.sum(dim=-1) / (cfg.vocab - 1))[second].mean()
    return SeenTokens(float(mass), float(share))
