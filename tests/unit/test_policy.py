"""explorer.serving.policy: local folders (off by default, confined to a root), hub download size, disk and memory."""
from __future__ import annotations

import json
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from explorer.serving import local_folders, policy

HUB = Path(__file__).parent / "hub_metadata"


def meta(name: str) -> dict:
    return json.loads((HUB / (name.replace("/", "__") + ".json")).read_text())


def model_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text('{"model_type": "bert"}')
    return path


def refusal(name: str, env: dict) -> str:
    with pytest.raises(local_folders.LocalRefused) as err:
        local_folders.check_local(name, env)
    return str(err.value)


# ---------------------------------------------------------------------------------------------- local: switch

@pytest.mark.parametrize("value,on", [(None, False), ("0", False), ("", False), ("no", False), ("1", True),
                                      ("true", True), (" ON ", True), ("yes", True)])
def test_local_folders_are_off_unless_switched_on(value, on):
    env = {} if value is None else {"EXPLORER_ALLOW_LOCAL": value}
    assert local_folders.local_allowed(env) is on


def test_local_root_is_read_without_the_disk():
    assert local_folders.local_root({}) is None and local_folders.local_root({"EXPLORER_LOCAL_ROOT": "  "}) is None
    assert local_folders.local_root({"EXPLORER_LOCAL_ROOT": "/srv/models"}) == Path("/srv/models")
    assert local_folders.local_root({"EXPLORER_LOCAL_ROOT": "~/m", "HOME": "/h"}) == Path("~/m").expanduser()


def test_off_gives_one_message_and_touches_no_file(tmp_path, monkeypatch):
    real = model_folder(tmp_path / "real")
    touched = []

    def spy(*args, **kwargs):
        touched.append(args[:1])
        raise AssertionError("the file system was touched")

    messages = []
    with monkeypatch.context() as m:
        for target, attr in [(os, "stat"), (os, "lstat"), (os, "listdir"), (os, "scandir"), (os, "readlink"),
                             (os, "access"), (os.path, "realpath"), (os.path, "exists"), (os.path, "isdir"),
                             (Path, "stat"), (Path, "resolve"), (Path, "exists"), (Path, "is_dir"),
                             (Path, "is_file"), (Path, "iterdir"), (Path, "absolute")]:
            m.setattr(target, attr, spy)
        for name in (str(real), str(tmp_path / "missing"), "../../etc", "/etc/passwd", "./x", "~root", ""):
            try:
                local_folders.check_local(name, {"EXPLORER_LOCAL_ROOT": str(tmp_path)})
            except local_folders.LocalRefused as err:
                messages.append(str(err))
    assert touched == []
    assert messages == [local_folders.LOCAL_OFF] * 7
    assert "EXPLORER_ALLOW_LOCAL=1" in local_folders.LOCAL_OFF and "EXPLORER_LOCAL_ROOT" in local_folders.LOCAL_OFF


# ---------------------------------------------------------------------------------------------- local: on

def test_on_without_a_root_opens_any_model_folder(tmp_path):
    env = {"EXPLORER_ALLOW_LOCAL": "1"}
    folder = model_folder(tmp_path / "a")
    assert local_folders.check_local(str(folder), env) == folder.resolve()
    (tmp_path / "empty").mkdir()
    assert "has no config.json" in refusal(str(tmp_path / "empty"), env)
    assert refusal(str(tmp_path / "nope"), env) == f"There is no model folder {str(tmp_path / 'nope')!r}."


@pytest.fixture
def rooted(tmp_path):
    """A root holding model folder m, and a model folder outside it; env switched on with that root."""
    root = tmp_path / "root"
    model_folder(root / "m")
    outside = model_folder(tmp_path / "outside")
    (tmp_path / "secret.bin").write_bytes(b"x")
    return root, outside, {"EXPLORER_ALLOW_LOCAL": "1", "EXPLORER_LOCAL_ROOT": str(root)}


