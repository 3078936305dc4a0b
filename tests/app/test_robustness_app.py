"""Bad input, every row on every page that takes text or URL parameters (the table in docs/robustness.md).

Each case: open the page (AppTest), give it the bad input, check what the user sees (no traceback; the expected
note, warning or chart), then give it good input again and check that the page still draws its charts.
Faults (CUDA out of memory, a weight file failing its sha256, no network for a hub id) are simulated with
monkeypatch; the models stay the embedded ones.
"""
from __future__ import annotations

import dataclasses
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from pagetest import unfolded
from streamlit.testing.v1 import AppTest

from explorer.jobs.worker import ModelWorker
from explorer.model import loading, registry
from explorer.ui import cached

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240
GOOD = "The cat sat on the mat because it was tired."
LONG = ("The quick brown fox jumps over the lazy dog near the river bank. " * 160)[:10_000]


# ---------------------------------------------------------------------------------------------- the rows

@dataclass(frozen=True)
class Row:
    id: str
    text: str
    sees: str = ""                    # regex a warning/info must match ("" = nothing required)
    fragments: tuple[str, ...] = ()   # raw pieces that must never reach markdown unescaped, nor plotly as tags


SCRIPT = "<script>window.__xss=1;alert(1)</script> it was"
IMG = "<img src=x onerror=\"window.__xss=1;alert(1)\"> the cat"
MARKDOWN = "**bold** _it_ [link](javascript:alert(1)) $x^2$ $$\\frac{1}{2}$$ :red[hi] :smile: # head `code` &lt;b&gt;"

TEXT_ROWS = [
    Row("empty", "", sees=r"(?i)empty|type (a|at least)"),
    Row("whitespace", "  \n\t \u3000 ", sees=r"(?i)empty|type (a|at least)"),
    Row("one-token", "cat"),
    Row("10k-chars", LONG),
    Row("emoji", "I love 🍕 and 🐈‍⬛ 👩🏽‍💻 🇺🇦!"),
    Row("cjk", "我爱北京天安门。東京は大きい。서울은 크다."),
    Row("rtl", "مرحبا بالعالم שלום עולם"),
    Row("combining", "e\u0301te\u0301 Z\u0351\u0300a\u0352l\u0353g\u0354o text"),
    Row("zero-width", "zero\u200bwidth\u200cnon\u200djoin\ufeffhere \u2060 done"),
    Row("control-nul", "nul\x00 bell\x07 esc\x1b[31m tab\t cr\r del\x7f end"),
    Row("script", SCRIPT, fragments=("<script", "</script", "window.__xss=1;")),
    Row("img-onerror", IMG, fragments=("<img", "onerror=")),
    Row("markdown-latex", MARKDOWN, fragments=("**bold**", "](javascript", "$x^2$", "$$", ":red[", ":smile:",
                                                "`code`", "&lt;b")),
]


# ---------------------------------------------------------------------------------------------- the pages

@dataclass(frozen=True)
class TextPage:
    id: str
    file: str
    box: str                  # text_area key, or text_input label
    area: bool = False        # st.text_area (deep-linked) or st.text_input
    max_chars: int | None = None
    reads_all: bool = False   # runs a model on the whole text (so 10k characters give the "cut" note)


TEXT_PAGES = [
    TextPage("heatmaps", "pages/heatmaps.py", "text", area=True, reads_all=True),
    TextPage("compare", "pages/compare.py", "text", area=True, reads_all=True),
    TextPage("flip-A", "pages/flip.py", "text", area=True, reads_all=True),
    TextPage("flip-B", "pages/flip.py", "text_b", area=True, reads_all=True),
    TextPage("heads-do-A", "pages/heads_do.py", "text", area=True, reads_all=True),
    TextPage("heads-do-B", "pages/heads_do.py", "text_b", area=True, reads_all=True),
    TextPage("masks", "pages/lab_masks.py", "Sentence", max_chars=300),
    TextPage("masks-padding", "pages/lab_masks.py", "Short sentence", max_chars=200),
    TextPage("permutation", "pages/lab_permutation.py", "Sentence"),
    TextPage("softmax", "pages/lab_softmax.py", "Sentence", reads_all=True),
    TextPage("positions", "pages/lab_positions.py", "Text", max_chars=300),
    TextPage("why-attention", "pages/lab_why_attention.py", "Sentence"),
]
LINKED = ["pages/heatmaps.py", "pages/compare.py", "pages/flip.py"]   # pages whose state lives in the URL


