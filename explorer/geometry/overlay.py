"""The student's own text on a head's map of the corpus: its queries and keys placed among the corpus's.

The text goes through the same capture as the corpus (``corpus_pass.run_pass`` on one sentence, cut at the model's
maximum length), so its queries and keys are the ones the model multiplies. They are then moved by the corpus
head's alignment (the same shift and scale, ``Alignment.apply``) and projected by the PCA the corpus map was
fitted with (``HeadMap.pca``): the same linear map, so a token of the text lies where that token would lie in the
corpus, and the corpus map itself does not move. t-SNE places only the points it was fitted on and has no rule
for a new point, so a t-SNE map gets no overlay (``place`` returns None). A map draws at most the first
``DRAWN`` tokens of the text (``drawn``): the corpus map alone is ~270–285 kB of JSON, and each token of the text
with its hover adds ~0.14 kB (docs/benchmarks.md, G6).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.attention.result import MAX_TOKENS
from explorer.geometry.corpus_pass import CorpusPass, run_pass
from explorer.geometry.maps import HeadMap
from explorer.geometry.project import pca_transform
from explorer.model import families
from explorer.model.loading import LoadedModel

DRAWN = 64   # tokens of the student's text drawn on a map (its queries and keys: 128 points)


@dataclass(frozen=True)
class TextPass:
    """A student's text through the corpus capture: ``run`` holds its one sentence (``run.tokens``, queries and
    keys of every head); ``n_text_tokens``: tokens the whole text would need (more than ``run.n_points`` when it
    was cut at the model's maximum)."""
    run: CorpusPass
    n_text_tokens: int

    @property
    def truncated(self) -> bool:
        return self.n_text_tokens > self.run.n_points


def max_tokens(loaded: LoadedModel) -> int:
    """The most tokens the model reads at once: the smallest of ``EXPLORER_MAX_TOKENS``, the tokenizer's and the
    position table's limits (as on the heatmap pages)."""
    return min(MAX_TOKENS, getattr(loaded.tokenizer, "model_max_length", 10**9) or 10**9,
               families.context_length(loaded.model.config))


def text_pass(loaded: LoadedModel, text: str) -> TextPass | None:
    """Queries and keys of every head on ``text`` (None for an empty text), cut at ``max_tokens(loaded)``."""
    if not text or not text.strip():
        return None
    full = len(loaded.tokenizer(text)["input_ids"])
    return TextPass(run_pass(loaded, (text,), max_tokens=max_tokens(loaded)), full)


def place(text: CorpusPass, hm: HeadMap) -> np.ndarray | None:
    """Float32 ``[2t, 2]``: the t queries then the t keys of ``text`` (head ``hm.head`` of layer ``hm.layer``) on
    the corpus map ``hm``; None for a map without a linear projection (t-SNE)."""
    if hm.pca is None:
        return None
    q, k = text.head_qk(hm.layer, hm.head)                          # (t, d_head) each
    q2, k2 = hm.alignment.apply(q, k)
    return pca_transform(np.concatenate([q2, k2]), hm.pca)


def drawn(xy: np.ndarray, most: int = DRAWN) -> np.ndarray:
    """The first ``most`` queries and their keys of ``xy [2t, 2]`` (queries then keys), as ``[2m, 2]``."""
    t = len(xy) // 2
    m = min(t, most)
    return np.concatenate([xy[:m], xy[t:t + m]])
