"""What a hub model would give before it is downloaded: its family, its size and which capabilities work.

The hub serves a model's ``config.json`` (a few kB) apart from its weights; its ``model_type`` names the family
(``explorer.model.families``), and the rest of the config can refuse more (an OPT model normalising after each
residual sum). The size comes from the hub's file list (``serving.policy``), as the download check reads it.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace

from explorer.model import families
from explorer.serving import policy
from explorer.words import numbers
from explorer.words.i18n import _

MAX_CONFIG_BYTES = 1_000_000


@dataclass(frozen=True)
class Curated:
    """A small hub model per family that an online server can offer: its id, family, parameters, licence, and
    where the parameter count and licence were checked."""
    hub_id: str
    family: str
    parameters: str
    licence: str
    checked: str


# Each entry checked on 2026-12-03 against its model card (or a page quoting the card's front matter); counts of
# the two BERTs and DistilBERT also by building the model from its config on the meta device (4,385,920;
# 109,482,240; 66,362,880 parameters). google/gemma-3-270m (270 M, Gemma terms of use) is left out: the hub gates
# it behind accepting Google's licence, so a server without a token of an account that did cannot download it.
CURATED = (
    Curated("EleutherAI/pythia-70m", "gpt_neox", "70 M", "Apache-2.0",
            "model card (license: apache-2.0) and a listing quoting it (70.4M parameters)"),
    Curated("gpt2", "gpt2", "124 M", "MIT", "openai-community/gpt2 card and listings (license: mit; 124M)"),
    Curated("HuggingFaceTB/SmolLM2-360M", "llama", "360 M", "Apache-2.0",
            "SmolLM2 card (135M, 360M, 1.7B sizes; Apache 2.0)"),
    Curated("Qwen/Qwen2.5-0.5B", "qwen2", "0.5 B", "Apache-2.0",
            "Qwen2.5-0.5B card as quoted by model listings (0.49B parameters; Apache 2.0)"),
    Curated("prajjwal1/bert-tiny", "bert", "4.4 M", "MIT",
            "card's license: mit; 2 layers, hidden 128: 4,385,920 parameters built from the config"),
    Curated("bert-base-uncased", "bert", "110 M", "Apache-2.0",
            "google-bert/bert-base-uncased card (110M; apache-2.0); 109,482,240 built from the config"),
    Curated("distilbert-base-uncased", "distilbert", "66 M", "Apache-2.0",
            "distilbert/distilbert-base-uncased card (apache-2.0); 66,362,880 parameters built from the config"),
    Curated("t5-small", "t5", "60 M", "Apache-2.0", "google-t5/t5-small card ('60 million parameters'; apache-2.0)"),
)


def curated_text() -> str:
    """The curated list in one line, for the picker's help."""
    return "Small hub models that work here: " + "; ".join(
        f"{c.hub_id} ({families.FAMILIES[c.family].name}, {c.parameters} parameters, {c.licence})" for c in CURATED)


def fetch_config(name: str, timeout: float = 3.0, env: Mapping[str, str] | None = None) -> dict:
    """The hub's ``config.json`` of ``name`` as a dict; ``policy.MetadataUnavailable`` when offline, not a hub id,
    or the hub does not answer."""
    env = os.environ if env is None else env
    if env.get("HF_HUB_OFFLINE", "0").strip().lower() in policy.ON:
        raise policy.MetadataUnavailable(f"Cannot read the config of {name}: this server is offline.")
    if ".." in name or not policy.HUB_ID.match(name):
        raise policy.MetadataUnavailable(f"{name!r} is not a hub id (like 'gpt2' or 'org/model').")
    endpoint = env.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = f"{endpoint}/{urllib.parse.quote(name, safe='/')}/resolve/main/config.json"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            data = json.loads(answer.read(MAX_CONFIG_BYTES))
    except urllib.error.HTTPError as err:
        raise policy.MetadataUnavailable(f"The hub has no config for {name} (HTTP {err.code}).") from err
    except (OSError, ValueError) as err:
        raise policy.MetadataUnavailable(f"The hub did not answer about {name} ({str(err)[:120]}).") from err
    if not isinstance(data, dict):
        raise policy.MetadataUnavailable(f"The config of {name} is not a JSON object.")
    return data


def local_config(folder: str) -> dict | None:
    """A local model folder's ``config.json`` as a dict, or None when it has none that reads."""
    from pathlib import Path
    try:
        data = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")[:MAX_CONFIG_BYTES])
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def config_of(data: dict):
    """A transformers config built from a ``config.json`` dict, offline (a plain namespace for an unknown family:
    enough to name it)."""
    model_type = data.get("model_type")
    if model_type in families.FAMILIES:
        from transformers import AutoConfig
        try:
            return AutoConfig.for_model(model_type, **{k: v for k, v in data.items() if k != "model_type"})
        except (TypeError, ValueError):
            pass
    return SimpleNamespace(**{**data, "model_type": model_type})


def what_works(config) -> str:
    """One paragraph: the family and kind, what works, and each refused capability with its sentence."""
    try:
        fam = families.family_of(config)
    except families.Unsupported as err:
        return str(err)
    found = families.matrix(config)
    works = [_(families.LABELS[c]) for c, why in found.items() if why is None]
    skipped = [c for c in families.DECODER_ONLY if fam.kind != "decoder"]
    refused = {why for c, why in found.items() if why is not None and c not in skipped}
    text = _("{family} ({kind}): {works} work here.").format(family=fam.name, kind=_(fam.kind), works=", ".join(works))
    if refused:
        text += " " + " ".join(sorted(refused))
    return text


def size_words(size_mb: int) -> str:
    """A download's size as people say it: "503 MB", "20 GB" (from 10,000 MB on)."""
    return (numbers.integer(size_mb) + " MB" if size_mb < 10_000
            else numbers.number(size_mb / 1000, 0, group=True) + " GB")


def describe(name: str, config_data: dict | None, size_mb: int | None) -> str:
    """``name``'s family, download size and what works, from what the hub said (None: it did not)."""
    size = _("size unknown") if size_mb is None else size_words(size_mb)
    if config_data is None:
        return _("{model} ({size}): its config could not be read, so what works on it is not known before "
                 "loading.").format(model=name, size=size)
    return f"{name} ({size}). " + what_works(config_of(config_data))

