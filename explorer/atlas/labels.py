"""The app's own head names checked against the atlas: does a head named "previous-token" or "induction" (by a
lesson, the head-role probe or the glossary) behave that way across the corpus of real text?

A role is read through one share (``ROLE_SHARE``): how many of the corpus's tokens give that key kind the row's
largest weight. The corpus agrees with a name when the head is among the model's ``TOP_FRACTION`` strongest on that
share (at least the ``TOP_AT_LEAST`` strongest), or when that kind of key is its top key for most tokens (a share of
at least ``MOSTLY``: most of SmolLM2's heads are sinks on real text, so a sink is judged by its share, not its rank);
otherwise the verdict says what the head mostly does instead (the share it is highest on, when that is most tokens).

``verdict`` is the one function that judges a name (data); ``sentence``, ``probe_words`` and the views turn its
verdict into words. Names checked: the lessons' (``NAMED``), head roles' probe badges (``probe_checked``) and the
glossary's examples (``example``).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from explorer.atlas.shipped import Atlas
from explorer.words import numbers
from explorer.words.i18n import N_, _

ROLE_SHARE = {"previous": "top_previous", "induction": "top_induction", "sink": "top_first"}
ROLE_HEADS = {"previous": N_("previous-token head"), "induction": N_("induction head"), "sink": N_("sink head")}
# a role's kind of key, as the verdicts name it (a whole noun phrase: no article to agree with a role word)
ROLE_KEYS = {"previous": N_("the previous token"), "induction": N_("the token after an earlier copy"),
             "sink": N_("the first token")}
ROLE_NAMES = {"previous": N_("previous-token"), "induction": N_("induction"), "sink": N_("sink")}
TOP_FRACTION, TOP_AT_LEAST, MOSTLY = 0.05, 3, 0.5
# head roles' probe scores (explorer/heads_do/roles.py) that name a role the atlas measures
PROBE_ROLES = {"previous_token": "previous", "first_token": "sink", "induction": "induction"}
# the glossary's terms (explorer/words/glossary.toml) shown with an example head, and the role each names
GLOSSARY_ROLES = {"previous-token head": "previous", "induction head": "induction", "sink": "sink"}

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
    ``instead``: the role the head's shares are highest on (may be the same), ``instead_share`` its share."""
    role: str
    share: float
    rank: int
    of: int
    agrees: bool
    instead: str
    instead_share: float = math.nan


def verdict(atlas: Atlas, head: tuple[int, int], role: str) -> Verdict | None:
    """The corpus's verdict on naming ``head`` a ``role`` head, or None when the atlas lacks that share."""
    name = ROLE_SHARE[role]
    if name not in atlas.means:
        return None
    v = atlas.means[name].astype(np.float64)
    finite = v[np.isfinite(v)]
    share = float(v[head])
    rank = int((finite > share).sum()) + 1
    agrees = rank <= max(TOP_AT_LEAST, math.ceil(TOP_FRACTION * finite.size)) or share >= MOSTLY
    shares = {r: float(atlas.means[s][head]) for r, s in ROLE_SHARE.items() if s in atlas.means}
    instead = max(shares, key=lambda r: (np.nan_to_num(shares[r], nan=-1.0), r == role))
    return Verdict(role, share, rank, int(finite.size), agrees, instead, shares[instead])


def mostly(v: Verdict) -> str | None:
    """The other role the head plays on most of the corpus's tokens (its highest share, at least ``MOSTLY``), or
    None when that is the named role or no role takes most tokens."""
    return v.instead if v.instead != v.role and v.instead_share >= MOSTLY else None


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
    other = mostly(v)
    if v.agrees and other:
        return said + _(": the corpus agrees, though for most tokens ({share}) its top key is {key}.").format(
            key=_(ROLE_KEYS[other]), share=numbers.percent(v.instead_share))
    if v.agrees:
        return said + _(": the corpus agrees.")
    if other:
        return said + _(": on real text its top key for most tokens ({share}) is {key}.").format(
            key=_(ROLE_KEYS[other]), share=numbers.percent(v.instead_share))
    return said + _(": on real text it is not among the strongest.")


def probe_words(v: Verdict) -> str:
    """A head-role probe's name for a head, checked in a few words (a table cell): kept when the corpus agrees,
    reworded with the corpus's number when it does not."""
    role, rank, n = _(ROLE_NAMES[v.role]), numbers.integer(v.rank), numbers.integer(v.of)
    if v.agrees:
        return _("{role}: agrees, {share} (rank {rank} of {n})").format(
            role=role, share=numbers.percent(v.share), rank=rank, n=n)
    if other := mostly(v):
        return _("{role} on the probe, mostly {other} on real text ({share})").format(
            role=role, other=_(ROLE_NAMES[other]), share=numbers.percent(v.instead_share))
    return _("{role} on the probe, rank {rank} of {n} on real text ({share})").format(
        role=role, rank=rank, n=n, share=numbers.percent(v.share))


def probe_verdicts(atlas: Atlas, roles, cuts: Mapping[str, float]) -> list[list[Verdict]]:
    """Per row of head roles' table (``layer``, ``head`` and the probe's scores, ``roles.head_roles``): the
    corpus's verdict on each name the probe gives that head (a score at or above its ``cuts`` entry, for a probe
    score in ``PROBE_ROLES``), the strongest name first as the badges order them; [] for a head outside the atlas."""
    found = []
    for row in roles.itertuples(index=False):
        head = (int(row.layer), int(row.head))
        inside = 0 <= head[0] < atlas.n_layers and 0 <= head[1] < atlas.n_heads
        named = sorted(((getattr(row, c) / cuts[c], c) for c in PROBE_ROLES if c in cuts and hasattr(row, c)
                        and getattr(row, c) >= cuts[c]), reverse=True) if inside else []
        verdicts = (verdict(atlas, head, PROBE_ROLES[c]) for _ratio, c in named)
        found.append([v for v in verdicts if v is not None])
    return found


def probe_checked(atlas: Atlas, roles, cuts: Mapping[str, float]) -> list[str]:
    """``probe_verdicts`` in words, one cell per row: each name checked (``probe_words``), joined; '' for none."""
    return ["; ".join(probe_words(v) for v in found) for found in probe_verdicts(atlas, roles, cuts)]


def example(atlas: Atlas, role: str) -> tuple[tuple[int, int], str | None]:
    """``(head, where)``: the head the glossary shows for ``role`` in ``atlas``'s model: one the app names for
    that role (``where`` it does), else the model's strongest on the role's share (``where`` None)."""
    for where, layer, head, named in named_heads(atlas.model):
        if named == role:
            return (layer, head), where
    return strongest(atlas, role)[0], None


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
