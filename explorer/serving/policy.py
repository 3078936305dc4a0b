"""What a shared server lets its users load: local model folders, and hub models by size, disk and memory.

Pure standard library (no torch, no streamlit), so the checks run before anything heavy is imported. Every
function that reads the environment takes ``env`` (a mapping, default ``os.environ``), so tests pass a dict.

Local folders are ``explorer.serving.local_folders``. Hub models are measured from the hub's file list
(``GET /api/models/<id>?blobs=true``) before any download and refused above ``EXPLORER_MAX_MODEL_MB`` or when
the disk or memory would not hold them.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from explorer.words import numbers
from explorer.words.i18n import _

ON = {"1", "true", "yes", "on"}
DEFAULT_MAX_MODEL_MB = 2048
MB = 1_000_000            # the hub shows sizes in decimal megabytes, and so do we
MEMORY_FACTOR = 1.2       # resident size / float32 weight bytes (activations, tokenizer, Python objects)
DISK_FACTOR = 1.1         # download size + 10 % (partial files, lock files, the tokenizer cache)
BYTES_PER_PARAMETER = 4   # the loader always asks for float32 (models.py: dtype=torch.float32)

HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")  # a hub id


class PolicyRefusal(RuntimeError):
    """The server's policy refuses this model; the message says why and which variable changes it."""


class ModelTooLarge(PolicyRefusal):
    """The download is above EXPLORER_MAX_MODEL_MB."""


class NotEnoughDisk(PolicyRefusal):
    """The hub cache's file system has too little free space for the download."""


class NotEnoughMemory(PolicyRefusal):
    """The machine has too little available memory to hold the model in float32."""


class MetadataUnavailable(PolicyRefusal):
    """The hub's file list could not be read (offline, unknown id, no answer), or it lacks file sizes."""


