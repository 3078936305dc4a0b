"""Activation patching, attribution patching and path patching on a loaded model (issue 55).

Which activation carries the answer from one text of a minimal pair to the other? ``prepare(loaded, pair)`` checks
a ``MinimalPair`` and runs both texts once (a ``Contrast``); ``patch(contrast, granularity, direction)`` runs the
model again with one activation at a time taken from the other text (exact, hooks); ``preview(contrast)`` is the
first-order estimate of the residual and heads grids from one forward and one backward pass (attribution
patching); ``compare`` puts an exact grid beside its estimate; ``top`` lists the cells that move the metric most.
Everything refused raises ``Refused`` with one sentence (``str(err)`` in the reader's language).

Modules: ``minimal_pairs`` (pairs, ready pairs, limits, refusals), ``hooks`` (one run's hooks, installed and
removed together), ``contrast`` (prepare, the cached runs, the one patched forward pass), ``grids`` (the result and
what exact grids share), ``exact`` (the granularities), ``path`` (path patching), ``attribution`` (preview,
compare).
"""
from explorer.patching.attribution import Agreement, Attribution, compare, preview
from explorer.patching.contrast import Contrast, prepare
from explorer.patching.exact import GRANULARITIES, patch, top
from explorer.patching.grids import DIRECTIONS, Patched
from explorer.patching.minimal_pairs import MAX_TOKENS, MIN_DIFFERENCE, READY, MinimalPair, Refused

__all__ = ["DIRECTIONS", "GRANULARITIES", "MAX_TOKENS", "MIN_DIFFERENCE", "READY", "Agreement", "Attribution",
           "Contrast", "MinimalPair", "Patched", "Refused", "compare", "patch", "prepare", "preview", "top"]