# ---------------------------------------------------------------------------------------------- helpers

OPEN_WITH = {"pages/lab_positions.py": {"pos_tab": "Real heads"}}   # the part of a page that reads a model's text


def open_page(file: str, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / file), default_timeout=TIMEOUT)
    for key, value in {**OPEN_WITH.get(file, {}), **params}.items():
        at.query_params[key] = str(value)
    return at.run()


def box(at: AppTest, page: TextPage):
    return at.text_area(key=page.box) if page.area else next(t for t in at.text_input if t.label == page.box)


def seen(markdown: str) -> str:
    """What the reader sees of a markdown body written with ui.literal: the backslash escapes removed."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def messages(at: AppTest) -> list[str]:
    return [seen(str(e.value)) for e in [*at.warning, *at.info, *at.error]]


def markdown_bodies(at: AppTest) -> list[str]:
    """Every string Streamlit renders as markdown (so where typed text must arrive escaped)."""
    kinds = ["markdown", "caption", "info", "warning", "success", "error", "title", "header", "subheader", "toast"]
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


def chart_specs(at: AppTest) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value[:2000] for e in at.exception]


def shows(at: AppTest, pattern: str) -> None:
    assert any(re.search(pattern, m) for m in messages(at)), (pattern, messages(at))


def literal_everywhere(at: AppTest, fragments: tuple[str, ...]) -> None:
    """Typed text reaches markdown escaped and plotly as entities, never as live markup."""
    from explorer.ui.text import literal
    for body in markdown_bodies(at):
        for fragment in fragments:
            assert fragment not in body.replace(literal(fragment), ""), (fragment, body[:300])
    for spec in chart_specs(at):
        for tag in ("<script", "<img", "<b>bold", "&lt;b"):
            assert tag not in spec, (tag, spec[spec.index(tag) - 80: spec.index(tag) + 80])


def recover(at: AppTest, page: TextPage) -> AppTest:
    """What a student does next: type a good sentence (the flip page: pick the worked pair)."""
    if page.file == "pages/flip.py":
        next(b for b in at.button if b.label.startswith("Use the pair")).click().run()
    elif page.file == "pages/heads_do.py":   # a sentence that has the pair's candidates
        box(at, page).set_value(GOOD.replace("cat", "animal").replace("mat", "street")).run()
    else:
        box(at, page).set_value(GOOD).run()
    return at


def usable(at: AppTest) -> None:
    no_exception(at)
    assert at.get("plotly_chart"), messages(at)
    assert not at.warning, [w.value for w in at.warning]


# ---------------------------------------------------------------------------------------------- typed text

LINKED_TEXT = [p for p in TEXT_PAGES if p.area]        # the model comes from the URL: a tiny one will do
LAB_TEXT = [p for p in TEXT_PAGES if not p.area]         # labs load an embedded model themselves
REAL_ROWS = [r for r in TEXT_ROWS if r.id in {"empty", "10k-chars", "control-nul", "script", "markdown-latex"}]


@pytest.fixture(scope="module")
def tiny_model(tiny_folder):
    """A tiny random BERT, loaded once into the shared worker (a link to a loaded model opens without asking)."""
    name = str(tiny_folder("bert"))
    cached.WORKER.get(name)
    return name


def check_typed_text(at: AppTest, page: TextPage, row: Row) -> None:
    no_exception(at)
    box(at, page).set_value(row.text).run()
    no_exception(at)
    if page.max_chars:
        assert len(box(at, page).value or "") <= page.max_chars
    if row.sees and page.id != "masks-padding":   # an empty short sentence is a valid padding example
        shows(at, row.sees)
    elif row.id == "10k-chars" and page.reads_all:
        shows(at, r"The text needs \d+ tokens; this model reads at most \d+, so only the first part is shown")
    else:  # something to look at: a chart, or a note saying what the page needs
        assert at.get("plotly_chart") or messages(at)
    literal_everywhere(at, row.fragments)
    usable(recover(at, page))


@pytest.mark.parametrize("page", LINKED_TEXT, ids=[p.id for p in LINKED_TEXT])
@pytest.mark.parametrize("row", TEXT_ROWS, ids=[r.id for r in TEXT_ROWS])
def test_typed_text(page: TextPage, row: Row, tiny_model):
    """Every bad-text row on every deep-linked page, on a tiny random model (the pages' code is the same)."""
    check_typed_text(open_page(page.file, model=tiny_model), page, row)


@pytest.mark.parametrize("page", LAB_TEXT, ids=[p.id for p in LAB_TEXT])
@pytest.mark.parametrize("row", REAL_ROWS, ids=[r.id for r in REAL_ROWS])
def test_typed_text_on_real_models(page: TextPage, row: Row):
    """The labs on the embedded models: the rows that reach a model's limits or the page's markdown (what a lab's
    question folds shown without predicting, for the rest of the session)."""
    check_typed_text(unfolded(open_page(page.file)), page, row)


def test_typed_text_on_a_real_model_page():
    """One deep-linked page on the embedded encoder too, with the hostile rows."""
    for row in REAL_ROWS:
        check_typed_text(open_page("pages/heatmaps.py"), TEXT_PAGES[0], row)


def test_injected_tokens_are_literal_tick_labels():
    """The heatmap's tick labels carry the typed characters as entities (plotly shows them as text)."""
    at = open_page("pages/heatmaps.py", text=SCRIPT)
    no_exception(at)
    ticks = json.loads(chart_specs(at)[0])["layout"]["xaxis"]["ticktext"]
    assert "&lt;" in ticks and "script" in ticks and "&gt;" in ticks and "<" not in ticks


def test_literal_escapes_every_markdown_trigger():
    from explorer.ui.text import literal
    assert literal(MARKDOWN).replace("\\", "") == MARKDOWN.replace("\\", "")   # nothing lost but backslashes
    assert literal("a*b") == "a\\*b" and literal("$x$") == "\\$x\\$" and literal(":red[x]") == "\\:red\\[x\\]"
    assert literal("<img>") == "\\<img\\>" and literal("&lt;") == "\\&lt\\;" and literal("a\\b") == "a\\\\b"
    assert literal("nul\x00esc\x1bdel\x7f") == "nul␀esc␛del␡" and literal("é 中 🍕\n") == "é 中 🍕\n"


# ---------------------------------------------------------------------------------------------- URL parameters

URL_ROWS = {
    "layer-999": (dict(layer=999), r"Layer 999 is out of range"),
    "head-minus-1": (dict(head=-1), r"Head -1 is out of range"),
    "layer-garbage": (dict(layer="<img src=x onerror=alert(1)>"), r"Layer .* is not a number"),
    "text-100k": (dict(text="lorem ipsum dolor " * 5600), r"cut to 20,000"),
    "query-garbage": (dict(query="**x** $y$ :red[z]"), r"(?i)query"),
    "heads-garbage": (dict(heads="L99H99,<b>,-1"), ""),
    "cands-garbage": (dict(cands="<script>,$$,**"), ""),
}


@pytest.mark.parametrize("file", LINKED, ids=[Path(f).stem for f in LINKED])
@pytest.mark.parametrize("row", list(URL_ROWS), ids=list(URL_ROWS))
def test_url_parameters_out_of_range_or_garbage(file: str, row: str):
    params, note = URL_ROWS[row]
    at = open_page(file, **params)
    no_exception(at)
    if note and (file == "pages/heatmaps.py" or not row.startswith(("layer", "head"))) and row != "query-garbage":
        shows(at, note)
    elif note and row == "query-garbage" and file != "pages/compare.py":
        shows(at, note)
    assert at.get("plotly_chart") or messages(at)
    literal_everywhere(at, ("**x**", "$y$", ":red[", "<img", "<script", "<b>", "$$"))
    if row == "text-100k":
        shows(at, r"only the first part is shown")


@pytest.mark.parametrize("file", LINKED, ids=[Path(f).stem for f in LINKED])
@pytest.mark.parametrize("model", ["../../x", "/etc/passwd", "<script>alert(1)</script>", "x" * 300,
                                   "nobody-here/no-such-model-xyz"],
                         ids=["dotdot", "abs-path", "script", "300-chars", "unknown-hub-id"])
def test_bad_model_ids(file: str, model: str):
    """A bad or unknown model id: a clear warning naming what works, at once; the embedded models still work.

    A well-formed hub id that nobody has loaded asks first (explorer/ui/linkask.py); the answer "Load it" gets
    the warning. Paths get the local-folder rule's message (tests/conftest.py switches local folders on)."""
    start = time.monotonic()
    at = open_page(file, model=model)
    if model.startswith("nobody"):
        assert any("This link asks for nobody-here/no-such-model-xyz from the hub. Its size is unknown: the hub "
                   "cannot be reached" in seen(m.value) for m in at.markdown)
        assert not at.warning and at.get("plotly_chart")            # the embedded encoder meanwhile
        at.button(key="model_ask_load").click().run()
    elapsed = time.monotonic() - start
    no_exception(at)
    shows(at, r"is not available: .*Embedded models that always work")
    if model.startswith(("/", "..")):
        shows(at, r"There is no model folder")
    if model.startswith("nobody"):
        shows(at, r"no network connection to the Hugging Face hub")
        print(f"unknown hub id offline: message after {elapsed:.2f} s (AppTest, includes page start)")
    literal_everywhere(at, ("<script",))
    assert not at.get("plotly_chart")
    at.selectbox(key="model").set_value(registry.EMBEDDED_ENCODER).run()
    if file == "pages/flip.py":
        next(b for b in at.button if b.label.startswith("Use the pair")).click().run()
    usable(at)


# ---------------------------------------------------------------------------------------------- faults

ATTENTION_PAGES = ["pages/heatmaps.py", "pages/compare.py", "pages/flip.py", "pages/lab_softmax.py",
                   "pages/lab_positions.py", "pages/lab_masks.py"]


@pytest.mark.parametrize("file", ATTENTION_PAGES, ids=[Path(f).stem for f in ATTENTION_PAGES])
def test_cuda_out_of_memory_falls_back_to_cpu_and_says_so(file, monkeypatch):
    real = cached.extract
    calls = {"oom": 0}

    def extract_once_oom(loaded, text, target=None):
        if not calls["oom"]:
            calls["oom"] += 1
            calls["loaded"] = loaded
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(loaded, text, target)

    monkeypatch.setattr(cached, "extract", extract_once_oom)
    cached.result_cache().clear()   # force a fresh forward pass
    try:
        at = open_page(file)
        no_exception(at)
        assert calls["oom"] == 1
        shows(at, r"GPU ran out of memory: this model now runs on the CPU")
        assert calls["loaded"].device == "cpu" and next(calls["loaded"].model.parameters()).device.type == "cpu"
        usable(at)
    finally:
        loaded = calls.get("loaded")
        if loaded is not None:   # the shared model keeps its notes; leave it as the other tests expect
            loaded.notes[:] = [n for n in loaded.notes if "ran out of memory" not in n]


def test_out_of_memory_while_moving_a_model_to_the_gpu(tiny_folder, monkeypatch):
    """Loading: the move to the GPU runs out of memory, so the model stays on the CPU with a note."""
    real_to = torch.nn.Module.to

    def to(self, *args, **kwargs):
        if any(str(a).startswith("cuda") for a in [*args, *kwargs.values()]):
            raise torch.OutOfMemoryError("CUDA out of memory.")
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", to)
    loaded = loading.load_model(str(tiny_folder("bert")), device="cuda")
    assert loaded.device == "cpu" and any("running on the CPU" in n for n in loaded.notes)


SHA_PAGES = ["pages/heatmaps.py", "pages/compare.py", "pages/flip.py", "pages/lab_masks.py",
             "pages/lab_permutation.py", "pages/lab_softmax.py", "pages/lab_positions.py"]


@pytest.fixture
def corrupted_encoder(monkeypatch):
    """The encoder's published sha256 no longer matches its file; records any attempt to load weights."""
    spec = registry.EMBEDDED[registry.EMBEDDED_ENCODER]
    monkeypatch.setitem(registry.EMBEDDED, registry.EMBEDDED_ENCODER, dataclasses.replace(spec, sha256="0" * 64))
    loads = []
    real = loading._from_folder
    monkeypatch.setattr(loading, "_from_folder", lambda folder, spec, *a, **k: loads.append(spec.name) or
                        real(folder, spec, *a, **k))
    monkeypatch.setattr(cached, "WORKER", ModelWorker())   # no model loaded yet
    cached.result_cache().clear()
    yield loads
    cached.result_cache().clear()


@pytest.mark.parametrize("file", SHA_PAGES, ids=[Path(f).stem for f in SHA_PAGES])
def test_weight_file_failing_its_sha256(file, corrupted_encoder):
    at = open_page(file)
    no_exception(at)
    shows(at, r"fails its sha256 check .*nothing was loaded")
    assert registry.EMBEDDED_ENCODER not in corrupted_encoder


def test_sha256_failure_leaves_the_other_embedded_model_usable(corrupted_encoder):
    at = open_page("pages/heatmaps.py")
    shows(at, r"fails its sha256 check")
    at.selectbox(key="model").set_value(registry.EMBEDDED_DECODER).run()
    usable(at)
    assert corrupted_encoder.count(registry.EMBEDDED_ENCODER) == 0


def test_bad_model_in_a_lab_is_a_warning_not_a_traceback(monkeypatch):
    """Labs call cached.get_model directly: ModelUnavailable there is a warning too."""
    def refuse(spec, progress):
        raise registry.ModelUnavailable(f"Model {spec.name!r} is not available: simulated.")
    monkeypatch.setattr(cached, "WORKER", ModelWorker(refuse))
    at = open_page("pages/lab_permutation.py")
    no_exception(at)
    shows(at, r"simulated")



def test_no_network_answer_is_bounded_even_when_name_lookup_hangs(monkeypatch):
    """Offline without HF_HUB_OFFLINE: a DNS server that never answers must not hold the page (spec: < 2 s)."""
    import socket

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(loading, "_online", None)
    def hang(*args, **kwargs):
        time.sleep(5)
        raise OSError("timed out")
    monkeypatch.setattr(socket, "create_connection", hang)
    start = time.monotonic()
    assert loading.hub_reachable(timeout=0.3) is False
    assert time.monotonic() - start < 1.5
    assert loading.hub_reachable(timeout=0.3) is False   # remembered: no second wait


def test_unknown_hub_id_without_network_says_so(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(loading, "_online", None)
    import socket

    def refuse(*args, **kwargs):
        raise OSError("Network is unreachable")
    monkeypatch.setattr(socket, "create_connection", refuse)
    at = open_page("pages/heatmaps.py", model="nobody-here/no-such-model-xyz")
    at.button(key="model_ask_load").click().run()     # a link asks before loading (explorer/ui/linkask.py)
    no_exception(at)
    shows(at, r"no network connection to the Hugging Face hub")
    at.selectbox(key="model").set_value(registry.EMBEDDED_ENCODER).run()
    usable(at)


def test_first_loads_in_many_sessions_at_once_do_not_race_on_imports():
    """transformers' lazy imports are not thread-safe; on a fresh server the first sessions load at the same
    moment. Run that in a fresh interpreter: eight threads, each one load, only the expected errors."""
    import subprocess
    import sys

    script = """
import threading
from explorer.model import loading, registry
errors, refused = [], []
def load(name):
    try:
        loading.load_model(name, device="cpu")
    except registry.ModelUnavailable:
        refused.append(name)
    except Exception as err:
        errors.append(repr(err))
threads = [threading.Thread(target=load, args=(f"nobody-here/no-such-model-{i}",)) for i in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print("ERRORS", errors, "REFUSED", len(refused))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert "ERRORS [] REFUSED 8" in done.stdout, (done.stdout[-2000:], done.stderr[-2000:])
