"""Minimal pairs: a clean and a corrupted text of the same token length, and what is measured on them.

A decoder's metric is the logit difference ``logit(answer) − logit(wrong)`` at the last position (each answer a
single token). An encoder's is one head's attention from a query word to candidate 0 minus to candidate 1 (the
antecedent flip: "… because it was too tired / wide"). The checks that refuse a pair before anything runs live
here; each raises ``Refused`` with one sentence that the page shows in its reader's language.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.words.i18n import N_, Later

MAX_TOKENS = 64
"""The most tokens a text of a pair may have. Each cell of an exact grid is one row of a batched forward pass:
the residual grid of SmolLM2 at 64 tokens is 30 × 64 rows of 64 tokens, about seven times the benchmarked
24-token grid (bench/patching_bench.py) — past that a class would wait minutes, so the pair is refused instead."""

MIN_DIFFERENCE = {"decoder": 1.0, "encoder": 0.05}
"""The least |clean − corrupted| metric a pair needs, per kind of model. Decoder: 1 logit, a factor e ≈ 2.7 in the
odds between the two answers; below it the normalised grid divides by a difference that is mostly the model's
indifference, and every cell reads as noise scaled up. Encoder: 0.05 of the query's attention (a row of weights sums
to 1), i.e. one twentieth of what the head attends with moving between the candidates."""

MAX_CHARACTERS = 20 * MAX_TOKENS   # longer texts are refused before they are tokenised (a token is rarely > 20 chars)


class Refused(ValueError):
    """A pair or request that patching refuses. ``args[0]`` is a ``Later``: ``str(err)`` is the one sentence in the
    language current where it is shown; ``err.later.message`` the English source (a catalogue id)."""

    def __init__(self, later: Later):
        super().__init__(later)
        self.later = later

    def __str__(self) -> str:
        return str(self.later)


class LaterNumber:
    """A number in a refusal, formatted in the reader's locale when the sentence is shown (not when raised);
    ``decimals=None``: a count, grouped ("1.290" in German)."""

    def __init__(self, x: float, decimals: int | None = 2, signed: bool = False):
        self.x, self.decimals, self.signed = float(x), decimals, signed

    def __str__(self) -> str:
        from explorer.words import numbers
        if self.decimals is None:
            return numbers.integer(int(self.x))
        return numbers.signed(self.x, self.decimals) if self.signed else numbers.number(self.x, self.decimals)

    def __repr__(self) -> str:
        return f"LaterNumber({self.x!r})"


def refuse(message: str, **fields) -> Refused:
    return Refused(Later(message, **fields))


@dataclass(frozen=True)
class MinimalPair:
    """A clean and a corrupted text of the same token length, and the metric to read on them.

    Decoder: ``answer`` and ``wrong`` (each a single token when written after a space): the metric is
    ``logit(answer) − logit(wrong)`` at the last position. Encoder: ``layer``, ``head``, ``query`` (a word) and
    ``candidates`` (two words): the metric is that head's attention from the query word's tokens (their mean) to
    candidate 0's tokens (their sum) minus to candidate 1's. ``model``: the model the pair is written for (a
    registry name), "" for any; ``title``: a short English name (N_, shown through ``_()``)."""
    clean: str
    corrupted: str
    answer: str | None = None
    wrong: str | None = None
    layer: int | None = None
    head: int | None = None
    query: str | None = None
    candidates: tuple[str, str] | None = None
    model: str = ""
    title: str = ""

    @property
    def kind(self) -> str:
        return "encoder" if self.candidates is not None else "decoder"


READY: dict[str, MinimalPair] = {
    "ioi": MinimalPair("When Mary and John went to the store, John gave a drink to",
                       "When Mary and John went to the store, Mary gave a drink to",
                       answer="Mary", wrong="John", model=EMBEDDED_DECODER,
                       title=N_("Indirect object: who gets the drink?")),
    "induction": MinimalPair("piano river candle forest orbit silver piano river candle forest",
                             "piano river candle table orbit silver piano river candle forest",
                             answer="orbit", wrong="silver", model=EMBEDDED_DECODER,
                             title=N_("Induction: random words written twice")),
    "factual": MinimalPair("The capital of France is the city of", "The capital of Italy is the city of",
                           answer="Paris", wrong="Rome", model=EMBEDDED_DECODER,
                           title=N_("Factual recall: a capital city")),
    "flip": MinimalPair("The animal didn't cross the street because it was too tired.",
                        "The animal didn't cross the street because it was too wide.",
                        layer=3, head=1, query="it", candidates=("animal", "street"), model=EMBEDDED_ENCODER,
                        title=N_("Antecedent flip: what does “it” refer to?")),
}


# ---------------------------------------------------------------------------------------------- checks on texts

def check_text(text: str, which: Later) -> None:
    """Refuse an empty text or one too long to tokenise (``which``: "the clean text" / "the corrupted text")."""
    if not isinstance(text, str) or not text.strip():
        raise refuse(N_("{which} is empty: write a sentence."), which=which)
    if len(text) > MAX_CHARACTERS:
        raise refuse(N_("{which} has {n} characters; patching takes at most {limit} tokens, so shorten it."),
                     which=which, n=LaterNumber(len(text), None), limit=MAX_TOKENS)


def check_lengths(clean: list[str], corrupted: list[str]) -> None:
    """Refuse two token lists of different lengths, saying where they differ and how to fix it."""
    if len(clean) > MAX_TOKENS or len(corrupted) > MAX_TOKENS:
        raise refuse(N_("A text of the pair has {n} tokens; patching takes at most {limit}: shorten both texts."),
                     n=max(len(clean), len(corrupted)), limit=MAX_TOKENS)
    if len(clean) == len(corrupted):
        return
    ops = [op for op in difflib.SequenceMatcher(a=clean, b=corrupted, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    _tag, a0, a1, b0, b1 = ops[0]
    raise refuse(N_("The clean text has {n_clean} tokens and the corrupted text {n_corrupted}: they differ at "
                    "{clean_part} against {corrupted_part} (each token between quotes). Choose words that split "
                    "into as many tokens in both texts."),
                 n_clean=len(clean), n_corrupted=len(corrupted), clean_part=_shown(clean[a0:a1]),
                 corrupted_part=_shown(corrupted[b0:b1]))


def _shown(tokens: list[str]) -> str:
    return " ".join(repr(t) for t in tokens) if tokens else "∅"


def differing(clean_ids: list[int], corrupted_ids: list[int]) -> list[int]:
    """The positions where the two texts' tokens differ."""
    return [i for i, (a, b) in enumerate(zip(clean_ids, corrupted_ids)) if a != b]


CLEAN, CORRUPTED = Later(N_("The clean text")), Later(N_("The corrupted text"))