def test_on_opens_folders_under_the_root(rooted):
    root, _, env = rooted
    inside = (root / "m").resolve()
    assert local_folders.check_local(str(root / "m"), env) == inside
    assert local_folders.check_local("m", env) == inside                 # relative: taken under the root
    assert local_folders.check_local("./m", env) == inside
    assert local_folders.check_local("m/../m", env) == inside            # '..' that stays inside is fine


def test_leaving_the_root_reads_like_a_missing_folder(rooted):
    root, outside, env = rooted
    (root / "link").symlink_to(outside, target_is_directory=True)
    missing = "There is no model folder 'X' under this server's model folder."
    for name in (str(outside), "../outside", str(root / ".." / "outside"), "link", str(root / "link"),
                 "nothing-here", str(outside.parent / "nothing-here"), "/", "a\0b", "x" * 5000):
        assert refusal(name, env).replace(repr(name), "'X'") == missing, name
    assert str(root) not in refusal("../outside", env)            # the root's path is not shown to users


def test_dot_dot_out_of_the_root_is_refused_before_resolving(rooted, monkeypatch):
    root, _, env = rooted
    resolved, real = [], os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, *a, **k: resolved.append(str(p)) or real(p, *a, **k))
    refusal("../outside", env)
    refusal(str(root / ".." / "outside"), env)
    assert resolved == [str(root), str(root)]                    # only the root itself was looked up


def test_config_and_weights_may_not_link_out_of_the_root(rooted):
    root, outside, env = rooted
    cfg = root / "cfg"
    cfg.mkdir()
    (cfg / "config.json").symlink_to(outside / "config.json")
    assert "has no config.json" in refusal("cfg", env)
    weights = model_folder(root / "w")
    (weights / "model.safetensors").symlink_to(outside.parent / "secret.bin")
    assert "links to files outside" in refusal("w", env)
    (weights / "model.safetensors").unlink()
    (weights / "model.safetensors").symlink_to(root / "m" / "config.json")   # a link that stays inside is fine
    assert local_folders.check_local("w", env) == weights.resolve()


def test_the_root_may_itself_be_a_symlink(rooted, tmp_path):
    root, _, env = rooted
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    env = {**env, "EXPLORER_LOCAL_ROOT": str(alias)}
    through_alias = local_folders.check_local(str(alias / "m"), env)
    assert through_alias == local_folders.check_local("m", env) == (root / "m").resolve()
    assert "There is no model folder" in refusal(str(alias / ".." / "outside"), env)


def test_a_root_that_does_not_exist_is_the_deployers_error(tmp_path):
    env = {"EXPLORER_ALLOW_LOCAL": "1", "EXPLORER_LOCAL_ROOT": str(tmp_path / "gone")}
    assert refusal("m", env) == "EXPLORER_LOCAL_ROOT does not name an existing folder on this server."


@pytest.mark.parametrize("name,is_path", [
    ("/srv/models/bert", True), ("./bert", True), ("../bert", True), ("~/bert", True), ("~", True), (".", True),
    ("..", True), ("models\\bert", True), ("C:models", True), ("a/b/c", True), ("bert/", True), ("a/../b", True),
    ("gpt2", False), ("roberta-base", False), ("meta-llama/Llama-3.1-405B", False), ("org/model.v2", False),
    ("", False), ("all-MiniLM-L6-v2", False)])
def test_looks_like_path_is_a_string_rule(name, is_path):
    assert local_folders.looks_like_path(name) is is_path


# ---------------------------------------------------------------------------------------------- hub size

def test_gpt2_downloads_its_safetensors_and_tokenizer_files_only():
    files = sorted(s["rfilename"] for s in policy.weight_files(meta("gpt2")))
    assert files == ["config.json", "generation_config.json", "merges.txt", "model.safetensors", "tokenizer.json",
                     "tokenizer_config.json", "vocab.json"]
    # 548,105,171 + 665 + 124 + 456,318 + 1,355,256 + 26 + 1,042,301 (no .bin, .h5, .msgpack, .ot, onnx/)
    assert policy.weights_bytes(meta("gpt2")) == 550_959_861


