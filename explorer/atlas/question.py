""""Which head is this?": four heads' top examples shown without their names; the class picks the one that does a
named job (previous-token, induction, sink). Computed from the atlas, so the answer is the model's own.

The right head is the model's strongest on the role's share (``labels.ROLE_SHARE``). The three others are the
strongest heads of other kinds (the other roles, then the broadest head, then the most punctuation-bound), each
kept only when its share of the asked role is at most ``GAP`` times the right head's, so no option is a near-tie
the page would treat as equal; a role whose strongest head takes it on fewer than ``FLOOR`` of its
tokens (an encoder's induction) is not asked. Each head's examples are those of the measure it stands out on most
(:func:`standout`). The order of the four is drawn from a fixed seed per role and model.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from explorer.atlas import head_stats, labels
from explorer.atlas.shipped import Atlas
from explorer.labs.quiz import Question
from explorer.words import numbers
from explorer.words.i18n import N_, _

ROLES = ("previous", "induction", "sink")
GAP = 0.5
FLOOR = 0.2   # a role no head takes on a fifth of its tokens is not asked
LETTERS = ("A", "B", "C", "D")
PROMPTS = {
    "previous": N_("Which of these four heads is the previous-token head?"),
    "induction": N_("Which of these four heads is the induction head?"),
    "sink": N_("Which of these four heads is the sink head (its weight parked on the first token)?"),
}


class NoLineup(ValueError):
    """The atlas cannot give four clearly different heads for this role; the message says why."""


@dataclass(frozen=True)
class Lineup:
    """``heads``: the four heads in the order shown (A–D); ``right``: the index of the asked one; ``shares``: each
    head's share of the asked role; ``shown``: the measure whose examples each head shows."""
    role: str
    heads: tuple[tuple[int, int], ...]
    right: int
    shares: tuple[float, ...]
    shown: tuple[str, ...]


def standout(atlas: Atlas, head: tuple[int, int]) -> str:
    """The example measure ``head`` stands out on most: the one it ranks highest on among the model's heads."""
    best, best_place = head_stats.EXAMPLE_MEASURES[0], 2.0
    for name in head_stats.EXAMPLE_MEASURES:
        if name not in atlas.means or name not in atlas.examples:
            continue
        v = atlas.means[name].astype(np.float64)
        finite = v[np.isfinite(v)]
        place = float((finite > v[head]).sum()) / max(finite.size, 1)
        if place < best_place:
            best, best_place = name, place
    return best


def lineup(atlas: Atlas, role: str) -> Lineup:
    """The four heads for ``role``; NoLineup when the atlas lacks the measures or three clear distractors."""
    share_name = labels.ROLE_SHARE[role]
    if share_name not in atlas.means:
        raise NoLineup(_("The stored atlas lacks the measure this question needs."))
    share = np.nan_to_num(atlas.means[share_name].astype(np.float64), nan=0.0)
    right = labels.strongest(atlas, role)[0]
    if share[right] < FLOOR:
        raise NoLineup(_("No head of {model} does this job often on the corpus: even the strongest, {head}, does it "
                         "for only {share} of the tokens it could.").format(
            model=atlas.model, head=f"L{right[0]}H{right[1]}", share=numbers.percent(share[right])))
    pool = [labels.strongest(atlas, other, 3) for other in ROLES if other != role]
    for name in ("entropy", "punctuation", "self"):
        if name in atlas.means:
            v = np.nan_to_num(atlas.means[name].astype(np.float64), nan=-1.0).ravel()
            pool.append([(int(i) // atlas.n_heads, int(i) % atlas.n_heads) for i in np.argsort(-v, kind="stable")[:3]])
    others: list[tuple[int, int]] = []
    for group in pool:
        for head in group:
            if head != right and head not in others and share[head] <= GAP * share[right]:
                others.append(head)
                break
    if len(others) < 3:
        raise NoLineup(_("This model has no three heads clearly different from its strongest one on this role."))
    heads = [right, *others[:3]]
    order = np.random.default_rng(zlib.crc32(f"{atlas.model}/{role}".encode())).permutation(4)
    shown = tuple(heads[i] for i in order)
    return Lineup(role, shown, int(np.flatnonzero(order == 0)[0]), tuple(float(share[h]) for h in shown),
                  tuple(standout(atlas, h) for h in shown))


def question(atlas: Atlas, role: str) -> tuple[Question, Lineup]:
    """The predict-first question for ``role`` and its lineup: options "Head A" … "Head D"."""
    line = lineup(atlas, role)
    options = tuple(_("Head {letter}").format(letter=letter) for letter in LETTERS)
    reveal = "  \n".join(_(REVEALS[role]).format(letter=letter, head=f"L{h[0]}H{h[1]}", share=numbers.percent(s))
                         for letter, h, s in zip(LETTERS, line.heads, line.shares))
    return Question(_(PROMPTS[role]), options, options[line.right], reveal), line


REVEALS = {   # the share of the induction role counts only the tokens seen before in their window
    "previous": N_("Head {letter} is {head}: its top key is the previous token for {share} of the tokens."),
    "induction": N_("Head {letter} is {head}: its top key is the token after an earlier copy for {share} of the "
                    "repeated tokens."),
    "sink": N_("Head {letter} is {head}: its top key is the first token for {share} of the tokens."),
}
