"""One typed result for one input: tokens plus attention ``weights[layer, head, query, key]``.

Extraction runs the model once with ``output_attentions=True`` (eager attention) while ``capture`` records what
went into each layer; every head is then recomputed from scratch, which gives the pre-softmax ``scores`` shown in
the labs and the fidelity number (how far our own softmax(QKᵀ·scale + mask) is from the model's weights).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.model import families
from explorer.model.capture import head_record, recompute_tensors, recording
from explorer.model.loading import LoadedModel

MAX_TOKENS = int(os.environ.get("EXPLORER_MAX_TOKENS", "512"))


@dataclass(frozen=True)
class ModelFacts:
    name: str
    kind: str            # "encoder" | "decoder" | "encoder-decoder"
    family: str          # transformers model_type: bert, llama, gpt2, t5, …
    n_layers: int
    n_heads: int
    n_kv_heads: int      # < n_heads for grouped-query attention
    d_head: int
    d_model: int
    position: str        # families.positions_of: "learned" | "rope" | "alibi" | "relative"; "unknown" family
    causal: bool
    device: str


@dataclass
class AttentionResult:
    """Attention of one model on one text.

    ``weights``: float32 ``[layer, head, query, key]``, post-softmax, each row sums to 1 (exactly 0 above the
    diagonal for causal self-attention). ``scores`` (``head_scores`` for one head): the same before softmax
    (scale, position bias and mask included; ``-inf`` where masked), or None; they are recomputed on demand from
    ``score_records``, each layer's captured queries and keys (a few kB a layer, where the scores themselves
    would double the result: 75 MB more for 512 tokens on the encoder). ``fidelity``: ``[layer, head]`` max
    |our recompute − model| (a :class:`Fidelity`: each number computed when first read), or None.
    Cross attention has different key tokens (``key_tokens``); self-attention leaves them None. ``measure`` names
    what ``weights`` holds when a copy puts another row-stochastic matrix in their place.
    """
    facts: ModelFacts
    text: str
    part: str                      # "self" | "encoder" | "decoder" | "cross"
    tokens: list[str]
    token_ids: list[int]
    special: np.ndarray            # bool [query]
    word_ids: list[int]            # word index per token, -1 for special tokens
    words: list[str]
    weights: np.ndarray
    score_records: tuple[dict, ...] | None = None   # per layer: q, k, scaling, mask, bias (CPU tensors)
    fidelity: "Fidelity | None" = None
    truncated: bool = False
    n_text_tokens: int = 0         # tokens the full text would need
    key_tokens: list[str] | None = None
    key_special: np.ndarray | None = None
    parts: dict[str, "AttentionResult"] = field(default_factory=dict)
    measure: str = "weight"        # what ``weights`` holds, as figures name it ("weight × value size")

    def head_scores(self, layer: int, head: int) -> np.ndarray | None:
        """Pre-softmax scores ``(query, key)`` of one head, float32, or None when none were captured."""
        if self.score_records is None:
            return None
        return recompute_tensors(head_record(self.score_records[layer], head))[0][0].numpy()

    @property
    def scores(self) -> np.ndarray | None:
        """Every head's pre-softmax scores ``[layer, head, query, key]``, built anew on each call (or None)."""
        if self.score_records is None:
            return None
        return np.stack([recompute_tensors(record)[0].numpy() for record in self.score_records])

    @property
    def keys(self) -> list[str]:
        return self.key_tokens if self.key_tokens is not None else self.tokens

    @property
    def keys_special(self) -> np.ndarray:
        return self.key_special if self.key_special is not None else self.special

    def part_named(self, part: str) -> "AttentionResult":
        """For encoder-decoders: "encoder", "decoder" or "cross"; any other model has only itself."""
        return self if part in {self.part, "self"} else self.parts[part]


# ---------------------------------------------------------------------------------------------- extraction

def _display(tokenizer, token_id: int, raw: str) -> str:
    text = tokenizer.decode([token_id])
    if "\ufffd" in text or not text.strip():
        text = raw
    text = text.replace("Ġ", " ").replace("▁", " ").replace("Ċ", "\n").strip(" ")
    return {"": "␣", "\n": "⏎"}.get(text, text.replace("\n", "⏎"))


def token_texts(tokenizer, ids: list[int]) -> list[str]:
    """Each token id as a page shows it: its decoded text without the tokenizer's space or newline marks
    (``Ġ``, ``▁``, ``Ċ``), a lone space as ``␣`` and a newline as ``⏎``; the raw vocabulary entry where decoding
    gives nothing readable (a byte of a longer character)."""
    return [_display(tokenizer, i, r) for i, r in zip(ids, tokenizer.convert_ids_to_tokens(ids))]


