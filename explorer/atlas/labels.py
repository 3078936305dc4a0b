"""The app's own head names checked against the atlas: does a head named "previous-token" or "induction" (by a
lesson, the head-role probe or the glossary) behave that way across the corpus of real text?

A role is read through one share (``ROLE_SHARE``): how many of the corpus's tokens give that key kind the row's
largest weight. The corpus agrees with a name when the head is among the model's ``TOP_FRACTION`` strongest on that
share (at least the ``TOP_AT_LEAST`` strongest); otherwise the verdict says what the head mostly does instead (the
share it is highest on).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from explorer.atlas.shipped import Atlas
from explorer.words import numbers
from explorer.words.i18n import N_, _

ROLE_SHARE = {"previous": "top_previous", "induction": "top_induction", "sink": "top_first"}
ROLE_HEADS = {"previous": N_("previous-token head"), "induction": N_("induction head"), "sink": N_("sink head")}
TOP_FRACTION, TOP_AT_LEAST = 0.05, 3

# Where the app names a head of an embedded model: (where, places, model, layer, head, role). ``places``: the
# (lesson, step) pairs ``where`` says, steps counted from 1 as the lesson bar shows them (a test reads them in the
# lesson files: the step shows that head).
NAMED = (
    (N_("lesson 4 (step 3) and lesson 6 (step 6)"), ((4, 3), (6, 6)), "SmolLM2-135M-Instruct", 16, 0, "previous"),
    (N_("lesson 4 (step 4) and lesson 6 (step 6)"), ((4, 4), (6, 6)), "SmolLM2-135M-Instruct", 18, 6, "induction"),
)


@dataclass(frozen=True)
class Verdict:
    """``share``: the role's share for this head; ``rank`` of ``of`` heads on it (1 = highest); ``agrees``;
    ``instead``: the role the head's shares are highest on (may be the same)."""
    role: str
    share: float
    rank: int
    of: int
    agrees: bool
    instead: str


def verdict(atlas: Atlas, head: tuple[int, int], role: str) -> Verdict | None:
    """The corpus's verdict on naming ``head`` a ``role`` head, or None when the atlas lacks that share."""
    name = ROLE_SHARE[role]
    if name not in atlas.means:
        return None
    v = atlas.means[name].astype(np.float64)
    finite = v[np.isfinite(v)]
    share = float(v[head])
    rank = int((finite > share).sum()) + 1
    agrees = rank <= max(TOP_AT_LEAST, math.ceil(TOP_FRACTION * finite.size))
    shares = {r: float(atlas.means[s][head]) for r, s in ROLE_SHARE.items() if s in atlas.means}
    instead = max(shares, key=lambda r: (np.nan_to_num(shares[r], nan=-1.0), r == role))
    return Verdict(role, share, rank, int(finite.size), agrees, instead)


def sentence(v: Verdict) -> str:
    """The verdict in one sentence (lower case, to follow a colon), as shown beside the name."""
    rank, n, share = numbers.integer(v.rank), numbers.integer(v.of), numbers.percent(v.share)
    if v.role == "induction":   # its share counts only the tokens seen before in their window
        said = _("its top key is the token after an earlier copy for {share} of the corpus's repeated tokens "
                 "(rank {rank} of {n} in the model)").format(share=share, rank=rank, n=n)
    elif v.role == "previous":
        said = _("its top key is the previous token for {share} of the corpus's tokens (rank {rank} of {n} in "
                 "the model)").format(share=share, rank=rank, n=n)
    else:
        said = _("its top key is the first token for {share} of the corpus's tokens (rank {rank} of {n} in "
                 "the model)").format(share=share, rank=rank, n=n)
    if v.agrees:
        return said + _(": the corpus agrees.")
    if v.instead != v.role:
        return said + _(": on real text it acts more like another kind of head ({other}).").format(
            other=_(ROLE_HEADS[v.instead]))
    return said + _(": on real text it is not among the strongest.")


def named_heads(model: str) -> list[tuple[str, int, int, str]]:
    """``(where, layer, head, role)`` for every place the app names a head of ``model``."""
    return [(where, layer, head, role) for where, _places, m, layer, head, role in NAMED if m == model]


def strongest(atlas: Atlas, role: str, k: int = 1) -> list[tuple[int, int]]:
    """The ``k`` heads highest on the role's share (ties: the earlier head)."""
    v = np.nan_to_num(atlas.means[ROLE_SHARE[role]].astype(np.float64), nan=-1.0).ravel()
    order = np.argsort(-v, kind="stable")[:k]
    return [(int(i) // atlas.n_heads, int(i) % atlas.n_heads) for i in order]


def profile(atlas: Atlas, head: tuple[int, int]) -> str | None:
    """What ``head`` does on real text in one sentence: how often its top key is the first token, the previous
    token, and (on repeated tokens) the token after an earlier copy; None when the atlas lacks these shares."""
    shares = {r: atlas.means.get(ROLE_SHARE[r]) for r in ("sink", "previous", "induction")}
    if any(v is None for v in shares.values()):
        return None
    first, previous, induction = (float(shares[r][head]) for r in ("sink", "previous", "induction"))
    return _("On real text (Head atlas), its top key is the first token for {first} of the tokens, the previous "
             "token for {previous}, and the token after an earlier copy for {induction} of the repeated "
             "ones.").format(first=numbers.percent(first), previous=numbers.percent(previous),
                             induction=numbers.percent(np.nan_to_num(induction)))
