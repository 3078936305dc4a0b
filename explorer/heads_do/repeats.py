"""Copying a repeated sequence: how surprised a decoder is by each copy of a sequence that repeats, with and
without some heads, and where a head looks from the second copy (the induction-head story of Olsson et al. 2022;
the heads' role scores over a random sequence are :mod:`explorer.heads_do.roles`).

A text's repeat is its longest tail made of the same tokens twice: tokens ``offset … offset+n−1`` and
``offset+n … offset+2n−1``. Each copy's loss is the mean of −ln p(token | the tokens before it), in nats, over the
copy's tokens after its first (the first token of either copy follows something the model has not seen before it,
so no copying can predict it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.heads_do import knockout
from explorer.heads_do.measures import output_embedding
from explorer.model import families
from explorer.model.loading import LoadedModel
from explorer.words.i18n import N_

Heads = dict[int, list[int]]   # {layer: [head, …]}, as knockout.knockout takes them


def find_repeat(ids: list[int]) -> tuple[int, int]:
    """``(offset, n)``: the longest tail of ``ids`` that is n ≥ 2 tokens twice (``ids[offset:offset+n]`` ==
    ``ids[offset+n:]``). Raises ValueError when the sequence does not end in a repeat."""
    ids = [int(i) for i in ids]
    for n in range(len(ids) // 2, 1, -1):
        if ids[-2 * n:-n] == ids[-n:]:
            return len(ids) - 2 * n, n
    raise ValueError("the text does not end with a sequence of tokens written twice")


def token_losses(loaded: LoadedModel, ids: list[int], heads: Heads | None = None) -> np.ndarray:
    """``[len(ids) − 1]``: −ln p(ids[t + 1] | ids[:t + 1]) in nats, with ``heads`` knocked out (zeroed) if given."""
    if loaded.kind != "decoder":
        raise ValueError("Only a decoder predicts the next token: this model is an encoder.")
    w_u, b_u = output_embedding(loaded)
    with knockout.knockout(loaded.model, heads or {}), loaded.lock, torch.inference_mode():
        hidden = loaded.model(input_ids=torch.tensor([ids], device=loaded.device), use_cache=False)
        logits = hidden.last_hidden_state[0].to(w_u) @ w_u.T                     # (tokens, vocab)
        if b_u is not None:
            logits = logits + b_u
        logp = torch.log_softmax(families.final_logits(loaded.model, logits).double(), dim=-1)
    nxt = torch.tensor(ids[1:], device=logp.device)[:, None]
    return -logp[:-1].gather(1, nxt)[:, 0].cpu().numpy()


@dataclass(frozen=True)
class CopyLoss:
    """Mean loss (nats per token) on the first and the second copy, and the repeat's ``offset`` and length ``n``."""
    first: float
    second: float
    offset: int
    n: int


def copy_loss(losses: np.ndarray, offset: int, n: int) -> CopyLoss:
    """Each copy's mean of ``losses`` (``token_losses``: entry t is the loss of token t + 1) over its tokens after
    its first."""
    first = losses[offset:offset + n - 1]              # tokens offset+1 … offset+n−1
    second = losses[offset + n:offset + 2 * n - 1]     # tokens offset+n+1 … offset+2n−1
    return CopyLoss(float(first.mean()), float(second.mean()), offset, n)


def copy_losses(loaded: LoadedModel, ids: list[int], heads: Heads | None = None) -> CopyLoss:
    """Both copies' losses for ``ids`` (which must end in a repeat), with ``heads`` knocked out if given."""
    offset, n = find_repeat(ids)
    return copy_loss(token_losses(loaded, ids, heads), offset, n)


LOOKS = {"previous": N_("the token just before it"), "first": N_("the first token"),   # shown through _()
         "same": N_("the same token in the first copy"), "after": N_("the token after that one in the first copy")}


def looks(weights: np.ndarray, offset: int, n: int) -> dict[str, float]:
    """Where one head's ``weights[query, key]`` go from the second copy's queries, as mean weights over them:
    ``previous`` (key q − 1), ``first`` (key 0), ``same`` (the query's twin in the first copy, q − n) and
    ``after`` (the twin's successor, q − n + 1: the induction pattern). Keys of LOOKS."""
    q = offset + n + np.arange(n)
    w = np.asarray(weights, dtype=np.float64)
    return {"previous": float(w[q, q - 1].mean()), "first": float(w[q, 0].mean()),
            "same": float(w[q, q - n].mean()), "after": float(w[q, q - n + 1].mean())}
