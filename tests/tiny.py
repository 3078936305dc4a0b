"""Tiny random models saved to a folder and loaded back through the app's own loading code: no downloads.

Configs follow transformers' own tests (hidden 32, 2 layers, 4 heads); the tokenizer is a word-level
vocabulary built here, so every word in TEXT is one token.
"""
from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    T5Config,
    T5Model,
)

WORDS = ("the animal didn't cross street because it was too tired wide dog bites man cat sat on mat "
         "a an is . , ' didn t").split()
TEXT = "the animal didn't cross the street because it was too tired ."
FAMILIES = ("bert", "gpt2", "llama", "t5")   # the tiny families most unit tests run on (each kind of model)
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


def _tokenizer(with_cls: bool) -> PreTrainedTokenizerFast:
    vocab = {w: i for i, w in enumerate([*SPECIALS, *dict.fromkeys(WORDS)])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if with_cls:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]" if with_cls else None, sep_token="[SEP]" if with_cls else None,
                                   model_max_length=64)


def _vocab_size() -> int:
    return len(SPECIALS) + len(dict.fromkeys(WORDS))


def build(family: str, folder: Path, layers: int = 2) -> Path:
    """Save a tiny random ``family`` model ("bert", "gpt2", "llama", "t5") with its tokenizer into ``folder``
    (``layers`` blocks: 2 unless a test needs a deeper one)."""
    torch.manual_seed(0)
    common = dict(vocab_size=_vocab_size(), pad_token_id=0)
    if family == "bert":
        model = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=37, max_position_embeddings=64, **common))
    elif family == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=layers, n_head=4, n_positions=64, **common))
    elif family == "llama":  # rotary positions and grouped-query attention: 4 query heads share 2 key/value heads
        model = LlamaForCausalLM(LlamaConfig(hidden_size=32, num_hidden_layers=layers, num_attention_heads=4,
                                             num_key_value_heads=2, intermediate_size=37,
                                             max_position_embeddings=64, **common))
    elif family == "t5":
        model = T5Model(T5Config(d_model=32, d_kv=8, num_heads=4, num_layers=2, num_decoder_layers=2, d_ff=37,
                                 decoder_start_token_id=0, **common))
    else:
        raise ValueError(family)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    _tokenizer(with_cls=family == "bert").save_pretrained(folder)
    return folder
