"""A number that says which of two words the model links a pronoun to, for one text of a minimal pair.

- decoder (causal LM): the text plus a question prompt (``' The word "it" refers to the'``), then the next-token
  probabilities of the candidates (``" animal"``, ``" street"``) and their log-odds. The app loads models without
  their language-model head: logits are the final hidden state times the output embedding — the input embedding
  when ``config.tie_word_embeddings`` (SmolLM2, GPT-2), else the head read once from the model's own folder.
  A candidate of several tokens is scored by its FIRST token (a note says so).
- encoder: cos(final state of the query word, final state of candidate 1) − cos(…, candidate 2); a word of
  several tokens is the mean of its tokens' states. (Masked-word probabilities for encoders with an MLM head are
  not implemented yet: the embedded MiniLM has none.)
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import torch

from explorer.model import families
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import _

PROMPT = ' The word "{query}" refers to the'
_heads: weakref.WeakKeyDictionary[torch.nn.Module, tuple] = weakref.WeakKeyDictionary()


@dataclass
class Measure:
    """One text's measure. ``values``: per candidate, next-token probability (decoder) or cosine (encoder).
    ``score``: log P(c1) − log P(c2) (decoder) or cos(c1) − cos(c2) (encoder); > 0 means c1 is preferred."""
    text: str
    kind: str                  # "next-token" | "representation"
    candidates: list[str]
    values: dict[str, float]
    score: float
    prompt: str                # what the model read
    notes: list[str] = field(default_factory=list)

    @property
    def prefers(self) -> str:
        return self.candidates[0] if self.score >= 0 else self.candidates[1]


@dataclass
class PairMeasure:
    a: Measure
    b: Measure
    shift: float               # a.score − b.score: how far the preference moves between the texts
    notes: list[str] = field(default_factory=list)


def pair_notes(a: Measure, b: Measure) -> list[str]:
    if a.prefers == b.prefers:
        return [_("The model prefers {word} in both texts (score {a} in A, {b} in B).").format(
            word=repr(a.prefers), a=numbers.signed(a.score, 2), b=numbers.signed(b.score, 2))]
    return [_("The model prefers {word_a} in A ({a}) and {word_b} in B ({b}).").format(
        word_a=repr(a.prefers), a=numbers.signed(a.score, 2), word_b=repr(b.prefers), b=numbers.signed(b.score, 2))]


@dataclass
class Probe:
    """Inputs for one text (batch 1) and how to turn final hidden states ``(batch, tokens, d_model)`` into scores."""
    text: str
    prompt: str
    kind: str
    candidates: list[str]
    inputs: dict
    values_of: Callable[[torch.Tensor], torch.Tensor]   # hidden -> (batch, 2) log-probs or cosines
    notes: list[str] = field(default_factory=list)

    def scores(self, hidden: torch.Tensor) -> np.ndarray:
        with torch.inference_mode():
            v = self.values_of(hidden).double()
        return (v[:, 0] - v[:, 1]).cpu().numpy()

    def measure(self, hidden: torch.Tensor) -> list[Measure]:
        with torch.inference_mode():
            v = self.values_of(hidden).double().cpu()
        shown = v.exp() if self.kind == "next-token" else v
        return [Measure(self.text, self.kind, list(self.candidates),
                        {c: float(x) for c, x in zip(self.candidates, row)}, float(s[0] - s[1]), self.prompt,
                        list(self.notes)) for row, s in zip(shown, v)]


def output_embedding(loaded: LoadedModel) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(weight (vocab, d_model), bias or None)`` of the causal LM's head, loaded once per model."""
    model = loaded.model
    if model in _heads:
        return _heads[model]
    if getattr(model.config, "tie_word_embeddings", False):
        found = (model.get_input_embeddings().weight, None)
    else:
        from transformers import AutoModelForCausalLM
        folder = getattr(model.config, "_name_or_path", "") or getattr(model, "name_or_path", "")
        try:
            full = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True,
                                                        trust_remote_code=False)
        except (OSError, ValueError) as err:
            raise ValueError(f"{loaded.spec.name} has untied output embeddings and its language-model head could "
                             f"not be loaded from {folder!r} ({str(err).splitlines()[0][:160]}).") from err
        head = full.get_output_embeddings()
        found = (head.weight.detach().to(loaded.device),
                 None if getattr(head, "bias", None) is None else head.bias.detach().to(loaded.device))
        del full
    scale = families.logit_scale(model)
    if scale != 1.0:   # the family's head scales its logits (Cohere, Granite): fold the scale into W_U and b_U
        found = tuple(None if t is None else t.detach() * scale for t in found)
    _heads[model] = found
    return found


