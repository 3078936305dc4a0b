"""The shared-server rules as the app meets them: local folders through ``registry.resolve_spec`` and hub downloads
through ``loading._load_from_hub`` (size, disk and memory checked before downloading, one download at a time)."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from test_policy import meta  # the recorded hub answers

from explorer.model import loading, registry
from explorer.serving import local_folders, policy


def model_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text('{"model_type": "bert"}')
    return path


def refused(name: str) -> str:
    with pytest.raises(registry.ModelUnavailable) as err:
        registry.resolve_spec(name)
    return str(err.value)


# ---------------------------------------------------------------------------------------------- local folders

@pytest.fixture
def local_off(monkeypatch):
    monkeypatch.delenv("EXPLORER_ALLOW_LOCAL", raising=False)   # tests/conftest.py switches it on
    monkeypatch.delenv("EXPLORER_LOCAL_ROOT", raising=False)


def test_while_off_an_existing_and_a_missing_folder_read_the_same(tmp_path, local_off, monkeypatch):
    real = model_folder(tmp_path / "real")
    touched = []
    for target, attr in [(os, "stat"), (os, "lstat"), (os, "scandir"), (os.path, "realpath"), (Path, "stat"),
                         (Path, "resolve"), (Path, "exists"), (Path, "is_dir"), (Path, "is_file")]:
        monkeypatch.setattr(target, attr, lambda *a, **k: touched.append(a[:1]) or 1 / 0)
    existing, missing = refused(str(real)), refused(str(tmp_path / "gone"))
    etc = refused("/etc")
    monkeypatch.undo()
    assert touched == []
    assert existing.replace(str(real), "X") == missing.replace(str(tmp_path / "gone"), "X") == etc.replace("/etc", "X")
    assert local_folders.LOCAL_OFF in existing and "Embedded models that always work" in existing


@pytest.mark.parametrize("name", ["../../x", "./models/bert", "~/m", "a/b/c", "C:\\models", "/etc/passwd"])
def test_every_path_shape_is_a_folder_and_refused_while_off(name, local_off):
    assert local_folders.LOCAL_OFF in refused(name)


def test_hub_ids_are_not_paths_while_off(local_off):
    assert registry.resolve_spec("prajjwal1/bert-tiny").source == "hub"
    assert registry.resolve_spec("gpt2").source == "hub"
    assert "neither a hub id" in refused("<script>x</script>")


def test_on_a_folder_under_the_root_loads(tmp_path, monkeypatch):
    root = tmp_path / "root"
    inside = model_folder(root / "m")
    monkeypatch.setenv("EXPLORER_ALLOW_LOCAL", "1")
    monkeypatch.setenv("EXPLORER_LOCAL_ROOT", str(root))
    spec = registry.resolve_spec(str(inside))
    assert (spec.source, spec.name) == ("local", str(inside.resolve()))
    assert registry.resolve_spec("./m").name == str(inside.resolve())


def test_on_dot_dot_and_symlinks_out_of_the_root_are_refused(tmp_path, monkeypatch):
    root = tmp_path / "root"
    model_folder(root / "m")
    outside = model_folder(tmp_path / "outside")
    (root / "link").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("EXPLORER_ALLOW_LOCAL", "1")
    monkeypatch.setenv("EXPLORER_LOCAL_ROOT", str(root))
    for name in ("../outside", str(root / ".." / "outside"), str(root / "link"), "./link", str(outside)):
        assert "There is no model folder" in refused(name), name
    # and a folder outside reads exactly like one that does not exist
    assert refused(str(outside)).replace(str(outside), "X") == refused(str(tmp_path / "nope")).replace(
        str(tmp_path / "nope"), "X")


# ---------------------------------------------------------------------------------------------- hub downloads

@pytest.fixture
def hub(monkeypatch):
    """The online path on recorded metadata: this machine cannot reach the hub, so the hub's answer is the
    recorded file list (tests/unit/hub_metadata), the reachability probe says yes, the local cache misses, and
    the download itself is a stand-in that records what it was asked for."""
    downloads = []
    monkeypatch.setattr(loading, "hub_reachable", lambda *a, **k: True)
    monkeypatch.setattr(policy, "fetch_metadata", lambda name, *a, **k: meta(name))
    monkeypatch.setattr(policy, "free_disk", lambda *a, **k: 500 * 10**9)
    monkeypatch.setattr(policy, "free_memory", lambda: 64 * 10**9)
    monkeypatch.delenv("EXPLORER_MAX_MODEL_MB", raising=False)

    def from_folder(folder, spec, device, **kwargs):
        if kwargs.get("local_files_only"):
            raise OSError("not in the local cache")
        downloads.append(spec.name)
        return "loaded " + spec.name
    monkeypatch.setattr(loading, "_from_folder", from_folder)
    return downloads


def load(name: str, messages: list | None = None):
    report = (lambda f, m: messages.append(m)) if messages is not None else (lambda f, m: None)
    return loading._load_from_hub(registry.resolve_spec(name), "cpu", report)


def test_a_model_under_the_cap_is_downloaded_and_its_size_said(hub):
    """Online path on recorded metadata (it cannot run against the real hub here): roberta-base is 502,132,829 bytes
    (model.safetensors + config and tokenizer files), 503 MB rounded up."""
    messages = []
    assert load("roberta-base", messages) == "loaded roberta-base" and hub == ["roberta-base"]
    assert any("Downloading roberta-base (503 MB)" in m for m in messages)
    assert loading.current_download() is None


def test_above_the_cap_nothing_is_downloaded_and_the_message_says_how_to_change_it(hub, monkeypatch):
    """Online path on recorded metadata: Llama-3.1-405B is 809,948 MB; gpt2 (551 MB) over a 500 MB cap."""
    with pytest.raises(registry.ModelUnavailable, match=r"809,948 MB download.*up to 2,048 MB.*EXPLORER_MAX_MODEL_MB"):
        load("meta-llama/Llama-3.1-405B")
    monkeypatch.setenv("EXPLORER_MAX_MODEL_MB", "500")
    with pytest.raises(registry.ModelUnavailable, match=r"gpt2 is a 551 MB download.*up to 500 MB"):
        load("gpt2")
    assert hub == []


def test_not_enough_disk_or_memory_refuses_before_downloading(hub, monkeypatch):
    """Online path on recorded metadata: roberta-base needs 552 MB of disk (502 MB + 10 %) and
    599 MB of memory (124,697,433 float32 parameters x 4 bytes x 1.2 = 598,547,678 bytes)."""
    monkeypatch.setattr(policy, "free_disk", lambda *a, **k: 400 * 10**6)
    with pytest.raises(registry.ModelUnavailable, match=r"needs 552 MB of disk.*only 400 MB is free"):
        load("roberta-base")
    monkeypatch.setattr(policy, "free_disk", lambda *a, **k: 10**12)
    monkeypatch.setattr(policy, "free_memory", lambda: 300 * 10**6)
    with pytest.raises(registry.ModelUnavailable, match=r"needs about 599 MB of memory.*only 300 MB is available"):
        load("roberta-base")
    assert hub == []


def test_offline_the_hub_is_not_asked(monkeypatch):
    asked = []
    monkeypatch.setattr(policy, "fetch_metadata", lambda *a, **k: asked.append(a) or {})
    monkeypatch.setattr(loading, "_from_folder", lambda *a, **k: (_ for _ in ()).throw(OSError("no cache")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(registry.ModelUnavailable, match="no network connection"):
        load("roberta-base")
    assert asked == []


def test_one_download_at_a_time_and_the_second_says_it_waits(hub, monkeypatch):
    """Online path on recorded metadata: the first download holds the slot until released; the second reports
    that another download is running, then runs alone."""
    release, started = threading.Event(), threading.Event()
    running, most = [0], [0]
    real = loading._from_folder

    def slow(folder, spec, device, **kwargs):
        if not kwargs.get("local_files_only"):
            running[0] += 1
            most[0] = max(most[0], running[0])
            started.set()
            release.wait(10)
            running[0] -= 1
        return real(folder, spec, device, **kwargs)
    monkeypatch.setattr(loading, "_from_folder", slow)
    first = threading.Thread(target=load, args=("roberta-base",))
    messages = []
    second = threading.Thread(target=load, args=("gpt2", messages))
    try:
        first.start()
        assert started.wait(10) and loading.current_download() == "roberta-base"
        second.start()
        for _ in range(250):
            if any("another download (roberta-base) is running" in m for m in messages):
                break
            threading.Event().wait(0.02)
        assert any("another download (roberta-base) is running" in m for m in messages)
        assert running == [1] and hub == []          # gpt2 has not started
    finally:
        release.set()
        first.join(10)
        second.join(10)
    assert hub == ["roberta-base", "gpt2"] and most[0] == 1 and loading.current_download() is None