def tokenise(tokenizer, text: str, limit: int) -> dict:
    """``text`` tokenised as extraction reads it (special tokens added, at most ``limit`` tokens): a dict of the
    model's ``inputs`` (tensors), ``ids``, ``special`` (bool per token), ``tokens`` (:func:`token_texts`),
    ``word_ids`` (word index per token, -1 for special tokens), ``words``, ``truncated`` and ``n_full`` (tokens the
    whole text needs)."""
    # lists, not tensors: only the model's inputs become tensors (below); turning the offsets and the special
    # tokens' mask into tensors to read them back cost more than the tokenising itself (~1 ms of a 32-token text)
    enc = tokenizer(text, truncation=True, max_length=limit, return_special_tokens_mask=True,
                    return_offsets_mapping=getattr(tokenizer, "is_fast", False))
    ids = list(enc["input_ids"])
    # shorter than the limit: nothing was cut; at the limit, the whole text is tokenised again to count it
    n_full = len(ids) if len(ids) < limit else len(tokenizer(text, add_special_tokens=True)["input_ids"])
    special = np.array(enc["special_tokens_mask"], dtype=bool)
    tokens = token_texts(tokenizer, ids)
    word_ids, words = list(range(len(ids))), list(tokens)
    if getattr(tokenizer, "is_fast", False) and enc.word_ids(0) is not None:
        spans: dict[int, list[int]] = {}
        for pos, (w, (a, b)) in enumerate(zip(enc.word_ids(0), enc["offset_mapping"])):
            if w is not None and not special[pos]:
                spans.setdefault(w, [a, b])[1] = b
        order = {w: i for i, w in enumerate(spans)}
        word_ids = [order.get(w, -1) if not s else -1 for w, s in zip(enc.word_ids(0), special)]
        words = [text[a:b].strip() or tokens[word_ids.index(i)] for i, (a, b) in enumerate(spans.values())]
    word_ids = [-1 if s else w for w, s in zip(word_ids, special)]
    inputs = {k: torch.tensor([v]) for k, v in enc.items() if k in {"input_ids", "attention_mask", "token_type_ids"}}
    return dict(inputs=inputs, ids=ids, special=special, tokens=tokens, word_ids=word_ids, words=words,
                truncated=n_full > len(ids), n_full=n_full)


def model_facts(loaded: LoadedModel) -> ModelFacts:
    """What a page says about a loaded model (kind, family, layers, heads, d_head, positions…), read from its config."""
    c = loaded.model.config
    n_heads = families.n_heads(c)
    d_model, d_head = families.d_model(c), families.d_head(c)
    try:
        position = families.positions_of(c)
    except families.Unsupported:
        position = "unknown"
    return ModelFacts(
        name=loaded.spec.name, kind=loaded.kind, family=c.model_type,
        n_layers=getattr(c, "num_hidden_layers", None) or getattr(c, "n_layer", None) or c.num_layers,
        n_heads=n_heads, n_kv_heads=families.n_kv_heads(c), d_head=d_head,
        d_model=d_model, position=position, causal=loaded.kind == "decoder", device=loaded.device)


def _stack(per_layer, n_layers: int, what: str) -> np.ndarray:
    """``[layer, head, query, key]`` from per-layer ``(1, head, query, key)`` tensors, with a helpful error."""
    if not per_layer or len(per_layer) != n_layers:
        raise RuntimeError(
            f"The model returned {len(per_layer or ())} {what} attention tensors for {n_layers} layers. Load it with "
            "attn_implementation='eager' (other implementations return no attention weights).")
    return np.stack([a[0].float().cpu().numpy() for a in per_layer])   # 3× faster than torch.stack on a CPU


class Fidelity:
    """``[layer, head]``: max |our own softmax(QKᵀ·scale + bias + mask) − the model's weights|, from a result's
    captured queries and keys, each number recomputed the first time it is read and then kept. A page shows one
    head's (``fidelity[layer, head]`` rebuilds that head alone); recomputing every head of every new text cost the
    heatmap page ~0.1 s at 512 tokens. ``np.asarray(fidelity)`` (or ``max()``) reads them all, a layer at once.
    A copy of a result that holds other weights keeps this object: it checks the model's own."""

    def __init__(self, records: tuple[dict, ...], weights: np.ndarray):
        self._records, self._weights = records, weights
        self._kept: dict[tuple[int, int | None], np.ndarray] = {}   # (layer, head or None for all); any thread
        self.shape = tuple(weights.shape[:2])                      # fills it, and a race recomputes the same

    def _difference(self, layer: int, head: int | None) -> np.ndarray:
        got = self._kept.get((layer, head))
        if got is None:
            record = self._records[layer] if head is None else head_record(self._records[layer], head)
            with torch.inference_mode():
                own = recompute_tensors(record)[1].numpy()
            model = self._weights[layer] if head is None else self._weights[layer, head:head + 1]
            np.subtract(own, model, out=own)   # in place: the weights are read-only, own is ours
            got = np.abs(own, out=own).max(axis=(-2, -1))
            got.setflags(write=False)
            self._kept[(layer, head)] = got
        return got

    def layer(self, i: int) -> np.ndarray:
        return self._difference(i, None)

    def __getitem__(self, index: tuple[int, int]) -> float:
        layer, head = index
        whole = self._kept.get((layer, None))
        return float(whole[head] if whole is not None else self._difference(layer, head)[0])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.stack([self.layer(i) for i in range(self.shape[0])]).astype(dtype or np.float32)

    def max(self) -> float:
        return float(np.asarray(self).max())


