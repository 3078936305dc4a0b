"""Security: no raw HTML with user text, literal labels in every figure, no remote code, only safe weight formats
for the embedded models, and the deployer's hub policy (EXPLORER_ALLOW_HUB, EXPLORER_HUB_ALLOWLIST) and local
folder policy (EXPLORER_ALLOW_LOCAL: off by default)."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.model import embedded, loading, registry

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "explorer").rglob("*.py")])
HOSTILE = ["<script>window.__xss=1</script>", "<img src=x onerror=alert(1)>", "<b>bold</b>", "&lt;i&gt;", "<br>",
           "$x^2$", "the", "<a href='javascript:alert(1)'>x</a>"]
RAW_TAGS = ["<script", "<img", "<b>bold", "&lt;i&gt;", "<br>$", "<a href"]


# ---------------------------------------------------------------------------------------------- source scan

def _calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            yield node


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def test_sources_are_scanned():
    names = {p.name for p in SOURCES}
    assert {"app.py", "heatmaps.py", "widgets.py", "loading.py", "cached.py", "registry.py"} <= names


def _the_formula_script(path: Path, call: ast.Call) -> bool:
    """The one script allowed: explorer/ui/chart_text.py's ``st.html(_FOCUSABLE_FORMULAS, …)``, which makes
    formulas wider than their column focusable (keyboard scrolling); a literal string, no value enters it."""
    if not (path.relative_to(ROOT).as_posix() == "explorer/ui/chart_text.py" and _dotted(call.func) == "st.html"
            and len(call.args) == 1 and isinstance(call.args[0], ast.Name)):
        return False
    assigned = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == call.args[0].id for t in n.targets)]
    value = assigned[0].value if len(assigned) == 1 else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _the_frame_rule(path: Path, call: ast.Call) -> bool:
    """The one style element allowed: chart_text.py's ``st.html(frame_rule(key, index))`` (a chart's frame; what
    enters it is checked below)."""
    return (path.relative_to(ROOT).as_posix() == "explorer/ui/chart_text.py" and _dotted(call.func) == "st.html"
            and len(call.args) == 1 and isinstance(call.args[0], ast.Call)
            and _dotted(call.args[0].func) == "frame_rule")


def _the_language_mark(path: Path, call: ast.Call) -> bool:
    """The page's ``<html lang>``: explorer/ui/language.py's ``st.sidebar.html(lang_script(lang), …)``, whose one
    value is one of the app's language codes (checked below)."""
    return (path.relative_to(ROOT).as_posix() == "explorer/ui/language.py" and _dotted(call.func) == "st.sidebar.html"
            and len(call.args) == 1 and isinstance(call.args[0], ast.Call)
            and _dotted(call.args[0].func) == "lang_script")


def test_the_language_mark_sets_only_a_known_language_code():
    from explorer.ui.language import lang_script

    assert lang_script("de").endswith('.documentElement.lang = "de";</script>') and lang_script("de").count("<") == 2
    for hostile in ('de";alert(1);"', "xx", "</script><script>", None):
        with pytest.raises(ValueError):
            lang_script(hostile)


