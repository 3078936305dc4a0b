"""The one cache layer (explorer/serving/regions.py): every region listed and sized there from one setting, every
shared store handed out there, and a guard, read with ``ast``, that fails on a byte store (``ByteLRU``) built
anywhere else or on a new count-bounded memo (``lru_cache``, ``functools.cache``, ``st.cache_data`` …) outside the
short list of lookup tables below; shown to fail on small bad trees, as tests/unit/test_layers.py does."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from explorer.serving import regions
from explorer.serving.cache import ByteLRU

ROOT = Path(__file__).resolve().parents[2]
HOME = "explorer/serving/regions.py"
MEMO_NAMES = {"lru_cache", "cache"}   # and st.cache_data / st.cache_resource, checked on their own (ST_CACHE_HOME)
ST_CACHES = {"cache_data", "cache_resource"}
# Count-bounded memos that are not a server's shared results: what each keeps, and why it needs no byte budget.
LOOKUP_TABLES = {
    "explorer/lessons/folders.py": "one parsed lesson file per path and modification time (a few kB each, 256 at most)",
    "explorer/model/embedded.py": "the embedded models' folder, found once",
    "explorer/plots/offline_html.py": "the offline viewer's two script files, read once",
    "explorer/ui/views/flip.py": "one page run's figure builder (lives for that run only)",
    "explorer/ui/widgets.py": "one chart's figure and text within a run; 64 small link strings",
    "explorer/plots/thumbnails.py": "the thumbnails' palette per masked colour (a few hundred bytes, 8 at most)",
    "explorer/ui/live/following.py": "256 page paths (strings), each resolved once",
    "explorer/ui/live/membership.py": "st.cache_resource: the one classroom store object per server (ST_CACHE_HOME)",
    "explorer/web/preload.py": "the preload link header, built once",
    "explorer/web/icons.py": "the icon font's cut, built once",
    "explorer/serving/process.py": "the process settings, read once",
    "explorer/words/i18n.py": "one gettext catalogue per language",
    "explorer/words/terms.py": "the glossary's term table, built once",
    "explorer/words/numbers.py": "eight number formatters",
    "explorer/words/glossary.py": "the glossary per language",
}


def _called_name(node: ast.AST) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


ST_CACHE_HOME = "explorer/ui/live/membership.py"   # the one module that may use st.cache_* (one object per server)


def stray_stores(root: Path) -> list[str]:
    """Every store built outside regions.py in the tree at ``root`` (its explorer/, pages/ and app.py): a
    ``ByteLRU(...)`` anywhere else, a memo decorator in a module not in ``LOOKUP_TABLES``, or any ``st.cache_data``
    / ``st.cache_resource`` outside ``ST_CACHE_HOME``; one sentence each."""
    problems = []
    files = [*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), *root.glob("app.py")]
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        if rel == HOME:
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, (ast.Attribute, ast.Name)) and _called_name(node) in ST_CACHES and rel != ST_CACHE_HOME:
                problems.append(f"{rel}:{node.lineno} uses st.{_called_name(node)}: take a region's store or "
                                f"{HOME}'s remembered (only {ST_CACHE_HOME} may)")
                continue
            if isinstance(node, ast.Call) and _called_name(node) == "ByteLRU":
                problems.append(f"{rel}:{node.lineno} builds a ByteLRU: take a region's store from {HOME}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):   # a bare @cache, @st.cache_data
                bare = [d for d in node.decorator_list if not isinstance(d, ast.Call)]
                memos = [d for d in bare if _called_name(d) in MEMO_NAMES]
            else:   # @lru_cache(maxsize=...), functools.cache(lambda: ...)
                memos = [node] if isinstance(node, ast.Call) and _called_name(node) in MEMO_NAMES else []
            if memos and rel not in LOOKUP_TABLES:
                problems.append(f"{rel}:{node.lineno} keeps its own memo: use {HOME}'s remembered or a region's store")
    return problems


KEEPERS_HOME = "explorer/jobs/"   # Jobs and Trainer are built in the jobs package only (keepers.py's table)
# module-level dicts that start empty and are filled as the server runs, kept as they are, and why each is no store
# of results (the two homes' own tables are listed too)
KEPT_DICTS = {
    "explorer/jobs/keepers.py": "_jobs: the table's one Jobs per row (a dozen, built on first use)",
    "explorer/serving/regions.py": "_stores, _memos: the regions' own stores",
    "explorer/model/embedded.py": "_verified: a weight file's sha256 per (path, size, mtime): one per embedded file",
    "explorer/model/family_table.py": "_SAID: a refusal's template per family: bounded by the family table",
    "explorer/ui/live/push.py": "_shown: what each session's watched slot showed last (dropped when it leaves)",
    "explorer/sitemap/table.py": "NONE: a page without parameters (an empty Mapping, never filled)",
    "pages/lab_worked_example.py": "mats: one page run's matrices (a page script's module runs once a rerun)",
}
FILLED = {"dict", "OrderedDict", "defaultdict"}   # a module-level dict built empty (weak dictionaries keep nothing)


def _filled_later(value: ast.AST | None) -> bool:
    """``{}``, ``dict()``, ``OrderedDict()``, ``defaultdict(list)``: a dict that starts empty, to be filled."""
    if isinstance(value, ast.Dict):
        return not value.keys
    return (isinstance(value, ast.Call) and _called_name(value) in FILLED and not value.keywords
            and len(value.args) <= (1 if _called_name(value) == "defaultdict" else 0))


def stray_keepers(root: Path) -> list[str]:
    """Every ``Jobs(...)`` or ``Trainer(...)`` built outside explorer/jobs/, and every module-level dict built empty
    (``{}``, ``dict()``, ``OrderedDict()``, ``defaultdict(...)``: a hand-made cache) outside ``KEPT_DICTS``, in the
    tree at ``root`` (explorer/, pages/, app.py)."""
    problems = []
    files = [*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), *root.glob("app.py")]
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(), rel)
        if not rel.startswith(KEEPERS_HOME):
            problems += [f"{rel}:{node.lineno} builds its own {_called_name(node)}: take one from "
                         f"explorer/jobs/keepers.py's table" for node in ast.walk(tree)
                         if isinstance(node, ast.Call) and _called_name(node) in ("Jobs", "Trainer")]
        if rel not in KEPT_DICTS:
            problems += [f"{rel}:{node.lineno} keeps a module-level dict filled as it runs: use a region's store "
                         f"({HOME}: store, memo or remembered)"
                         for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                         and _filled_later(node.value)]
    return problems


def test_every_keeper_comes_from_the_jobs_table():
    assert stray_keepers(ROOT) == []


@pytest.mark.parametrize("source, found", [
    ("from explorer.jobs.worker import Jobs\nPASSES = Jobs(4)\n", "builds its own Jobs"),
    ("from explorer.jobs import training\nT = training.Trainer(keep=2)\n", "builds its own Trainer"),
    ("from collections import OrderedDict\n_memo: OrderedDict = OrderedDict()\n", "module-level dict"),
    ("_sizes: dict[tuple[str, str], float] = {}\n", "module-level dict"),
    ("_seen = dict()\n", "module-level dict"),
    ("import collections\n_by = collections.defaultdict(list)\n", "module-level dict"),
])
def test_the_keeper_guard_fails_on_a_new_keeper(tmp_path, source, found):
    (tmp_path / "explorer" / "ui").mkdir(parents=True)
    (tmp_path / "explorer" / "ui" / "page.py").write_text(source)
    assert [p for p in stray_keepers(tmp_path) if found in p]


def test_every_store_in_the_package_comes_from_the_regions_module():
    assert stray_stores(ROOT) == []


def test_the_named_lookup_tables_still_exist():
    for rel in [*LOOKUP_TABLES, *KEPT_DICTS, ST_CACHE_HOME]:
        assert (ROOT / rel).is_file(), rel


def test_a_dict_with_content_or_a_weak_one_is_no_keeper(tmp_path):
    (tmp_path / "explorer" / "ui").mkdir(parents=True)
    (tmp_path / "explorer" / "ui" / "page.py").write_text(
        "import weakref\nNAMES = {'a': 1}\nBY_MODEL = weakref.WeakKeyDictionary()\n")
    assert stray_keepers(tmp_path) == []


@pytest.mark.parametrize("source", [
    "from explorer.serving.cache import ByteLRU\nSTORE = ByteLRU(32 * 2**20)\n",
    "from explorer.serving import cache\nSTORE = cache.ByteLRU(1 << 20, sizeof=len)\n",
    "import functools\n\n@functools.lru_cache(maxsize=4096)\ndef f(x):\n    return x\n",
    "import streamlit as st\n\n@st.cache_data\ndef f(x):\n    return x\n",
    "import streamlit as st\n\n@st.cache_resource(max_entries=2)\ndef f(x):\n    return x\n",
    "import streamlit as st\n\nf = st.cache_data(lambda x: x)\n",
    "from streamlit import cache_resource\n\n@cache_resource\ndef f(x):\n    return x\n",
])
def test_the_guard_fails_on_a_store_built_outside_the_regions_module(tmp_path, source):
    (tmp_path / "explorer" / "ui").mkdir(parents=True)
    (tmp_path / "explorer" / "ui" / "new_page_cache.py").write_text(source)
    (tmp_path / "explorer" / "serving").mkdir()
    (tmp_path / HOME).write_text("from explorer.serving.cache import ByteLRU\nS = ByteLRU(1)\n")   # allowed here
    problems = stray_stores(tmp_path)
    assert len(problems) == 1 and problems[0].startswith("explorer/ui/new_page_cache.py:")


def test_every_region_is_listed_with_one_setting_and_todays_defaults():
    settings = {name: (r.setting, r.default_mb) for name, r in regions.REGIONS.items()}
    assert settings == {"results": ("EXPLORER_RESULT_CACHE_MB", 384), "values": ("EXPLORER_VALUE_CACHE_MB", 128),
                        "figures": ("EXPLORER_FIGURE_CACHE_MB", 32), "drawn": ("EXPLORER_RENDER_CACHE_MB", 64),
                        "static": ("EXPLORER_STATIC_CACHE_MB", 48), "models": ("EXPLORER_MODEL_CACHE_MB", 8192),
                        "work": ("EXPLORER_WORK_CACHE_MB", 512), "memos": (None, 0)}
    assert regions.budget_bytes("results", {"EXPLORER_RESULT_CACHE_MB": "10"}) == 10 * 2**20
    assert regions.budget_bytes("static", {}) == 48 * 2**20


def test_each_site_holds_its_regions_one_store():
    from explorer.plots import remember
    from explorer.ui import cached, drawn_once
    from explorer.ui.views import value_roles
    from explorer.web import compress

    assert cached.result_cache() is regions.store("results")
    assert value_roles._weighted is regions.store("values")
    assert remember.BY_VIEW is regions.store("figures")
    assert drawn_once.STORE is regions.store("drawn")
    assert compress.STORE is regions.store("static")
    with pytest.raises(ValueError):
        regions.store("memos")   # one store per function: regions.memo


def test_remembered_counts_its_store_in_its_region_and_the_report_lists_every_region():
    calls = []
    before = regions.report()["memos"]

    @regions.remembered(1 << 20)
    def doubled(x: np.ndarray) -> np.ndarray:
        calls.append(1)
        return x * 2

    assert isinstance(doubled.memo, ByteLRU)
    doubled(np.arange(4.0))
    doubled(np.arange(4.0))
    after = regions.report()
    assert set(after) == set(regions.REGIONS)
    assert len(calls) == 1
    memos = after["memos"]
    assert memos["stores"] == before["stores"] + 1 and memos["max_bytes"] == before["max_bytes"] + (1 << 20)
    assert memos["hits"] == before["hits"] + 1 and memos["misses"] == before["misses"] + 1
    assert memos["bytes"] == before["bytes"] + 32   # four float64s
    for row in after.values():
        assert {"entries", "bytes", "max_bytes", "hits", "misses", "stores", "setting"} <= set(row)


def test_the_stats_endpoint_reports_every_region():
    import asyncio
    import json

    import app

    got = json.loads(asyncio.run(app.stats(None)).body)
    assert set(got["regions"]) == set(regions.REGIONS)
    assert got["regions"]["drawn"]["max_bytes"] == got["render_store"]["max_bytes"] == regions.budget_bytes("drawn")
    assert got["regions"]["results"]["max_bytes"] == got["results"]["max_bytes"]