def _result(facts, text, part, tok, weights, records, key_tok=None) -> AttentionResult:
    kept = fidelity = None
    if records and len(records) == weights.shape[0]:
        moved: dict[int, torch.Tensor] = {}   # a mask or bias shared by every layer is moved once
        kept = tuple(_kept(record, moved) for record in records)
        fidelity = Fidelity(kept, weights)
    extra = {} if key_tok is None else dict(key_tokens=key_tok["tokens"], key_special=key_tok["special"])
    return AttentionResult(facts=facts, text=text, part=part, tokens=tok["tokens"], token_ids=tok["ids"],
                           special=tok["special"], word_ids=tok["word_ids"], words=tok["words"],
                           weights=weights, score_records=kept, fidelity=fidelity, truncated=tok["truncated"],
                           n_text_tokens=tok["n_full"], **extra)


def _kept(record: dict, moved: dict[int, torch.Tensor]) -> dict:
    """What a result keeps of a captured layer to rebuild its scores: on the CPU, without the model's weights;
    ``moved`` holds the CPU copy of each tensor already moved (by id)."""
    def cpu(v):
        if not torch.is_tensor(v):
            return v
        if id(v) not in moved:
            moved[id(v)] = v.detach().cpu()
        return moved[id(v)]
    return {k: cpu(v) for k, v in record.items() if k != "weights"}


def extract(loaded: LoadedModel, text: str, target: str | None = None,
            max_tokens: int | None = None) -> AttentionResult:
    """Run ``loaded`` on ``text`` and return its attention; over-long text is cut at the model's maximum.

    Encoder-decoders read ``text`` in the encoder and ``target`` (default: ``text``) in the decoder; the result is
    the encoder's self-attention with ``parts`` = {"encoder", "decoder", "cross"}.
    """
    if not text or not text.strip():
        raise ValueError("The text is empty: type a sentence to see its attention.")
    model, tokenizer, facts = loaded.model, loaded.tokenizer, model_facts(loaded)
    limit = min(max_tokens or MAX_TOKENS, getattr(tokenizer, "model_max_length", 10**9) or 10**9,
                families.context_length(model.config))
    tok = tokenise(tokenizer, text, limit)
    inputs = {k: v.to(loaded.device) for k, v in tok["inputs"].items()}
    dec = None
    if loaded.kind == "encoder-decoder":
        dec = tokenise(tokenizer, target if target and target.strip() else text, limit)
        start = model.config.decoder_start_token_id or 0
        dec["ids"] = [start, *dec["ids"][:-1]]
        dec["tokens"] = [_display(tokenizer, start, "<start>"), *dec["tokens"][:-1]]
        dec["special"] = np.array([True, *dec["special"][:-1]])
        dec["word_ids"] = [-1, *dec["word_ids"][:-1]]
        inputs["decoder_input_ids"] = torch.tensor([dec["ids"]], device=loaded.device)
    with recording() as records, loaded.lock, torch.inference_mode():
        out = model(**inputs, output_attentions=True, use_cache=False)
    if dec is None:
        weights = _stack(out.attentions, facts.n_layers, "self")
        return _result(facts, text, "self", tok, weights, records)
    n_dec = getattr(model.config, "num_decoder_layers", None) or facts.n_layers
    enc_rec, dec_rec, cross_rec = records[:facts.n_layers], records[facts.n_layers::2], records[facts.n_layers + 1::2]
    main = _result(facts, text, "encoder", tok, _stack(out.encoder_attentions, facts.n_layers, "encoder"), enc_rec)
    dfacts = ModelFacts(**{**facts.__dict__, "n_layers": n_dec, "causal": True})
    main.parts = {
        "encoder": main,
        "decoder": _result(dfacts, text, "decoder", dec, _stack(out.decoder_attentions, n_dec, "decoder"), dec_rec),
        "cross": _result(dfacts, text, "cross", dec, _stack(out.cross_attentions, n_dec, "cross"), cross_rec, tok),
    }
    return main
