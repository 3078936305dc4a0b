"""The class's sentences through the page's model in ONE padded batch.

Each sentence is tokenised exactly as a single extraction reads it (``attention.result.tokenise``: the same
special tokens and cut), then the ids are padded on the RIGHT to the longest sentence with an attention mask of 0
on the padding. Right padding keeps every real token at its own position (0, 1, …: no position ids to shift, for
learned positions and RoPE alike) and, in a causal decoder, the padding comes after every real token, so no real
query can see it; in an encoder the mask gives the padded keys weight 0. Each sentence's ``[layer, head, query,
key]`` block, cut to its own tokens, therefore equals its own single forward up to float rounding (the
integration test checks ≤ 1e-5 on both embedded models).

The figure shows one layer, so a batch may stop after it (``up_to``): the model runs its first blocks only
(``cut.first_blocks``, the same modules), and a decoder of 30 layers shown at layer 3 does a seventh of the work.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.attention.result import MAX_TOKENS, tokenise
from explorer.model import cut
from explorer.model.loading import LoadedModel

SENTENCE_TOKENS = 96   # a 300-character sentence is cut here: the figure's tiles stay readable


@dataclass(frozen=True)
class ClassAttention:
    """Every sentence's attention from one batch. Per sentence: ``tokens`` (display texts), ``special`` (bool per
    token), ``word_ids`` (word index per token, -1 for special tokens), ``words``, and ``weights`` of shape
    ``[layer, head, query, key]`` over its own tokens only (float32, after the softmax), for layers 0 to
    ``n_layers - 1``: every layer of the model, or those up to the one the batch stopped after."""
    model: str
    causal: bool
    sentences: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    special: tuple[np.ndarray, ...]
    word_ids: tuple[tuple[int, ...], ...]
    words: tuple[tuple[str, ...], ...]
    weights: tuple[np.ndarray, ...]

    @property
    def n_layers(self) -> int:
        return int(self.weights[0].shape[0]) if self.weights else 0

    @property
    def n_heads(self) -> int:
        return int(self.weights[0].shape[1]) if self.weights else 0

    def head(self, layer: int, head: int) -> list[np.ndarray]:
        """One head's ``[query, key]`` weights in every sentence."""
        return [w[layer, head] for w in self.weights]


def padded_batch(ids: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(input ids, attention mask), both ``(batch, longest)``: each row's ids first, then ``pad_id`` with mask 0."""
    longest = max(len(row) for row in ids)
    input_ids = torch.full((len(ids), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), longest), dtype=torch.long)
    for i, row in enumerate(ids):
        input_ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, :len(row)] = 1
    return input_ids, mask


def _pad_id(tokenizer) -> int:
    for name in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return 0


def class_attention(loaded: LoadedModel, sentences: list[str] | tuple[str, ...],
                    max_tokens: int = SENTENCE_TOKENS, up_to: int | None = None) -> ClassAttention:
    """All ``sentences`` through ``loaded`` (an encoder or a decoder) in one forward pass -> their attention;
    with ``up_to`` (a layer index), the pass stops after that layer and holds layers 0..``up_to`` only.
    ValueError when there is no sentence, or the model is an encoder-decoder (its cross attention has no one head
    per sentence to compare)."""
    if not sentences:
        raise ValueError("No sentences to run.")
    if loaded.kind == "encoder-decoder":
        raise ValueError("The class's sentences are shown for encoders and decoders only.")
    model, tokenizer = loaded.model, loaded.tokenizer
    limit = min(max_tokens, MAX_TOKENS, getattr(tokenizer, "model_max_length", 10**9) or 10**9,
                getattr(model.config, "max_position_embeddings", None) or 10**9)
    toks = [tokenise(tokenizer, text, limit) for text in sentences]
    input_ids, mask = padded_batch([t["ids"] for t in toks], _pad_id(tokenizer))
    inputs = {"input_ids": input_ids.to(loaded.device), "attention_mask": mask.to(loaded.device)}
    if any("token_type_ids" in t["inputs"] for t in toks):
        inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
    if loaded.kind == "decoder":   # right padding: positions 0..n-1 for every real token, as in a single run
        inputs["position_ids"] = torch.arange(input_ids.shape[1], device=loaded.device).expand_as(input_ids)
    total = model.config.num_hidden_layers
    wanted = total if up_to is None else min(max(0, int(up_to)), total - 1) + 1
    with loaded.lock, torch.inference_mode(), cut.first_blocks(model, wanted) as ran:
        out = model(**inputs, output_attentions=True, use_cache=False)
    layers = out.attentions
    if not layers or len(layers) != ran:
        raise RuntimeError("The model returned no attention weights: load it with attn_implementation='eager'.")
    stacked = torch.stack([a.float() for a in layers], dim=1).cpu().numpy()   # (batch, layer, head, query, key)
    weights = tuple(np.ascontiguousarray(stacked[i, :, :, :len(t["ids"]), :len(t["ids"])]) for i, t in enumerate(toks))
    return ClassAttention(
        model=loaded.spec.name, causal=loaded.kind == "decoder", sentences=tuple(sentences),
        tokens=tuple(tuple(t["tokens"]) for t in toks), special=tuple(np.asarray(t["special"]) for t in toks),
        word_ids=tuple(tuple(t["word_ids"]) for t in toks), words=tuple(tuple(t["words"]) for t in toks),
        weights=weights)
