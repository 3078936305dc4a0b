"""One minimal pair on one loaded model, ready to patch: ``prepare`` checks the pair, runs both texts once and keeps
what every patched run reads (each block's input and output, each head's output, attention patterns, projections).

``run`` is the one patched forward pass every granularity calls (TransformerLens's ``generic_activation_patch``):
the rows of a batch each carry a different patch, its hooks are installed and removed together, and blocks before
the first patched layer are not recomputed: they return the cached output of the run's own text. A causal decoder's
run may also start at a later token (``first``): a patch at token p changes nothing before p, so the tokens before it
are not run again; their keys and values in every block come from the plain run's own cache (transformers'
``DynamicCache``, the cache its generation uses, with the model's own position ids p … T − 1).
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.model import anatomy, cut, families
from explorer.model.capture import recording
from explorer.model.loading import LoadedModel
from explorer.patching import hooks
from explorer.patching.minimal_pairs import (
    CLEAN,
    CORRUPTED,
    MIN_DIFFERENCE,
    LaterNumber,
    MinimalPair,
    check_lengths,
    check_text,
    differing,
    refuse,
)
from explorer.words.i18n import N_, Later

TEXTS = ("clean", "corrupted")


@dataclass
class CachedRun:
    """What one text's plain forward pass left, batch 1. ``resid[l]``: block l's input ``(1, T, d_model)``;
    ``outs[l]``: block l's output as the block returns it; ``z[l]``: the heads' outputs, the output projection's
    input ``(1, T, n_heads · d_head)``; ``patterns[l]``: ``(1, n_heads, T, T)`` attention weights (None where the
    family's attention is not recorded); ``v[l]``: value heads ``(1, T, n_kv, d_head)``; ``q[l]``, ``k[l]``: the
    query and key projections' outputs (path patching; None where the family fuses them). ``past[l]``: block l's
    cached keys and values ``(1, kv heads, T, d_head)`` each, a causal decoder's (None for an encoder, or where the
    model's cache does not hold every token of every block)."""
    inputs: dict
    resid: list
    outs: list
    z: list
    patterns: list | None
    v: list
    q: list | None
    k: list | None
    metric: float
    past: list | None = None


@dataclass
class Contrast:
    """A checked pair on a model. ``tokens``: each text's tokens as shown; ``positions``: where they differ;
    ``clean`` and ``corrupted``: the raw metric of each text; ``runs``: cached activations (``CachedRun``) by text."""
    loaded: LoadedModel
    pair: MinimalPair
    kind: str
    tokens: dict
    positions: list[int]
    clean: float
    corrupted: float
    runs: dict
    parts: hooks.Parts
    answer_ids: tuple[int, int] | None = None
    query_rows: list[int] = field(default_factory=list)
    candidate_rows: tuple = ()

    @property
    def n_layers(self) -> int:
        return len(self.parts.layers)

    @property
    def n_heads(self) -> int:
        return self.parts.n_heads

    @property
    def n_tokens(self) -> int:
        return len(self.tokens["clean"])

    @property
    def last_layer(self) -> int:
        """The last layer whose patching can move the metric: the metric's head's layer for an encoder."""
        return self.pair.layer if self.kind == "encoder" else self.n_layers - 1

    def normalise(self, x):
        """``(x − corrupted) / (clean − corrupted)``: 0 is the corrupted run's metric, 1 the clean run's."""
        return (np.asarray(x, dtype=np.float64) - self.corrupted) / (self.clean - self.corrupted)

    def metric(self, hidden: torch.Tensor, records: list, start: int) -> torch.Tensor:
        """``(rows,)``: the metric of each row of a run's final hidden state (decoder) or of its attention records
        (encoder; ``records[i]`` is layer ``start + i``)."""
        if self.kind == "decoder":
            from explorer.heads_do.measures import output_embedding
            weight, bias = output_embedding(self.loaded)
            chosen = torch.tensor(self.answer_ids, device=weight.device)
            logits = hidden[:, -1].to(weight) @ weight[chosen].T                 # (rows, 2)
            if bias is not None:
                logits = logits + bias[chosen]
            logits = families.final_logits(self.loaded.model, logits)
            return logits[:, 0] - logits[:, 1]
        weights = records[self.pair.layer - start]["weights"][:, self.pair.head]   # (rows, T, T)
        rows = weights[:, self.query_rows].mean(1)                                # (rows, T)
        a, b = self.candidate_rows
        return rows[:, a].sum(-1) - rows[:, b].sum(-1)

    def can_skip(self) -> bool:
        """Whether a run may start at a later token (``run``'s ``first``): both texts' caches hold every block's keys
        and values (a causal decoder)."""
        return self.kind == "decoder" and all(r.past is not None for r in self.runs.values())

    def run(self, base: str, rows: int, start: int, pre=(), post=(), block_pre=(), first: int = 0,
            widths: list[int] | None = None) -> torch.Tensor:
        """The metric of ``rows`` copies of text ``base`` with the given hooks, blocks before ``start`` replayed from
        ``base``'s cache. ``first`` (``can_skip`` only): run tokens ``first`` … T − 1 only, the keys and values of
        the earlier ones from ``base``'s cache: exact when no hook changes a token before ``first``. ``widths[l]``:
        the rows block l sees where hooks add rows on the way (``rows`` everywhere unless given): one metric a row
        that leaves the last block. The caller holds the model's lock (and inference mode for exact runs)."""
        cached = self.runs[base]
        inputs = {k: v[:, first:] if k != "attention_mask" else v for k, v in cached.inputs.items()}
        inputs = {k: v.expand(rows, *v.shape[1:]) for k, v in inputs.items()}
        stop = cut.first_blocks(self.loaded.model, self.pair.layer + 1) if self.kind == "encoder" else nullcontext()
        resume = (self.parts.layers, [hooks.tokens_from(o, first) for o in cached.outs[:start]], start, rows) \
            if start > 0 else None
        if first > 0:
            from transformers import DynamicCache
            widths = widths or [rows] * self.n_layers
            past = [(k[:, :, :first].expand(w, -1, -1, -1), v[:, :, :first].expand(w, -1, -1, -1))
                    for (k, v), w in zip(cached.past, widths, strict=True)]
            inputs.update(past_key_values=DynamicCache(past, config=self.loaded.model.config), use_cache=True)
        else:
            inputs["use_cache"] = False
        with hooks.hooks(pre, post, block_pre, resume), recording() as records, stop:
            out = self.loaded.model(**inputs)
        return self.metric(out.last_hidden_state, records, start)


# ---------------------------------------------------------------------------------------------- preparing

def _tokenise(loaded: LoadedModel, text: str) -> tuple[dict, list[int], list[str]]:
    from explorer.attention.result import token_texts
    enc = loaded.tokenizer(text, return_tensors="pt")
    inputs = {k: v.to(loaded.device) for k, v in enc.items() if k in {"input_ids", "attention_mask",
                                                                        "token_type_ids"}}
    ids = inputs["input_ids"][0].tolist()
    return inputs, ids, token_texts(loaded.tokenizer, ids)


def _check_model(loaded: LoadedModel, pair: MinimalPair) -> None:
    model = loaded.model
    why = families.refusal(model, "knockout")
    if why:
        raise refuse(N_("Patching needs each head's output, which this model does not give: {why}"), why=why)
    if loaded.kind != pair.kind:
        raise refuse(N_("This pair is written for a model of the kind “{wanted}”, and {model} is of the kind "
                        "“{kind}”: pick a pair for this model."), wanted=_kind(pair.kind), model=loaded.spec.name,
                     kind=_kind(loaded.kind))
    if len(anatomy.blocks(model)) != getattr(model.config, "num_hidden_layers", len(anatomy.blocks(model))):
        raise refuse(N_("{model} shares its blocks between layers, so a layer's activations cannot be patched "
                        "alone."), model=loaded.spec.name)


def _kind(kind: str) -> Later:
    return Later(kind)   # "encoder" / "decoder": messages of families.KINDS


def _answers(loaded: LoadedModel, pair: MinimalPair) -> tuple[int, int]:
    from explorer.attention.result import token_texts
    ids = []
    for word in (pair.answer, pair.wrong):
        if not isinstance(word, str) or not word.strip():
            raise refuse(N_("A decoder pair needs two answers, the right one and the wrong one."))
        pieces = loaded.tokenizer(" " + word.strip(), add_special_tokens=False)["input_ids"]
        if len(pieces) != 1:
            raise refuse(N_("The answer {word} is {n} tokens ({tokens}); the metric compares two single tokens: "
                            "pick a word that is one token."), word=repr(word.strip()), n=len(pieces),
                         tokens=", ".join(repr(t) for t in token_texts(loaded.tokenizer, pieces)))
        ids.append(pieces[0])
    if ids[0] == ids[1]:
        raise refuse(N_("The two answers are the same token: pick two different words."))
    return ids[0], ids[1]


def _word_rows(loaded: LoadedModel, pair: MinimalPair) -> tuple[list[int], tuple[list[int], list[int]]]:
    from types import SimpleNamespace

    from explorer.attention.analysis import find_word, word_positions
    from explorer.attention.result import tokenise
    if pair.layer is None or pair.head is None or not 0 <= pair.layer < len(anatomy.blocks(loaded.model)) \
            or not 0 <= pair.head < families.n_heads(loaded.model):
        raise refuse(N_("Choose a head of this model: layer 0 to {layers}, head 0 to {heads}."),
                     layers=len(anatomy.blocks(loaded.model)) - 1, heads=families.n_heads(loaded.model) - 1)
    found = []
    for text in (pair.clean, pair.corrupted):
        tok = tokenise(loaded.tokenizer, text, 10**9)
        view = SimpleNamespace(text=text, words=tok["words"], word_ids=tok["word_ids"])
        for word in (pair.query, *pair.candidates):
            try:
                find_word(view, word)
            except ValueError:
                raise refuse(N_("{word} is not a word of {text}: the query word and both candidates must be words "
                                "of each text."), word=repr(word), text=repr(text)) from None
        found.append((word_positions(view, find_word(view, pair.query, last=True)),
                      tuple(word_positions(view, find_word(view, c)) for c in pair.candidates)))
    if found[0] != found[1]:
        raise refuse(N_("The query word and the candidates sit at other tokens in the two texts: change only "
                        "words that keep them in place."))
    query, cands = found[0]
    if cands[0] == cands[1]:
        raise refuse(N_("The two candidates are the same word: pick two different words."))
    return query, cands


def _cache(contrast: Contrast, inputs: dict) -> CachedRun:
    p = contrast.parts
    n = len(p.layers)
    resid, outs, z, v, q, k = ([None] * n for _ in range(6))
    block_pre = [(layer, lambda m, a, kw, i=i: resid.__setitem__(i, hooks.block_input(a, kw)))
                 for i, layer in enumerate(p.layers)]
    post = [(layer, lambda m, a, o, i=i: outs.__setitem__(i, o)) for i, layer in enumerate(p.layers)]
    post += [(proj, lambda m, a, o, i=i: v.__setitem__(i, o)) for i, proj in enumerate(p.values)]
    if p.qkv is not None:
        post += [(qp, lambda m, a, o, i=i: q.__setitem__(i, o)) for i, (qp, _k, _v) in enumerate(p.qkv)]
        post += [(kp, lambda m, a, o, i=i: k.__setitem__(i, o)) for i, (_q, kp, _v) in enumerate(p.qkv)]
    pre = [(proj, lambda m, a, i=i: z.__setitem__(i, a[0])) for i, proj in enumerate(p.out_projs)]
    decoder = contrast.kind == "decoder"
    with hooks.hooks(pre, post, [(m, fn) for m, fn in block_pre]), recording() as records:
        out = contrast.loaded.model(**inputs, use_cache=decoder)
    patterns = [r["weights"] for r in records] if len(records) == n else None
    values = [hooks.head_columns(anatomy.values_of(contrast.loaded.model, x), p.n_kv) for x in v]
    return CachedRun(inputs, resid, outs, z, patterns, values, q if p.qkv else None, k if p.qkv else None,
                     float(contrast.metric(out.last_hidden_state, records, 0)[0]),
                     _past(getattr(out, "past_key_values", None), n, inputs["input_ids"].shape[1]) if decoder else None)


def _past(cache, blocks: int, tokens: int) -> list | None:
    """Each block's keys and values from a plain run's cache, or None unless it is a ``DynamicCache`` that holds
    every token of every block (a sliding window keeps fewer: such a run is never resumed at a later token)."""
    from transformers import DynamicCache
    if not isinstance(cache, DynamicCache) or len(cache.layers) != blocks:
        return None
    kept = [(layer.keys, layer.values) for layer in cache.layers]
    full = all(k is not None and k.dim() == 4 and k.shape[-2] == tokens and v is not None and v.shape[-2] == tokens
               for k, v in kept)
    return kept if full else None


def prepare(loaded: LoadedModel, pair: MinimalPair, least: float | None = None) -> Contrast:
    """Check ``pair`` on ``loaded`` and run both texts once: a ``Contrast`` ready to patch, or ``Refused`` with one
    sentence (an empty or too long text, token lengths that differ, an answer of several tokens, a family without
    the parts, a metric that barely differs between the texts). ``least``: the smallest |clean − corrupted|
    accepted, ``MIN_DIFFERENCE`` of the model's kind unless given (tests on tiny random models pass 0)."""
    check_text(pair.clean, CLEAN)
    check_text(pair.corrupted, CORRUPTED)
    _check_model(loaded, pair)
    (in_a, ids_a, tok_a), (in_b, ids_b, tok_b) = _tokenise(loaded, pair.clean), _tokenise(loaded, pair.corrupted)
    check_lengths(tok_a, tok_b)
    positions = differing(ids_a, ids_b)
    if not positions:
        raise refuse(N_("The clean and the corrupted text are the same tokens: change a word in one of them."))
    answers = _answers(loaded, pair) if pair.kind == "decoder" else None
    query, cands = _word_rows(loaded, pair) if pair.kind == "encoder" else ([], ())
    contrast = Contrast(loaded, pair, pair.kind, {"clean": tok_a, "corrupted": tok_b}, positions, 0.0, 0.0, {},
                        hooks.parts(loaded.model), answers, query, cands)
    with loaded.lock, torch.inference_mode():
        contrast.runs = {"clean": _cache(contrast, in_a), "corrupted": _cache(contrast, in_b)}
    contrast.clean, contrast.corrupted = contrast.runs["clean"].metric, contrast.runs["corrupted"].metric
    least = MIN_DIFFERENCE[pair.kind] if least is None else least
    if not abs(contrast.clean - contrast.corrupted) >= least or contrast.clean == contrast.corrupted:
        raise refuse(N_("The model barely tells the two texts apart: the metric is {clean} on the clean text and "
                        "{corrupted} on the corrupted one, less than {least} apart, so patching would show noise. "
                        "Pick a pair the model gets right."), clean=LaterNumber(contrast.clean, signed=True),
                     corrupted=LaterNumber(contrast.corrupted, signed=True), least=LaterNumber(least))
    return contrast