def test_a_frame_rule_is_one_style_element_of_a_plain_key_and_a_number():
    from explorer.ui.chart_text import frame_rule

    rule = frame_rule("overview", 55)
    assert rule.startswith("<style>") and rule.endswith("</style>") and rule.count("<") == 2
    assert ".st-key-overview .shapelayer path[data-index='55']" in rule
    for hostile in ("x</style><script>alert(1)</script>", "a b", "grid{}", "é"):
        with pytest.raises(ValueError):
            frame_rule(hostile, 1)
    with pytest.raises((TypeError, ValueError)):
        frame_rule("grid", "1'] {} <script>")


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_no_raw_html_or_javascript_sinks(path: Path):
    """No unsafe_allow_html / unsafe_allow_javascript (any value), st.html, components.html, nor
    streamlit.components at all; st.iframe only in explorer/ui/views/bertviz.py, fed by the offline bertviz builder (its
    script tags stay inside that iframe). One script: the constant
    one that makes wide formulas focusable; one style element: a chart's frame (frame_rule, checked above).
    A follower reaches the teacher's page by Streamlit's own navigation."""
    source = path.read_text()
    code = [c for c in _calls(path) if not _the_formula_script(path, c) and not _the_frame_rule(path, c)
            and not _the_language_mark(path, c)]
    for call in code:
        for kw in call.keywords:
            assert kw.arg not in {"unsafe_allow_html", "unsafe_allow_javascript"}, (path, call.lineno)
        name = _dotted(call.func)
        assert not name.endswith(("st.html", "components.html", "v1.html", "components.iframe")), (path, name)
        if name.endswith("iframe"):
            assert path.relative_to(ROOT).as_posix() == "explorer/ui/views/bertviz.py", (path, call.lineno)
    assert "<script" not in source.lower() or path.relative_to(ROOT).as_posix() in (
        "explorer/plots/bertviz.py", "explorer/plots/offline_html.py", "explorer/ui/chart_text.py",
        "explorer/ui/language.py"), path
    # bertviz's iframe and its offline page; the formula script; the page's <html lang>
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert not any(m.startswith("streamlit.components") for m in modules), (path, node.lineno)


def test_the_only_iframe_is_built_by_the_offline_bertviz_module():
    page = (ROOT / "explorer" / "ui" / "views" / "bertviz.py").read_text()
    assert "show_bertviz(" in (ROOT / "pages" / "heatmaps.py").read_text()
    assert "bertviz.head_view_html" in page and "bertviz.model_view_html" in page
    assert "st.iframe(page" in page


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_never_remote_code_nor_pickles(path: Path):
    """trust_remote_code is never True (every from_pretrained passes False, directly or through a dict);
    no torch.load / pickle / eval / exec."""
    for call in _calls(path):
        name = _dotted(call.func)
        assert name.split(".")[-1] not in {"eval", "exec"} or name.startswith("model."), (path, name, call.lineno)
        assert name not in {"torch.load", "pickle.load", "pickle.loads"}, (path, name, call.lineno)
        for kw in call.keywords:
            if kw.arg == "trust_remote_code":
                assert isinstance(kw.value, ast.Constant) and kw.value.value is False, (path, call.lineno)
        if name.endswith("from_pretrained"):
            explicit = any(kw.arg == "trust_remote_code" for kw in call.keywords)
            via_dict = any(kw.arg is None for kw in call.keywords)   # **common / **kwargs built with False
            assert explicit or via_dict, (path, call.lineno)
    text = path.read_text()
    assert "trust_remote_code=True" not in text.replace(" ", "")


# ---------------------------------------------------------------------------------------------- runtime: loading

@pytest.fixture
def from_pretrained_calls(monkeypatch):
    """Every from_pretrained call of the transformers Auto classes, with its keyword arguments."""
    import transformers

    calls = []
    for cls_name in ("AutoConfig", "AutoTokenizer", "AutoModel", "AutoModelForCausalLM"):
        cls = getattr(transformers, cls_name)
        real = cls.from_pretrained.__func__

        def spy(klass, *args, _real=real, _name=cls_name, **kwargs):
            calls.append((_name, args[0] if args else None, dict(kwargs)))
            return _real(klass, *args, **kwargs)
        monkeypatch.setattr(cls, "from_pretrained", classmethod(spy))
    return calls


def test_embedded_models_use_only_safetensors_or_gguf():
    for spec in registry.EMBEDDED.values():
        assert spec.weights.endswith((".safetensors", ".gguf")) and len(spec.sha256) == 64
    enc = embedded.package_dir(registry.EMBEDDED[registry.EMBEDDED_ENCODER].package) / "model"
    assert not [p.name for p in enc.iterdir() if p.suffix in {".bin", ".pt", ".pth", ".pkl", ".ckpt", ".h5"}]


def test_loading_an_embedded_model_never_enables_remote_code(from_pretrained_calls):
    loaded = loading.load_model(registry.EMBEDDED_ENCODER, device="cpu")
    assert loaded.model is not None
    assert {c[0] for c in from_pretrained_calls} >= {"AutoConfig", "AutoTokenizer", "AutoModel"}
    for name, _, kwargs in from_pretrained_calls:
        assert kwargs.get("trust_remote_code") is False, name
        assert kwargs.get("local_files_only") is True, name
    model_call = next(kw for n, _, kw in from_pretrained_calls if n == "AutoModel")
    assert model_call["use_safetensors"] is True and model_call["attn_implementation"] == "eager"