def _decoder_probe(loaded, text, candidates, query, prompt) -> Probe:
    tok = loaded.tokenizer
    full = text.rstrip() + prompt.format(query=query)
    inputs = {k: v.to(loaded.device) for k, v in tok(full, return_tensors="pt").items()
              if k in {"input_ids", "attention_mask"}}
    ids, notes = [], []
    for cand in candidates:
        pieces = tok(" " + cand.strip(), add_special_tokens=False)["input_ids"]
        if not pieces:
            raise ValueError(_("{word} gives no token.").format(word=repr(cand)))
        if len(pieces) > 1:
            notes.append(_("{word} is {n} tokens ({tokens}): its first token's probability stands for the "
                           "word.").format(word=repr(cand), n=len(pieces),
                                           tokens=", ".join(repr(tok.decode([p])) for p in pieces)))
        ids.append(pieces[0])
    if ids[0] == ids[1]:
        raise ValueError(_("{first} and {second} start with the same token: pick other words.").format(
            first=repr(candidates[0]), second=repr(candidates[1])))
    weight, bias = output_embedding(loaded)
    chosen = torch.tensor(ids, device=weight.device)

    def values_of(hidden):
        logits = hidden[:, -1].to(weight) @ weight.T           # (batch, vocab)
        if bias is not None:
            logits = logits + bias
        logits = families.final_logits(loaded.model, logits)
        return torch.log_softmax(logits.double(), dim=-1)[:, chosen]
    return Probe(text, full, "next-token", list(candidates), inputs, values_of, notes)


def _encoder_probe(loaded, text, candidates, query) -> Probe:
    from explorer.attention.analysis import find_word, word_positions
    from explorer.attention.result import tokenise
    tok = tokenise(loaded.tokenizer, text, 10**9)
    view = SimpleNamespace(text=text, words=tok["words"], word_ids=tok["word_ids"])
    q = word_positions(view, find_word(view, query, last=True))
    cands = [word_positions(view, find_word(view, c)) for c in candidates]
    notes = [_("Representation measure: cosine of the final state of {query} with each candidate's final state "
               "(this encoder has no masked-word head here).").format(query=repr(query))]
    for cand, pos in zip(candidates, cands):
        if len(pos) > 1:
            pieces = ", ".join(repr(tok["tokens"][p]) for p in pos)
            notes.append(_("{word} is {n} tokens ({tokens}): the mean of their final states stands for the "
                           "word.").format(word=repr(cand), n=len(pos), tokens=pieces))

    def values_of(hidden):
        h = hidden.double()
        anchor = h[:, q].mean(1)                               # (batch, d_model)
        return torch.stack([torch.cosine_similarity(anchor, h[:, c].mean(1), dim=-1) for c in cands], dim=1)
    inputs = {k: v.to(loaded.device) for k, v in tok["inputs"].items()}
    return Probe(text, text, "representation", list(candidates), inputs, values_of, notes)


def make_probe(loaded: LoadedModel, text: str, candidates=("animal", "street"), query: str = "it",
               prompt: str = PROMPT) -> Probe:
    """The probe for ``text``: next-token for decoders, representation for encoders."""
    if len(candidates) != 2:
        raise ValueError(_("The measure compares exactly two candidate words."))
    if loaded.kind == "decoder":
        return _decoder_probe(loaded, text, list(candidates), query, prompt)
    if loaded.kind == "encoder":
        return _encoder_probe(loaded, text, list(candidates), query)
    raise ValueError(_("No measure for a {kind} model yet.").format(kind=loaded.kind))
