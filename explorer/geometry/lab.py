"""The geometry lab's question: which of these maps is the previous-token head?

The answer comes from the corpus pass itself: each head's mean weight on the token just before the query (the
model's own weights over the whole corpus). The heads shown are the model's strongest previous-token head and
three heads that do something else (the strongest first-token "sink" head and the two heads that look back least),
in an order fixed by the model's name, so every student of a class sees the same maps A–D.
"""
from __future__ import annotations

import zlib

import numpy as np

from explorer.geometry.corpus_pass import CorpusPass
from explorer.labs.quiz import Question
from explorer.words import numbers
from explorer.words.i18n import _

LETTERS = "ABCD"


def candidate_heads(run: CorpusPass) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """Four distinct heads in display order, and which of them is the previous-token head."""
    prev, first = run.previous, run.first
    flat = lambda i: (int(i // prev.shape[1]), int(i % prev.shape[1]))  # noqa: E731
    answer = flat(int(prev.argmax()))
    chosen = [answer]
    for i in [int(first.argmax()), *np.argsort(prev, axis=None, kind="stable")]:
        if flat(i) not in chosen:
            chosen.append(flat(i))
        if len(chosen) == min(4, prev.size):
            break
    order = np.random.default_rng(zlib.crc32(run.facts.name.encode())).permutation(len(chosen))
    return [chosen[i] for i in order], answer


def map_name(i: int) -> str:
    """"Map A" … "Map D", in the current language."""
    return _("Map {letter}").format(letter=LETTERS[i])


def previous_token_question(run: CorpusPass) -> tuple[Question, list[tuple[int, int]]]:
    """The question and the heads of maps A, B, C, D (in that order)."""
    heads, answer = candidate_heads(run)
    options = tuple(map_name(i) for i in range(len(heads)))
    line = _("- Map {letter}: layer {layer} · head {head}, mean weight on the previous token {previous}, on the first "
             "token {first}")
    lines = [line.format(letter=LETTERS[i], layer=l, head=h, previous=numbers.number(run.previous[l, h], 2),
                         first=numbers.number(run.first[l, h], 2)) for i, (l, h) in enumerate(heads)]
    reveal = (_("Over the whole corpus, the previous-token head puts most of each query's weight on the token just "
                "before it. In its map every query sits next to the key of the previous token, so the points form "
                "bands by position instead of clusters by word.") + "\n\n" + "\n".join(lines))
    question = Question(prompt=_("Which of these {n} maps, {first} to {last}, is the previous-token head (each query "
                                 "attends mostly to the token just before it)?").format(
                            n=len(heads), first=LETTERS[0], last=LETTERS[len(heads) - 1]),
                        options=options, correct=options[heads.index(answer)], reveal=reveal)
    return question, heads