def test_local_and_hub_loading_never_enable_remote_code(tiny_folder, from_pretrained_calls, monkeypatch):
    loading.load_model(str(tiny_folder("gpt2")), device="cpu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(registry.ModelUnavailable, match="no network connection"):
        loading.load_model("nobody-here/no-such-model-xyz", device="cpu")
    assert from_pretrained_calls
    assert all(kw.get("trust_remote_code") is False for _, _, kw in from_pretrained_calls)


def test_the_gguf_conversion_never_enables_remote_code():
    """The one-time GGUF conversion (too slow to rerun here) passes trust_remote_code=False to both loaders."""
    tree = ast.parse((ROOT / "explorer" / "model" / "embedded.py").read_text())
    convert = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_convert")
    source = ast.unparse(convert)
    assert "trust_remote_code=False" in source and source.count("from_pretrained(") == 2
    assert source.count("**kwargs") == 2


# ---------------------------------------------------------------------------------------------- hub policy

def test_hub_switched_off(monkeypatch, from_pretrained_calls):
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "0")
    assert registry.hub_policy() == (False, frozenset())
    for name in ("gpt2", "someone/some-model"):
        with pytest.raises(registry.ModelUnavailable, match="switched off on this server"):
            loading.load_model(name, device="cpu")
    assert from_pretrained_calls == []   # refused before anything is read
    assert loading.load_model(registry.EMBEDDED_ENCODER, device="cpu").kind == "encoder"


@pytest.mark.parametrize("value", ["0", "false", "no", "off", " OFF "])
def test_hub_off_spellings(monkeypatch, value):
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", value)
    assert registry.hub_policy()[0] is False


def test_hub_allowlist(monkeypatch, from_pretrained_calls):
    monkeypatch.setenv("EXPLORER_HUB_ALLOWLIST", "gpt2, bert-base-uncased")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert registry.hub_policy() == (True, frozenset({"gpt2", "bert-base-uncased"}))
    with pytest.raises(registry.ModelUnavailable, match="only allows these hub models: bert-base-uncased, gpt2"):
        loading.load_model("roberta-base", device="cpu")
    assert from_pretrained_calls == []
    with pytest.raises(registry.ModelUnavailable, match="no network connection"):   # allowed, but offline here
        loading.load_model("gpt2", device="cpu")


def _offered(at: AppTest) -> list[str]:
    """Model names in the picker (its options are shown as "name · description")."""
    return [o.split(" · ")[0] for o in at.selectbox(key="model").options]


def _heatmaps(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "heatmaps.py"), default_timeout=240)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_picker_offers_no_hub_model_when_switched_off(monkeypatch):
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "0")
    at = _heatmaps(model="gpt2")
    assert not at.exception
    assert _offered(at) == list(registry.EMBEDDED)
    assert any("not offered here" in i.value for i in at.info)   # the linked hub model was replaced
    assert at.selectbox(key="model").value == registry.EMBEDDED_ENCODER and at.get("plotly_chart")


def test_picker_offers_only_the_allowlist(monkeypatch):
    monkeypatch.setenv("EXPLORER_HUB_ALLOWLIST", "gpt2")
    at = _heatmaps(model="roberta-base")
    assert not at.exception
    offered = _offered(at)
    assert offered[:len(registry.EMBEDDED)] == list(registry.EMBEDDED) and "gpt2" in offered[len(registry.EMBEDDED):]
    assert "roberta-base" not in offered and at.get("plotly_chart")