def environment(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """``env``, or ``os.environ`` when None: what every check here reads its settings from."""
    return os.environ if env is None else env


# ---------------------------------------------------------------------------------------------- hub size

# One format is downloaded; the first present wins. Names: (single file, shard pattern) as transformers asks.
_FORMATS = [
    (".safetensors", "model.safetensors", r"model-\d+-of-\d+\.safetensors"),
    (".bin", "pytorch_model.bin", r"pytorch_model-\d+-of-\d+\.bin"),
    (".pt", None, None), (".pth", None, None), (".h5", "tf_model.h5", r"tf_model-\d+-of-\d+\.h5"),
    (".msgpack", "flax_model.msgpack", r"flax_model-\d+-of-\d+\.msgpack"), (".onnx", None, None),
    (".gguf", None, None),
]
_WEIGHT_SUFFIXES = tuple(s for s, *_formats in _FORMATS) + (".ot", ".tflite", ".ckpt", ".mlmodel")
_SMALL_SUFFIXES = (".json", ".txt", ".model", ".jinja", ".tiktoken")   # config, tokenizer, vocab, merges


def _size(sibling: dict) -> int:
    size = sibling.get("size")
    if size is None and sibling.get("lfs"):
        size = sibling["lfs"].get("size")
    if size is None:
        raise MetadataUnavailable(_("The hub did not give the size of {file} (ask with ?blobs=true).").format(
            file=repr(sibling.get("rfilename"))))
    return int(size)


def weight_files(metadata: dict) -> list[dict]:
    """The siblings a load would download: one weight format plus config and tokenizer files.

    Only top-level files count (from_pretrained ignores sub-folders such as ``onnx/`` or ``original/``) unless
    there are no top-level weights, then every file of the first format found anywhere (an over-estimate).
    Within a format, the standard single file, else its shards, else every file with that suffix.
    """
    siblings = metadata.get("siblings") or []
    top = [s for s in siblings if "/" not in s["rfilename"]]
    small = [s for s in top if s["rfilename"].endswith(_SMALL_SUFFIXES)]
    for pool in (top, siblings):
        for suffix, single, shards in _FORMATS:
            found = [s for s in pool if s["rfilename"].endswith(suffix)]
            if not found:
                continue
            named = [s for s in found if s["rfilename"] == single]
            sharded = [s for s in found if shards and re.fullmatch(shards, s["rfilename"])]
            return small + (named or sharded or found)
    return small


def weights_bytes(metadata: dict) -> int:
    """Bytes a load would download (see weight_files). Raises MetadataUnavailable when a size is missing."""
    return sum(_size(s) for s in weight_files(metadata))


def memory_bytes(metadata: dict) -> int:
    """Memory the loaded model needs: float32 parameters x 1.2.

    The parameter count comes from the hub's ``safetensors.total`` when given (a bfloat16 file doubles once
    loaded in float32); otherwise the files are assumed to hold float32 and their bytes stand for it.
    """
    params = (metadata.get("safetensors") or {}).get("total")
    raw = params * BYTES_PER_PARAMETER if params else weights_bytes(metadata)
    return int(raw * MEMORY_FACTOR)


def max_model_mb(env: Mapping[str, str] | None = None) -> int:
    """EXPLORER_MAX_MODEL_MB (decimal MB), default 2048; a value that is not a whole number >= 0 means 2048."""
    raw = environment(env).get("EXPLORER_MAX_MODEL_MB", "").strip()
    return int(raw) if raw.isdigit() else DEFAULT_MAX_MODEL_MB


def _mb(n: float) -> str:
    return numbers.integer(round(n / MB)) + " MB"


def check_download(name: str, metadata: dict, env: Mapping[str, str] | None = None,
                   free_disk_bytes: int | None = None, free_memory_bytes: int | None = None) -> int:
    """Download size in MB (rounded up) if the server may load ``name``; else a PolicyRefusal subclass.

    Checked in order: the cap (ModelTooLarge), disk for download + 10 % (NotEnoughDisk), memory for float32
    weights x 1.2 (NotEnoughMemory). A free amount of None skips that check.
    """
    size = weights_bytes(metadata)
    size_mb = -(-size // MB)
    cap = max_model_mb(env)
    if size_mb > cap:
        raise ModelTooLarge(_("{model} is a {size} download; this server loads hub models up to {cap} MB (the "
                              "deployer sets EXPLORER_MAX_MODEL_MB).").format(model=name, size=_mb(size),
                                                                              cap=numbers.integer(cap)))
    disk = int(size * DISK_FACTOR)
    if free_disk_bytes is not None and free_disk_bytes < disk:
        raise NotEnoughDisk(_("{model} needs {disk} of disk (its {size} download + 10 %), but only {free} is free "
                              "in the hub cache (HF_HUB_CACHE or HF_HOME chooses where; EXPLORER_MAX_MODEL_MB={cap} "
                              "caps downloads).").format(model=name, disk=_mb(disk), size=_mb(size),
                                                         free=_mb(free_disk_bytes), cap=cap))
    memory = memory_bytes(metadata)
    if free_memory_bytes is not None and free_memory_bytes < memory:
        raise NotEnoughMemory(_("{model} needs about {memory} of memory (float32 weights x 1.2), but only {free} "
                                "is available (lower EXPLORER_MAX_MODEL_MB={cap} to refuse such models before "
                                "asking, or free memory, e.g. fewer EXPLORER_MAX_MODELS).").format(
            model=name, memory=_mb(memory), free=_mb(free_memory_bytes), cap=cap))
    return size_mb


# ---------------------------------------------------------------------------------------------- hub, machine

def fetch_metadata(name: str, timeout: float = 5.0, env: Mapping[str, str] | None = None) -> dict:
    """The hub's answer to ``GET $HF_ENDPOINT/api/models/<name>?blobs=true`` (siblings with sizes), as a dict.

    Raises MetadataUnavailable when HF_HUB_OFFLINE is set, the id is not a hub id, or the hub does not answer.
    """
    env = environment(env)
    if env.get("HF_HUB_OFFLINE", "0").strip().lower() in ON:
        raise MetadataUnavailable(_("Cannot check the size of {model}: this server is offline "
                                    "(HF_HUB_OFFLINE=1).").format(model=name))
    if ".." in name or not HUB_ID.match(name):
        raise MetadataUnavailable(_("{model} is not a hub id (like 'gpt2' or 'org/model').").format(model=repr(name)))
    endpoint = env.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = f"{endpoint}/api/models/{urllib.parse.quote(name, safe='/')}?blobs=true"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            data = json.loads(answer.read(20 * MB))
    except urllib.error.HTTPError as err:
        raise MetadataUnavailable(_("The hub has no model {model} that this server may read (HTTP {code}).").format(
            model=name, code=err.code)) from err
    except (OSError, ValueError) as err:
        raise MetadataUnavailable(_("The hub did not answer about {model} ({error}).").format(
            model=name, error=str(err)[:120])) from err
    if not isinstance(data, dict) or not isinstance(data.get("siblings"), list):
        raise MetadataUnavailable(_("The hub's answer about {model} has no file list.").format(model=name))
    return data


def hub_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where downloads go: HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    env = environment(env)
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def cached_snapshot(name: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The folder of hub model ``name``'s main revision in this server's hub cache when it holds the config and the
    weights (loading it downloads nothing), else None. The cache's own layout: ``models--org--name/refs/main``
    names the commit whose files are in ``snapshots/<commit>/``."""
    if ".." in name or not HUB_ID.match(name):
        return None
    folder = hub_cache_dir(env) / f"models--{name.replace('/', '--')}"
    try:
        snapshot = folder / "snapshots" / (folder / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return None
    weights = [*snapshot.glob("*.safetensors"), *snapshot.glob("pytorch_model*.bin")]
    return snapshot if (snapshot / "config.json").is_file() and weights else None


def free_disk(path: str | Path | None = None) -> int:
    """Free bytes on the file system of ``path`` (default the hub cache); its nearest existing parent is asked."""
    path = Path(path) if path is not None else hub_cache_dir()
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def free_memory() -> int:
    """Bytes a new allocation can get: /proc/meminfo MemAvailable, capped by a cgroup v2 limit if one is set;
    without /proc, free physical pages from os.sysconf."""
    available = None
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if available is None:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        if limit.isdigit():
            available = min(available, max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    return available
