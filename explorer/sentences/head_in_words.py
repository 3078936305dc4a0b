"""What one head does across the class's sentences, in words, and the class question that asks it first.

Every number here comes from the weights (``batch.ClassAttention``). A query's top key is put in one of a few
kinds, by position only (no grammar): the token itself, the first token (an encoder's [CLS], or a decoder's first
word, where heads with nothing to do put their weight), an end token (any other special token: [SEP]), the token
just before, a token further back, a later token. For a word every sentence holds ("it"), the row of its last
occurrence's first token gives one kind per sentence (a pronoun comes after what it may name); without
a word, each sentence's kind is the one most of its word tokens' rows have. The summary counts the most common kind
("in 23 of 28 sentences, “it” looks most at a token further back") and lists the sentences that differ first.
"""
from __future__ import annotations

import string
from collections import Counter
from dataclasses import dataclass

import numpy as np

from explorer.labs.quiz import Question
from explorer.words.i18n import N_, _, ngettext

from .batch import ClassAttention

SELF, START, END, PREVIOUS, EARLIER, LATER = "self", "start", "end", "previous", "earlier", "later"
KINDS = {   # what a query looks at most, as it reads after "looks most at"
    SELF: N_("the token itself"), START: N_("the first token"), END: N_("the end token"),
    PREVIOUS: N_("the token just before"), EARLIER: N_("a token further back"), LATER: N_("a later token"),
}
BACK = (PREVIOUS, EARLIER)   # "follows the word back": its top key is a token before it, not the first one
_QUOTES = string.punctuation + "“”‘’„«»"


def key_kind(query: int, key: int, special: np.ndarray) -> str:
    """The kind of ``key`` as seen from ``query`` (positions in one sentence; ``special``: bool per token)."""
    if key == query:
        return SELF
    if key == 0:
        return START
    if special[key]:
        return END
    if key == query - 1:
        return PREVIOUS
    return EARLIER if key < query else LATER


def word_position(words: tuple[str, ...], word_ids: tuple[int, ...], word: str) -> int | None:
    """The position of the first token of the last word that reads as ``word`` (case and quotes aside), or None."""
    wanted = word.strip(_QUOTES + " ").casefold()
    for index in reversed(range(len(words))):
        if wanted and words[index].strip(_QUOTES + " ").casefold() == wanted and index in word_ids:
            return word_ids.index(index)
    return None


@dataclass(frozen=True)
class WordRow:
    """One sentence's row of the chosen word: its ``query`` position, the ``row`` of weights over the sentence's
    tokens, the ``top`` key's position and token, and that key's ``kind``."""
    sentence: int
    query: int
    row: np.ndarray
    top: int
    top_token: str
    kind: str


def word_rows(ca: ClassAttention, layer: int, head: int, word: str) -> list[WordRow | None]:
    """The word's row in every sentence (None where the sentence lacks the word)."""
    rows: list[WordRow | None] = []
    for i, weights in enumerate(ca.head(layer, head)):
        q = word_position(ca.words[i], ca.word_ids[i], word)
        if q is None:
            rows.append(None)
            continue
        row = weights[q]
        top = int(np.argmax(row))
        rows.append(WordRow(i, q, row, top, ca.tokens[i][top], key_kind(q, top, ca.special[i])))
    return rows


def sentence_kinds(ca: ClassAttention, layer: int, head: int) -> list[str]:
    """Per sentence, the kind most of its word tokens' rows look at most (ties: the order of ``KINDS``)."""
    kinds = []
    for i, weights in enumerate(ca.head(layer, head)):
        queries = [q for q in range(weights.shape[0]) if not ca.special[i][q]] or list(range(weights.shape[0]))
        seen = Counter(key_kind(q, int(np.argmax(weights[q])), ca.special[i]) for q in queries)
        kinds.append(max(KINDS, key=lambda k: (seen[k], -list(KINDS).index(k))))
    return kinds


@dataclass(frozen=True)
class HeadSummary:
    """``kinds``: one per sentence (None: the word is missing there); ``common``: the most frequent kind and
    ``count`` the sentences that have it, of ``total`` (sentences with a kind); ``order``: the sentences (indices)
    to show, those that differ first, then the others, each group in the class's order."""
    kinds: tuple[str | None, ...]
    common: str
    count: int
    total: int
    order: tuple[int, ...]

    @property
    def odd(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.kinds) if k is not None and k != self.common)