def test_roberta_and_llama_sizes():
    # 498,818,054 + 481 + 603,290 + 456,318 + 1,355,863 + 898,823
    assert policy.weights_bytes(meta("roberta-base")) == 502_132_829
    llama = meta("meta-llama/Llama-3.1-405B")
    names = [s["rfilename"] for s in policy.weight_files(llama)]
    assert sum(n.endswith(".safetensors") for n in names) == 191 and not any(n.startswith("original/") for n in names)
    # shards 1..190: 4,249,773,704 - (i mod 7) x 1,000,003 (sum of i mod 7 = 568), shard 191: 3,049,881,600;
    # plus config 1,008 + generation 184 + index 113,542 + special tokens 73 + tokenizer 9,085,657 + 55,351
    assert policy.weights_bytes(llama) == 190 * 4_249_773_704 - 568 * 1_000_003 + 3_049_881_600 + 9_255_815


def sib(name: str, size: int | None, lfs: bool = False) -> dict:
    return {"rfilename": name, **({"lfs": {"size": size}} if lfs else {"size": size})}


def test_one_format_counted_and_shards_preferred_to_strays():
    both = {"siblings": [sib("pytorch_model.bin", 700), sib("model.safetensors", 500), sib("config.json", 1)]}
    assert policy.weights_bytes(both) == 501
    bins = {"siblings": [sib("pytorch_model-00001-of-00002.bin", 300), sib("pytorch_model-00002-of-00002.bin", 200),
                         sib("training_args.bin", 7), sib("tf_model.h5", 999), sib("vocab.txt", 2)]}
    assert policy.weights_bytes(bins) == 502                  # the shards, not training_args.bin nor the .h5
    mistral = {"siblings": [sib("consolidated.safetensors", 900), sib("model-00001-of-00002.safetensors", 400),
                            sib("model-00002-of-00002.safetensors", 500), sib("params.json", 3)]}
    assert policy.weights_bytes(mistral) == 903               # the shards transformers reads, not both copies
    gguf = {"siblings": [sib("m.Q4.gguf", 80, lfs=True), sib("m.Q8.gguf", 140, lfs=True), sib("README.md", 5)]}
    assert policy.weights_bytes(gguf) == 220                  # size from lfs; no standard name: every .gguf
    nested = {"siblings": [sib("onnx/model.onnx", 60), sib("config.json", 1)]}
    assert policy.weights_bytes(nested) == 61                 # no top-level weights: sub-folders count


def test_a_missing_size_is_refused():
    with pytest.raises(policy.MetadataUnavailable, match="blobs=true"):
        policy.weights_bytes({"siblings": [{"rfilename": "model.safetensors"}]})


def test_memory_is_float32_parameters_times_1_2():
    assert policy.memory_bytes(meta("gpt2")) == int(137_022_720 * 4 * 1.2) == 657_709_056
    llama = meta("meta-llama/Llama-3.1-405B")        # bfloat16 on disk, twice that in float32
    assert policy.memory_bytes(llama) == int(405_853_388_800 * 4 * 1.2)
    no_count = {"siblings": [sib("model.safetensors", 1_000_000)]}
    assert policy.memory_bytes(no_count) == 1_200_000


@pytest.mark.parametrize("value,mb", [(None, 2048), ("500", 500), (" 10000 ", 10000), ("0", 0), ("big", 2048),
                                      ("-5", 2048)])
def test_max_model_mb(value, mb):
    assert policy.max_model_mb({} if value is None else {"EXPLORER_MAX_MODEL_MB": value}) == mb


def test_check_download_returns_megabytes_rounded_up():
    assert policy.check_download("gpt2", meta("gpt2"), {}) == 551          # 550.96 MB
    assert policy.check_download("roberta-base", meta("roberta-base"), {}, 10**12, 10**12) == 503


