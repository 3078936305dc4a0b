"""The model registry, embedded files, checks and clear errors."""
import time

import pytest

from explorer.model import loading, registry


def test_registry_lists_embedded_first_and_known_hub_ids():
    names = registry.available_models()
    assert names[:2] == [registry.EMBEDDED_ENCODER, registry.EMBEDDED_DECODER]
    for hub_id in ["bert-base-uncased", "distilbert-base-uncased", "roberta-base", "gpt2", "distilgpt2", "t5-small"]:
        assert hub_id in names and registry.resolve_spec(hub_id).source == "hub"
    assert registry.resolve_spec(registry.EMBEDDED_DECODER).kind == "decoder"


@pytest.mark.parametrize("bad", ["", "../../x", "a/b/c", "<script>", "x" * 300])
def test_unusable_names_raise_listing_what_is_valid(bad):
    with pytest.raises(registry.ModelUnavailable) as err:
        registry.resolve_spec(bad)
    assert registry.EMBEDDED_ENCODER in str(err.value) and "gpt2" in str(err.value)


def test_unknown_hub_id_offline_fails_fast_with_a_clear_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(registry.ModelUnavailable) as err:
        loading.load_model("someone/no-such-model-xyz")
    assert "no network" in str(err.value) and registry.EMBEDDED_ENCODER in str(err.value)
    assert time.monotonic() - start < 10  # not the hub client's retries (measured properly in bench/)


def test_deployer_can_switch_the_hub_off_or_allowlist(monkeypatch):
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "0")
    with pytest.raises(registry.ModelUnavailable, match="switched off"):
        loading.load_model("gpt2")
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "1")
    monkeypatch.setenv("EXPLORER_HUB_ALLOWLIST", "distilgpt2")
    with pytest.raises(registry.ModelUnavailable, match="only allows"):
        loading.load_model("gpt2")


def test_local_folder_loads_through_the_same_path(tiny_folder):
    loaded = loading.load_model(str(tiny_folder("gpt2")), device="cpu")
    assert loaded.spec.source == "local" and loaded.kind == "decoder"
    assert not loaded.model.training
    assert loaded.model.config._attn_implementation in {"eager", "explorer_eager"}
    assert not getattr(loaded.model.config, "trust_remote_code", False)


def test_device_choice_can_be_overridden(monkeypatch):
    monkeypatch.setenv("EXPLORER_DEVICE", "cpu")
    assert loading.best_device() == "cpu"
    monkeypatch.delenv("EXPLORER_DEVICE")
    assert loading.best_device() in {"cuda", "mps", "cpu"}
    assert loading.best_device("cpu") == "cpu"
