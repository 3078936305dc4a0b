"""The patching page's predict-first questions, computed from an exact patching result (arrays in, a
:class:`~explorer.labs.quiz.Question` out; no Streamlit, no plotly).

Values are normalised as the page draws them: 0 is the corrupted run's metric, 1 the clean run's. Denoising
(the corrupted run with one clean activation copied in) asks what *restores* the answer: the largest values.
Noising (the clean run with one corrupted activation) asks what *breaks* it: the smallest values, read as
``1 − value`` (how much of the clean answer is lost).

- ``layer_range``: "from which layer range on does the last position carry the answer?": the first layer whose
  patch at the last position restores at least half of the answer (``HALF``), among the model's layers cut into
  ``BANDS`` ranges (and "no layer" when none does). A value within ``RANGE_TIE`` of the half-way line is a near-tie:
  every range holding a layer that could be the first one across, by that margin, counts as right.
- ``which_head``: "which head's output restores (breaks) most of the answer?", among the four heads that move it
  most; a head within ``HEAD_TIE`` of the best counts as right too (two heads the page cannot tell apart).
"""
from __future__ import annotations

import numpy as np

from explorer.labs.quiz import Question, near_best
from explorer.words import numbers
from explorer.words.i18n import _

HALF = 0.5          # share of the answer a layer's patch must restore to "carry" it
RANGE_TIE = 0.1     # a value within this of HALF could be the first layer across: its range counts too
HEAD_TIE = 0.05     # a head within this (normalised) of the best one counts as right too
BANDS = 4           # the layer ranges a layer question offers (besides "no layer")
OPTIONS = 4         # the heads a head question offers


def bands(n_layers: int, count: int = BANDS) -> list[tuple[int, int]]:
    """The layers ``0 … n_layers − 1`` cut into ``count`` ranges as equal as whole layers allow, (first, last)."""
    edges = np.linspace(0, n_layers, min(count, n_layers) + 1).round().astype(int)
    return [(int(a), int(b) - 1) for a, b in zip(edges[:-1], edges[1:])]


def band_name(band: tuple[int, int]) -> str:
    first, last = band
    return _("layer {first}").format(first=first) if first == last else _("layers {first}–{last}").format(
        first=first, last=last)


def _restored(values: np.ndarray, direction: str) -> np.ndarray:
    """How much of the answer each cell moves, on one scale: restored (denoising) or lost (noising)."""
    v = np.asarray(values, dtype=np.float64)
    if direction not in ("denoise", "noise"):
        raise ValueError(f"direction {direction!r} is not denoise or noise")
    return v if direction == "denoise" else 1.0 - v


def first_across(column: np.ndarray, line: float) -> int | None:
    """The first layer whose value reaches ``line`` (None when none does)."""
    hits = np.flatnonzero(np.nan_to_num(np.asarray(column, dtype=np.float64), nan=-np.inf) >= line)
    return int(hits[0]) if hits.size else None


def layer_range(values: np.ndarray, tokens: list[str], direction: str = "denoise",
                query: int | None = None) -> Question:
    """The residual grid's question at the last position: ``values[layer, position]`` (normalised). An encoder's
    metric is read at its query word (``query``, its position; ``values`` then holds the layers up to the metric's
    head only): the question asks there, as the last position means nothing to it."""
    column = _restored(values, direction)[:, -1 if query is None else query]
    n_layers = column.shape[0]
    ranges = bands(n_layers)
    names = [band_name(b) for b in ranges]
    none = _("no layer restores half of it") if direction == "denoise" else _("no layer loses half of it")
    options = (*names, none)

    def option(layer: int | None) -> str:
        return none if layer is None else next(n for n, (a, b) in zip(names, ranges) if a <= layer <= b)

    first = first_across(column, HALF)
    early, late = first_across(column, HALF - RANGE_TIE), first_across(column, HALF + RANGE_TIE)
    tied = set()
    if early is not None:   # each layer that could be the first across, were every value off by RANGE_TIE
        last = n_layers - 1 if late is None else late
        tied = {option(layer) for layer in range(early, last + 1) if column[layer] >= HALF - RANGE_TIE}
        if late is None:   # nothing clearly across: "no layer" is as right as a range that only brushes the line
            tied.add(none)
    right = option(first)
    also = tuple(o for o in options if o in tied and o != right)
    at = tokens[-1 if query is None else query]
    token = at.strip() or at
    if query is not None:
        prompt = (_("Copy the clean run's residual stream at the query word (“{token}”) into the corrupted run, one "
                    "layer at a time. From which layer on does that one copy bring back at least half of the clean "
                    "answer? Which of these {n}?") if direction == "denoise" else
                  _("Copy the corrupted run's residual stream at the query word (“{token}”) into the clean run, one "
                    "layer at a time. From which layer on does that one copy take away at least half of the clean "
                    "answer? Which of these {n}?")).format(token=token, n=numbers.integer(len(options)))
    elif direction == "denoise":
        prompt = _("Copy the clean run's residual stream at the last position (“{token}”) into the corrupted run, one "
                   "layer at a time. From which layer on does that one copy bring back at least half of the clean "
                   "answer? Which of these {n}?").format(token=token, n=len(options))
    else:
        prompt = _("Copy the corrupted run's residual stream at the last position (“{token}”) into the clean run, one "
                   "layer at a time. From which layer on does that one copy take away at least half of the clean "
                   "answer? Which of these {n}?").format(token=token, n=len(options))
    if first is None:
        reveal = _("Measured: no layer gets there; the most is {best} at layer {layer}.").format(
            best=numbers.percent(float(np.nanmax(column))), layer=int(np.nanargmax(column)))
    else:
        reveal = _("Measured: layer {layer} is the first to reach half ({value}); the layer before it gives "
                   "{before}.").format(layer=first, value=numbers.percent(float(column[first])),
                                       before=numbers.percent(float(column[first - 1])) if first else "—")
    if also:
        reveal += " " + _("Some layers lie within {margin} of the half-way line, so every answer they could make "
                          "right counts.").format(margin=numbers.percent(RANGE_TIE))
    return Question(prompt, options, right, reveal, also=also)


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def which_head(values: np.ndarray, direction: str = "denoise", what: str = "") -> Question:
    """The head map's question: ``values[layer, head]`` (normalised); ``what`` names the patched part in the
    prompt (already in the session's language; default "output")."""
    moved = _restored(values, direction)
    flat = np.nan_to_num(moved, nan=-np.inf).ravel()
    order = np.argsort(-flat, kind="stable")[:OPTIONS]
    n_heads = moved.shape[1]
    scores = {head_name(int(i) // n_heads, int(i) % n_heads): float(flat[i]) for i in order}
    best, tied = near_best(scores, HEAD_TIE)
    options = tuple(sorted(scores, key=lambda n: tuple(int(x) for x in n[1:].split("H"))))
    what = what or _("output")
    if direction == "denoise":
        prompt = _("Copy one head's clean {what} into the corrupted run. Which of these {n} heads brings back the "
                   "most of the clean answer?").format(what=what, n=len(options))
    else:
        prompt = _("Copy one head's corrupted {what} into the clean run. Which of these {n} heads takes away the "
                   "most of the clean answer?").format(what=what, n=len(options))
    reveal = _("Measured: {shares}.").format(shares=numbers.joined(
        f"{name} {numbers.percent(scores[name])}" for name in sorted(scores, key=lambda n: -scores[n])))
    if tied:
        reveal += " " + _("The best heads lie within {margin} of each other, so each of them counts as "
                          "right.").format(margin=numbers.percent(HEAD_TIE))
    return Question(prompt, options, best, reveal, also=tied)