def summarise(kinds: list[str | None]) -> HeadSummary:
    """Count the kinds; the most frequent one is the head's habit (ties: the order of ``KINDS``)."""
    seen = Counter(k for k in kinds if k is not None)
    if not seen:
        return HeadSummary(tuple(kinds), "", 0, 0, tuple(range(len(kinds))))
    common = max(seen, key=lambda k: (seen[k], -list(KINDS).index(k)))
    odd = [i for i, k in enumerate(kinds) if k is not None and k != common]
    rest = [i for i, k in enumerate(kinds) if k == common] + [i for i, k in enumerate(kinds) if k is None]
    return HeadSummary(tuple(kinds), common, seen[common], sum(seen.values()), tuple(odd + rest))


def summary_text(s: HeadSummary, word: str | None = None, rows: list[WordRow | None] | None = None) -> str:
    """The summary in words: the habit, then each sentence that differs (numbered from 1, as on the figure)."""
    if not s.total:
        return _("None of the sentences holds “{word}”.").format(word=word) if word else _("No sentences yet.")
    what = _(KINDS[s.common])
    if word:
        text = ngettext("In {k} of {n} sentence, “{word}” looks most at {what}.",
                        "In {k} of {n} sentences, “{word}” looks most at {what}.", s.total).format(
            k=s.count, n=s.total, word=word, what=what)
    else:
        text = ngettext("In {k} of {n} sentence, this head looks mostly at {what}.",
                        "In {k} of {n} sentences, this head looks mostly at {what}.", s.total).format(
            k=s.count, n=s.total, what=what)
    parts = [text]
    for i in s.odd:
        row = rows[i] if rows else None
        if row is not None:
            parts.append(_("Sentence {i}: at “{token}”, {what}.").format(i=i + 1, token=row.top_token.strip(),
                                                                       what=_(KINDS[row.kind])))
        else:
            parts.append(_("Sentence {i}: {what}.").format(i=i + 1, what=_(KINDS[s.kinds[i]])))
    missing = sum(k is None for k in s.kinds)
    if word and missing:
        parts.append(ngettext("{m} sentence does not hold “{word}”.", "{m} sentences do not hold “{word}”.",
                              missing).format(m=missing, word=word))
    return " ".join(parts)


def back_counts(ca: ClassAttention, layer: int, word: str) -> tuple[list[int], int]:
    """Per head of ``layer``: in how many sentences the word's top key is a real token before it; and how many
    sentences hold the word."""
    per_head = [word_rows(ca, layer, h, word) for h in range(ca.n_heads)]
    total = sum(r is not None for r in per_head[0]) if per_head else 0
    return [sum(r is not None and r.kind in BACK for r in rows) for rows in per_head], total


def follow_question(ca: ClassAttention, layer: int, word: str, n_options: int = 4) -> Question | None:
    """"Which head of this layer will follow the word back to an earlier token in most of our sentences?", its
    options heads of the layer and its answer computed from the class's sentences; None when no head does so in
    any sentence, or when every head does equally often (no right answer)."""
    counts, total = back_counts(ca, layer, word)
    if not total or max(counts) == 0 or len(set(counts)) < 2:
        return None
    best = max(range(len(counts)), key=lambda h: (counts[h], -h))
    lower = sorted((h for h in range(len(counts)) if counts[h] < counts[best]), key=lambda h: (-counts[h], h))
    picks = [lower[round(j * (len(lower) - 1) / max(1, n_options - 2))] for j in range(min(n_options - 1, len(lower)))]
    heads = sorted({best, *picks})
    label = {h: _("head {head}").format(head=h) for h in heads}
    reveal = " · ".join(ngettext("{head}: {k} of {n} sentence", "{head}: {k} of {n} sentences", total).format(
        head=label[h], k=counts[h], n=total) for h in sorted(heads, key=lambda h: -counts[h]))
    prompt = _("Which head of layer {layer} will follow “{word}” back to an earlier token in most of our "
               "sentences?").format(layer=layer, word=word)
    return Question(prompt, tuple(label[h] for h in heads), label[best], reveal)