def test_local_folders_are_off_by_default(monkeypatch, tiny_folder, from_pretrained_calls):
    """A real server refuses model folders unless the deployer switches them on (tests/conftest.py does, for
    the tiny models): a folder that exists and one that does not get the same message, and nothing is read."""
    from explorer.serving import local_folders

    folder = str(tiny_folder("bert"))
    monkeypatch.delenv("EXPLORER_ALLOW_LOCAL")
    messages = []
    for name in (folder, folder + "-missing"):
        with pytest.raises(registry.ModelUnavailable) as err:
            loading.load_model(name, device="cpu")
        messages.append(str(err.value).replace(name, "X"))
    assert messages[0] == messages[1] and local_folders.LOCAL_OFF in messages[0]
    assert from_pretrained_calls == []
    at = _heatmaps(model="/etc")
    assert not at.exception
    shown = " ".join(w.value for w in at.warning).replace("\\", "")   # literal() backslash-escapes punctuation
    assert local_folders.LOCAL_OFF in shown and not at.get("plotly_chart")
    monkeypatch.setenv("EXPLORER_ALLOW_LOCAL", "1")
    assert loading.load_model(folder, device="cpu").kind == "encoder"


def test_readme_documents_the_hub_policy():
    readme = (ROOT / "README.md").read_text()
    assert "EXPLORER_ALLOW_HUB=0" in readme and "EXPLORER_HUB_ALLOWLIST=" in readme
    for variable in ("EXPLORER_ALLOW_LOCAL=1", "EXPLORER_LOCAL_ROOT", "EXPLORER_MAX_MODEL_MB",
                     "EXPLORER_FORWARD_WORKERS"):
        assert variable in readme, variable


# ---------------------------------------------------------------------------------------------- figures

def _figures():
    """Every figure builder that draws tokens, fed hostile tokens."""
    from explorer.plots import attention as plots
    from explorer.plots import concepts as concept_plots
    from explorer.plots import generation as generation_plots
    from explorer.plots import head_grids
    from explorer.plots import heads as head_plots
    from explorer.plots import positions as position_plots

    n = len(HOSTILE)
    w = np.full((n, n), 1.0 / n, dtype=np.float32)
    yield "heatmap", plots.heatmap(w, HOSTILE, HOSTILE, title="t")
    yield "query_bars", plots.query_bars(w[0], HOSTILE, HOSTILE[0])
    yield "head_grid", head_grids.head_grid(np.stack([w, w]), HOSTILE, HOSTILE)
    from explorer.plots import geometry as geometry_plots
    xy, pos = np.zeros((2 * n, 2), dtype=np.float32), np.arange(n)
    yield "joint_map", geometry_plots.joint_map(xy, pos, pos, HOSTILE, chosen=0, top=[(1, 0.5, HOSTILE[0])],
                                                text=(xy, HOSTILE))   # the student's text on the map
    yield "flip_heatmap", head_plots.flip_heatmap(w, HOSTILE, HOSTILE, query_rows=[1], changed=2, causal=True)
    yield "difference_heatmap", head_plots.difference_heatmap(w, w, HOSTILE, HOSTILE)
    yield "labelled_heatmap", concept_plots.labelled_heatmap(w, HOSTILE, HOSTILE)
    yield "weights_bars", concept_plots.weights_bars(HOSTILE, {"a": w[0]})
    yield "side_by_side", position_plots.side_by_side({"a": (w, HOSTILE), "b": (w, HOSTILE)})
    yield "padding_change_bars", position_plots.padding_change_bars(HOSTILE, w[0], w[1])
    yield "matrix_heatmap", concept_plots.matrix_heatmap(w, col_labels=HOSTILE, row_labels=HOSTILE)
    yield "matrix_grid", position_plots.matrix_grid({"a": w}, row_labels=HOSTILE, col_labels=HOSTILE)
    yield "context_bars", generation_plots.context_bars(w[0], HOSTILE, 1, title=" ".join(HOSTILE))
    yield "considered_bars", generation_plots.considered_bars(HOSTILE, w[0], w[0], 0, title=HOSTILE[0])


@pytest.mark.parametrize("name,fig", list(_figures()), ids=[n for n, _ in _figures()])
def test_figures_show_tokens_as_literal_text(name, fig):
    """Plotly renders a subset of HTML in labels, titles, hover text: tokens arrive as entities instead."""
    spec = fig.to_json()
    for tag in RAW_TAGS:
        assert tag not in spec, (name, tag)
    escaped = json.dumps("&lt;script&gt;")[1:-1]
    assert escaped in spec, name   # the token is there, as text