def test_too_large_says_size_cap_and_variable():
    with pytest.raises(policy.ModelTooLarge) as err:
        policy.check_download("roberta-base", meta("roberta-base"), {"EXPLORER_MAX_MODEL_MB": "500"})
    assert str(err.value) == ("roberta-base is a 502 MB download; this server loads hub models up to 500 MB "
                              "(the deployer sets EXPLORER_MAX_MODEL_MB).")
    with pytest.raises(policy.ModelTooLarge, match=r"a 809,948 MB download.* up to 2,048 MB"):
        policy.check_download("meta-llama/Llama-3.1-405B", meta("meta-llama/Llama-3.1-405B"), {})
    assert policy.check_download("roberta-base", meta("roberta-base"), {"EXPLORER_MAX_MODEL_MB": "503"}) == 503


def test_disk_needs_download_plus_ten_percent():
    need = int(550_959_861 * 1.1)                                           # 606,055,847
    with pytest.raises(policy.NotEnoughDisk) as err:
        policy.check_download("gpt2", meta("gpt2"), {}, free_disk_bytes=need - 1)
    assert "needs 606 MB of disk (its 551 MB download + 10 %), but only 606 MB is free" in str(err.value)
    assert "EXPLORER_MAX_MODEL_MB=2048" in str(err.value)
    assert policy.check_download("gpt2", meta("gpt2"), {}, free_disk_bytes=need) == 551


def test_memory_needs_float32_weights_times_1_2():
    with pytest.raises(policy.NotEnoughMemory) as err:
        policy.check_download("gpt2", meta("gpt2"), {}, free_disk_bytes=10**12, free_memory_bytes=650_000_000)
    text = str(err.value)
    assert "needs about 658 MB of memory (float32 weights x 1.2), but only 650 MB" in text
    assert "EXPLORER_MAX_MODEL_MB=2048" in text
    assert policy.check_download("gpt2", meta("gpt2"), {}, 10**12, 657_709_056) == 551
    for cls in (policy.ModelTooLarge, policy.NotEnoughDisk, policy.NotEnoughMemory, local_folders.LocalRefused,
                policy.MetadataUnavailable):
        assert issubclass(cls, policy.PolicyRefusal) and issubclass(cls, RuntimeError)


# ---------------------------------------------------------------------------------------------- fetch, machine

def test_fetch_metadata_offline_or_bad_id_never_asks():
    with pytest.raises(policy.MetadataUnavailable, match="offline"):
        policy.fetch_metadata("gpt2", env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    for bad in ("../etc/passwd", "a/b/c", "x?y=1", ""):
        with pytest.raises(policy.MetadataUnavailable, match="not a hub id"):
            policy.fetch_metadata(bad, env={"HF_ENDPOINT": "http://127.0.0.1:9"})


@pytest.fixture
def fake_hub():
    """A real HTTP server on 127.0.0.1 answering /api/models/<id>?blobs=true from the fixtures; records paths."""
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            name = self.path.split("?")[0].removeprefix("/api/models/")
            file = HUB / (name.replace("/", "__") + ".json")
            if "blobs=true" not in self.path or not file.is_file():
                self.send_error(404)
                return
            body = file.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", asked
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_fetch_metadata_from_a_local_endpoint(fake_hub):
    endpoint, asked = fake_hub
    data = policy.fetch_metadata("meta-llama/Llama-3.1-405B", timeout=5, env={"HF_ENDPOINT": endpoint + "/"})
    assert data == meta("meta-llama/Llama-3.1-405B")
    assert asked == ["/api/models/meta-llama/Llama-3.1-405B?blobs=true"]
    with pytest.raises(policy.MetadataUnavailable, match=r"no model nobody/none .*HTTP 404"):
        policy.fetch_metadata("nobody/none", timeout=5, env={"HF_ENDPOINT": endpoint})


def test_free_disk_and_memory_are_sane(tmp_path):
    usage = shutil.disk_usage(tmp_path)
    free = policy.free_disk(tmp_path / "not" / "yet" / "made")     # asks the nearest existing parent
    assert 0 < free <= usage.total and abs(free - usage.free) < 1 << 30
    memory = policy.free_memory()
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert 16 << 20 < memory <= total
    assert policy.hub_cache_dir({"HF_HUB_CACHE": "/c"}) == Path("/c")
    assert policy.hub_cache_dir({"HF_HOME": "/h"}) == Path("/h/hub")
