import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach the hub
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# tests load tiny random models from temporary folders, which a real server refuses unless the deployer allows
# local folders (explorer.serving.policy); tests of the default unset this with monkeypatch or a Server env
os.environ.setdefault("EXPLORER_ALLOW_LOCAL", "1")

from chromium import CHROMIUM, CHROMIUM_ARGS, Server, need_chromium, preload_servers  # noqa: E402
from redis_server import RedisServer  # noqa: E402
from tiny import build  # noqa: E402

from bench.server_side import apptest_as_a_server  # noqa: E402

preload_servers()   # test servers fork from one parent with torch & co. imported (tests/preloaded.py)
apptest_as_a_server()   # AppTest scans packages and compiles pages once a process, as a server does

TIERS = ("unit", "integration", "app", "browser")

HEAVY = ("load", "cluster")   # minutes of CPU each: CI runs them (CI=true), locally HEAVY_TESTS=1 does


def pytest_collection_modifyitems(items):
    """Each test carries its folder's tier as a marker (``-m unit``, ``-m "not browser"``…); the heavy load and
    cluster tests run in CI or with HEAVY_TESTS=1, and say so when skipped."""
    heavy = bool(os.environ.get("CI") or os.environ.get("HEAVY_TESTS"))
    for item in items:
        tier = Path(str(item.fspath)).parent.name
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))
        if not heavy and any(item.get_closest_marker(m) for m in HEAVY):
            item.add_marker(pytest.mark.skip(reason="heavy load/cluster test: runs in CI, or set HEAVY_TESTS=1"))


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory):
    """Folder of a tiny random model of a family, built once per session."""
    made = {}

    def get(family: str) -> Path:
        if family not in made:
            made[family] = build(family, tmp_path_factory.mktemp(family))
        return made[family]
    return get


@pytest.fixture(scope="session")
def tiny_loaded(tiny_folder):
    from explorer.model.loading import load_model
    made = {}

    def get(family: str):
        if family not in made:
            made[family] = load_model(str(tiny_folder(family)), device="cpu")
        return made[family]
    return get


@pytest.fixture(scope="session")
def tiny_corpus_pass(tiny_loaded):
    """The head-geometry corpus pass of a family's tiny model over some sentences, run once per session each:
    ``tiny_corpus_pass("bert", SENTENCES)``."""
    from explorer.geometry.corpus_pass import run_pass
    made = {}

    def get(family: str, sentences: tuple[str, ...]):
        if (family, sentences) not in made:
            made[family, sentences] = run_pass(tiny_loaded(family), sentences)
        return made[family, sentences]
    return get


@pytest.fixture(scope="session")
def encoder():
    from explorer.model.loading import load_model
    from explorer.model.registry import EMBEDDED_ENCODER
    return load_model(EMBEDDED_ENCODER, device="cpu")


@pytest.fixture(scope="session")
def decoder():
    from explorer.model.loading import load_model
    from explorer.model.registry import EMBEDDED_DECODER
    return load_model(EMBEDDED_DECODER, device="cpu")


# ---------------------------------------------------------------------------------------------- browser tests
# One `streamlit run app.py` server and one headless Chromium per test module that asks for them. A module that
# needs a server of another kind (a fresh one, other settings, an idle one to measure) starts a ``Server`` itself.

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A test module's server, with a classroom file of its own (``server.db``): the live-class tests make each a
    new room in it (``live_class.new_room``) and drive it with ``live_class.on_the_server``. One a module, not one a
    process: a server kept for the whole run carries what one module left running (a lesson's next step being
    prepared, a training run, a map's job) into the next modules' time; with it the suite took 16.3 min, 12.9
    before."""
    db = str(tmp_path_factory.mktemp("shared-classroom") / "classroom.sqlite3")
    srv = Server(env={"EXPLORER_CLASSROOM_DB": db, "EXPLORER_CLASSROOM_URL": ""}, log_prefix="shared")
    srv.db = db
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    need_chromium()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# ---------------------------------------------------------------------------------------------- redis-server

@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    srv = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield srv
    srv.stop()


@pytest.fixture(params=["sqlite", "redis"])
def classroom_env(request, tmp_path):
    """Environment that points ``explorer.classroom.open_store`` at a fresh, empty backend: SQLite, then Redis."""
    if request.param == "sqlite":
        return {"EXPLORER_CLASSROOM_DB": str(tmp_path / "classroom.sqlite3")}
    import redis

    srv = request.getfixturevalue("redis_server")
    redis.Redis.from_url(srv.url).flushdb()
    return {"EXPLORER_CLASSROOM_URL": srv.url}


@pytest.fixture
def class_room(classroom_env):
    """A room on ``classroom_env``'s fresh backend with one student a nick: ``class_room(["Ann", "Bob"])`` joins
    ``s0`` as Ann and ``s1`` as Bob; (store, code, teacher key)."""
    from explorer.classroom import open_store

    def make(nicks) -> tuple:
        store = open_store(classroom_env)
        code, key = store.create_room()
        for i, nick in enumerate(nicks):
            store.join(code, f"s{i}", nick)
        return store, code, key
    return make


@pytest.fixture
def make_redis_server(tmp_path):
    """Factory of private servers (stopped at the end of the test), for tests that restart one."""
    made = []

    def make() -> RedisServer:
        made.append(RedisServer(tmp_path / f"redis{len(made)}"))
        made[-1].folder.mkdir()
        return made[-1].start()
    yield make
    for srv in made:
        srv.stop()
