"""Faithfulness by removal (ERASER's "comprehensiveness", DeYoung et al. 2020): take away the k words a method
ranks highest and see how far the prediction's score moves. A faithful method names words the model needs, so
removing them moves the score most; a seeded random order of the words shows what chance does.

Removal depends on the model: a decoder's words are deleted from the token sequence (the question after the text
stays, and a causal model needs no placeholder); an encoder's are replaced by its mask token (else its pad or
unknown token), so the positions the representation measure reads (the query and the candidates) stay where they
are.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from explorer.heads_do.measures import Probe
from explorer.model.loading import LoadedModel
from explorer.words.i18n import N_, Later

KS = (1, 2, 3)
N_RANDOM = 4          # random orders averaged for the chance row


def fill_token(tokenizer) -> int | None:
    """The token that stands in for a removed word in an encoder: mask, else pad, else unknown."""
    for name in ("mask_token_id", "pad_token_id", "unk_token_id"):
        found = getattr(tokenizer, name, None)
        if found is not None:
            return int(found)
    return None


def without(inputs: dict, positions: list[int], delete: bool, fill: int | None = None) -> dict:
    """``inputs`` (batch 1) with the tokens at ``positions`` deleted (``delete``) or replaced by ``fill``."""
    if delete:
        keep = [p for p in range(inputs["input_ids"].shape[1]) if p not in set(positions)]
        return {k: v[:, keep] for k, v in inputs.items()}
    ids = inputs["input_ids"].clone()
    ids[0, list(positions)] = fill
    return {**inputs, "input_ids": ids}


def random_orders(n_words: int, n: int = N_RANDOM, seed: int = 0) -> list[list[int]]:
    """``n`` seeded random orders of the word indices (the same every run)."""
    rng = np.random.default_rng(seed)
    return [rng.permutation(n_words).tolist() for _ in range(n)]


def score(loaded: LoadedModel, probe: Probe) -> float:
    """The probe's score on its own inputs (nothing removed)."""
    with loaded.lock, torch.inference_mode():
        return float(probe.scores(loaded.model(**probe.inputs, use_cache=False).last_hidden_state)[0])


def removal_scores(loaded: LoadedModel, probe: Probe, word_tokens: list[list[int]], orders: list[list[int]],
                   ks=KS, progress: Callable[[float], None] | None = None) -> np.ndarray:
    """``[order, k]``: the probe's score with the first ``k`` words of each order removed. Each distinct set of
    words is run once, and the inputs of one length in one batch (a decoder's texts lose different numbers of
    tokens; an encoder's all keep theirs). ``word_tokens[w]``: the token positions of word w in ``probe.inputs``."""
    delete = loaded.kind == "decoder"
    fill = None if delete else fill_token(loaded.tokenizer)
    if not delete and fill is None:
        raise ValueError(Later(N_("This tokenizer has no mask, pad or unknown token to stand in for a removed word.")))
    sets = sorted({frozenset(order[:k]) for order in orders for k in ks}, key=sorted)
    variants = [without(probe.inputs, sorted(p for w in words for p in word_tokens[w]), delete, fill)
                for words in sets]
    groups: dict[int, list[int]] = {}                  # inputs of one length run as one batch
    for i, inputs in enumerate(variants):
        groups.setdefault(inputs["input_ids"].shape[1], []).append(i)
    found: dict[frozenset, float] = {}
    with loaded.lock, torch.inference_mode():
        for done, members in enumerate(groups.values()):
            batch = {k: torch.cat([variants[i][k] for i in members]) for k in variants[members[0]]}
            hidden = loaded.model(**batch, use_cache=False).last_hidden_state
            for i, value in zip(members, probe.scores(hidden)):
                found[sets[i]] = float(value)
            if progress:
                progress((done + 1) / len(groups))
    return np.array([[found[frozenset(order[:k])] for k in ks] for order in orders])
