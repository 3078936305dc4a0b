"""The corpus pass: every head's queries and keys over the built-in corpus, exactly those the model multiplies.

The model reads the sentences of ``corpus.SENTENCES`` in batches (padded on the right; the padding is masked and
dropped, so each sentence's queries and keys are those it gets alone) while
``capture.recording()`` keeps, per layer, the queries and keys handed to its own eager attention: after the
projections, after RoPE for a rotary decoder, before grouped key heads are repeated. Each layer is checked as the
heatmap pages are (``capture.recompute_tensors``: our softmax(QKᵀ·scale + mask) against the model's weights).

Storage is float16, ``[layer, head, point, d_head]`` for queries and ``[layer, kv_head, point, d_head]`` for keys,
one point per token of the corpus; the map needs only their directions and sizes, and float16 keeps ~3 significant
digits. Cost: ``n_tokens × n_layers × (n_heads + n_kv_heads) × d_head × 2`` bytes — 24 MB for the embedded encoder
(2,781 tokens × 6 layers × (12 + 12) heads × 32 dims) and 107 MB for the embedded decoder (2,424 tokens × 30 layers
× (9 + 3) heads × 64 dims). A model whose pass would pass ``EXPLORER_GEOMETRY_MB`` (default 256) is refused
before it runs.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import torch

from explorer.attention.result import ModelFacts, model_facts, token_texts
from explorer.geometry.corpus import SENTENCES
from explorer.model.capture import recompute_tensors, recording
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import N_, Later

BUDGET_MB = int(os.environ.get("EXPLORER_GEOMETRY_MB", "256"))
BATCH = 16   # sentences per forward pass, padded on the right (real tokens never see the padding)


class GeometryUnavailable(ValueError):
    """The corpus pass cannot run for this model; the message says why and what to pick instead."""


@dataclass
class CorpusPass:
    """Queries and keys of every head of one model over a corpus, one point per token.

    ``queries``: float16 ``[layer, head, point, d_head]``; ``keys``: float16 ``[layer, kv_head, point, d_head]``
    (query head h reads key head ``h // (n_heads // n_kv_heads)``). ``sentence``, ``position``, ``token_ids``,
    ``special``: ``[point]``; sentence s holds points ``starts[s]:starts[s + 1]``. ``scaling[layer]`` multiplies
    q·k in the model. ``fidelity``: max |our recompute − model weights| over every layer, head and sentence.
    ``previous``/``first``: ``[layer, head]`` the model's mean weight on the previous token / on position 0
    (queries from position 1 on).
    """
    facts: ModelFacts
    sentences: tuple[str, ...]
    tokens: list[str]
    sentence: np.ndarray
    position: np.ndarray
    token_ids: np.ndarray
    special: np.ndarray
    starts: np.ndarray
    queries: np.ndarray
    keys: np.ndarray
    scaling: np.ndarray
    fidelity: float
    previous: np.ndarray
    first: np.ndarray
    seconds: float = 0.0

    @property
    def n_points(self) -> int:
        return len(self.tokens)

    @property
    def nbytes(self) -> int:
        return self.queries.nbytes + self.keys.nbytes

    def kv_head(self, head: int) -> int:
        """The key head that query head ``head`` multiplies (grouped-query attention shares key heads)."""
        return head // (self.queries.shape[1] // self.keys.shape[1])

    def head_qk(self, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
        """Float64 queries and keys ``[point, d_head]`` of one query head and the key head it reads."""
        return (self.queries[layer, head].astype(np.float64),
                self.keys[layer, self.kv_head(head)].astype(np.float64))


def estimate_bytes(facts: ModelFacts, n_tokens: int) -> int:
    """Bytes the pass stores: float16 queries and keys of every layer for ``n_tokens`` tokens."""
    return n_tokens * facts.n_layers * (facts.n_heads + facts.n_kv_heads) * facts.d_head * 2


def check_model(loaded: LoadedModel, n_tokens: int, budget_mb: int | None = None) -> ModelFacts:
    """The model's facts, or GeometryUnavailable when the pass cannot run (encoder-decoder, over budget)."""
    facts = model_facts(loaded)
    if loaded.kind == "encoder-decoder":
        raise GeometryUnavailable(Later(N_(
            "{model} is an encoder-decoder. Head geometry does not support its attention yet (cross-attention takes "
            "queries from the decoder and keys from the encoder, and its heads add a position bias the map would "
            "leave out). Pick an encoder or a decoder, such as the embedded ones."), model=facts.name))
    budget = BUDGET_MB if budget_mb is None else budget_mb
    need = estimate_bytes(facts, n_tokens)
    if need > budget * 2**20:
        raise GeometryUnavailable(Later(N_(
            "{model} is too large for the head-geometry pass on this server: its queries and keys over the corpus "
            "({tokens} tokens × {layers} layers × {heads} heads × {dims} dims, float16) need {need} MB; the budget "
            "is {budget} MB (EXPLORER_GEOMETRY_MB). Pick a smaller model."), model=facts.name,
            tokens=numbers.integer(n_tokens),
            layers=facts.n_layers, heads=facts.n_heads + facts.n_kv_heads, dims=facts.d_head,
            need=numbers.number(need / 2**20, 0, group=True), budget=numbers.integer(budget)))
    return facts


def _tokens(tokenizer, sentences, max_tokens: int | None = None) -> list[dict]:
    out = []
    for text in sentences:
        enc = tokenizer(text, return_tensors="pt", return_special_tokens_mask=True,
                        **(dict(truncation=True, max_length=max_tokens) if max_tokens else {}))
        ids = enc["input_ids"][0].tolist()
        out.append(dict(inputs={k: v for k, v in enc.items() if k in {"input_ids", "attention_mask",
                                                                      "token_type_ids"}},
                        ids=ids, special=enc["special_tokens_mask"][0].bool().numpy(),
                        tokens=token_texts(tokenizer, ids)))
    return out


def _padded(batch: list[dict], device: str) -> dict:
    """One batch of sentences as model inputs, padded on the right with masked-out positions: the real tokens
    never attend to padding (it is masked), and their positions stay 0, 1, 2, … (as alone)."""
    width = max(len(e["ids"]) for e in batch)
    out = {}
    for name in batch[0]["inputs"]:
        rows = [e["inputs"][name][0] for e in batch]
        out[name] = torch.stack([torch.nn.functional.pad(r, (0, width - len(r))) for r in rows]).to(device)
    if "attention_mask" not in out:
        out["attention_mask"] = torch.stack([torch.nn.functional.pad(torch.ones(len(e["ids"]), dtype=torch.long),
                                                                     (0, width - len(e["ids"]))) for e in batch])
    return out


def run_pass(loaded: LoadedModel, sentences: tuple[str, ...] = SENTENCES, progress=None,
             budget_mb: int | None = None, max_tokens: int | None = None) -> CorpusPass:
    """Queries and keys of every head of ``loaded`` over ``sentences`` (``BATCH`` at a time), each cut to
    ``max_tokens`` tokens when given.

    ``progress(fraction, message)`` is called after each sentence. Raises GeometryUnavailable before any forward
    pass for a model it cannot map, and after the first when its queries and keys cannot be captured.
    """
    report = progress or (lambda fraction, message: None)
    report(0.0, Later(N_("Reading the corpus…")))   # each waiting session reads it in its own language
    start = time.perf_counter()
    encoded = _tokens(loaded.tokenizer, sentences, max_tokens)
    n = sum(len(e["ids"]) for e in encoded)
    facts = check_model(loaded, n, budget_mb)
    L, H, KV, D = facts.n_layers, facts.n_heads, facts.n_kv_heads, facts.d_head
    queries = np.empty((L, H, n, D), dtype=np.float16)
    keys = np.empty((L, KV, n, D), dtype=np.float16)
    previous, first = np.zeros((L, H)), np.zeros((L, H))
    scaling, fidelity, at, counted = np.zeros(L, dtype=np.float32), 0.0, 0, 0
    for b in range(0, len(encoded), BATCH):
        batch = encoded[b:b + BATCH]
        with recording() as records, loaded.lock, torch.inference_mode():
            loaded.model(**_padded(batch, loaded.device), use_cache=False)
        if len(records) != L or any(r["bias"] is not None for r in records):
            raise GeometryUnavailable(Later(N_("The queries and keys of {model} could not be captured ({calls} "
                                               "attention calls for {layers} layers)."), model=facts.name,
                                            calls=len(records), layers=L))
        for layer, record in enumerate(records):
            scaling[layer] = record["scaling"] if record["scaling"] is not None else D ** -0.5
            here = at
            for i, enc in enumerate(batch):
                t = len(enc["ids"])
                one = {k: v[i:i + 1] if isinstance(v, torch.Tensor) and v.shape[0] == len(batch) else v
                       for k, v in record.items()}
                queries[layer, :, here:here + t] = one["q"][0, :, :t].float().cpu().numpy()  # (head, T, d_head)
                keys[layer, :, here:here + t] = one["k"][0, :, :t].float().cpu().numpy()     # (kv_head, T, d_head)
                _, ours = recompute_tensors(one)
                w = one["weights"][0, :, :t, :t].float().cpu()                              # (head, T, T)
                fidelity = max(fidelity, float((ours[:, :t, :t].cpu() - w).abs().max()))
                w = w.numpy()
                previous[layer] += w[:, np.arange(1, t), np.arange(t - 1)].sum(axis=1)
                first[layer] += w[:, 1:, 0].sum(axis=1)
                here += t
        at += sum(len(e["ids"]) for e in batch)
        counted += sum(len(e["ids"]) - 1 for e in batch)
        done = min(b + BATCH, len(encoded))
        report(done / len(encoded), Later(N_("Reading the corpus: sentence {done} of {n}…"), done=done,
                                          n=len(encoded)))
    queries.setflags(write=False)
    keys.setflags(write=False)
    return CorpusPass(
        facts=facts, sentences=tuple(sentences), tokens=[t for e in encoded for t in e["tokens"]],
        sentence=np.repeat(np.arange(len(encoded)), [len(e["ids"]) for e in encoded]).astype(np.int32),
        position=np.concatenate([np.arange(len(e["ids"])) for e in encoded]).astype(np.int32),
        token_ids=np.array([i for e in encoded for i in e["ids"]], dtype=np.int64),
        special=np.concatenate([e["special"] for e in encoded]),
        starts=np.cumsum([0, *[len(e["ids"]) for e in encoded]]), queries=queries, keys=keys, scaling=scaling,
        fidelity=fidelity, previous=previous / max(counted, 1), first=first / max(counted, 1),
        seconds=time.perf_counter() - start)
