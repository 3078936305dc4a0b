"""The glossary and the page guides: every term defined in a sane length, abbreviations spelled out, every term a
page lists defined and really on that page, and the table of pages whole: every file of pages/ in it once, and
app.py's navigation built from it rather than from a list of its own."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from explorer.sitemap import table as pages
from explorer.words import glossary
from explorer.words.glossary import TERMS, lookup

ROOT = Path(__file__).resolve().parents[2]

# The terms issue 30 names, as a student might look them up.
ASKED = ["query", "key", "value", "head", "layer", "softmax", "logit", "token", "sub-token", "embedding",
         "residual stream", "MLP", "multilayer perceptron", "attention weight", "score", "d_k", "scaling",
         "positional encoding", "RoPE", "mask", "causal mask", "padding mask", "key/value cache", "KV cache",
         "temperature", "top-k", "top-p", "log-odds", "fidelity", "rollout", "entropy", "sink",
         "grouped-query attention", "GQA", "encoder", "decoder", "layer norm", "knockout", "ablation",
         "attribution", "gradient × input", "integrated gradients"]


@pytest.mark.parametrize("name", list(TERMS))
def test_every_term_has_a_plain_definition_of_sane_length(name):
    term = TERMS[name]
    assert 40 <= len(term.meaning) <= 320, f"{name}: {len(term.meaning)} characters"
    assert term.meaning[0].isupper() and term.meaning.endswith("."), term.meaning
    assert "\n" not in term.meaning and "  " not in term.meaning
    assert not re.search(r"[*_`#]{2}|\[[^\]]*\]\(", term.meaning), "no markdown markup in a definition"


@pytest.mark.parametrize("name", ASKED)
def test_every_term_the_issue_names_is_defined(name):
    assert lookup(name) is not None, name


def test_abbreviations_are_spelled_out_in_the_title():
    """A name with two capitals (MLP, GQA, RoPE, KV cache, PCA) says what it stands for, once, in its title."""
    abbreviations = [t for t in TERMS.values() if sum(c.isupper() for c in t.name) >= 2]
    assert {"MLP", "GQA", "RoPE", "KV cache"} <= {t.name for t in abbreviations}
    for term in abbreviations:
        assert term.expands and term.title == f"{term.name} ({term.expands})", term
    assert lookup("MLP").title == "MLP (multilayer perceptron)"
    assert lookup("key/value cache").title == "KV cache (key/value cache)"


def test_each_form_names_one_term_and_lookup_reads_widget_labels():
    forms = [f.lower() for t in TERMS.values() for f in t.forms]
    assert len(forms) == len(set(forms)), sorted({f for f in forms if forms.count(f) > 1})
    for label, name in [("Layer", "layer"), ("Head", "head"), ("Top-k (0: off)", "top-k"),
                        ("Top-p (1: off)", "top-p"), ("Temperature T", "temperature"), ("d_model", "d_model"),
                        ("Query token (for the bars)", "query"), ("ablation", "knockout"),
                        ("W_O", "output projection")]:
        assert lookup(label).name == name, label
    assert lookup("Model") is None and lookup("Seedling") is None


def test_search_finds_by_name_form_and_meaning():
    assert [t.name for t in glossary.matching("")] == list(TERMS)
    assert "top-p" in [t.name for t in glossary.matching("nucleus")]
    assert "KV cache" in [t.name for t in glossary.matching("KEY/VALUE")]
    assert glossary.matching("no such word anywhere") == []


@pytest.mark.parametrize("guide", list(pages.PAGES.values()), ids=list(pages.PAGES))
def test_every_term_a_page_lists_exists_once(guide):
    assert all(name in TERMS for name in guide.terms), [n for n in guide.terms if n not in TERMS]
    assert len(set(guide.terms)) == len(guide.terms)
    assert guide.does.endswith(".") and guide.asks.endswith("?")
    assert len(guide.does) <= 110 and len(guide.asks) <= 70, "one line each on Home"


def _strings(path: Path) -> str:
    """The string literals of a module that can reach the screen (docstrings left out), joined."""
    tree = ast.parse(path.read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return "\n".join(n.value for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings)


def _explorer_imports(path: Path) -> list[Path]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("explorer"):
            for name in [node.module, *(f"{node.module}.{a.name}" for a in node.names)]:
                module = ROOT / (name.replace(".", "/") + ".py")
                if module.is_file():
                    found.append(module)
    return found


def _screen_text(page: str, ui_only: bool = False) -> str:
    """What a page can write: its own strings, those of the explorer modules it imports, and those of the modules
    its page-specific views (explorer/ui/views/) import; ``ui_only``: only the Streamlit modules among them."""
    modules = _explorer_imports(ROOT / page)
    views = [m for m in modules if m.parent.name == "views"]
    modules += [m for view in views for m in _explorer_imports(view)]
    if ui_only:
        modules = [m for m in modules if "ui" in m.relative_to(ROOT).parts]
    return "\n".join(_strings(m) for m in [ROOT / page, *modules])


@pytest.mark.parametrize("guide", [g for g in pages.PAGES.values() if g.terms], ids=lambda g: g.file)
def test_every_term_a_page_lists_is_on_that_page(guide):
    """A page's "Words on this page" holds words the page (or the views it draws) really writes."""
    text = _screen_text(guide.file).lower()
    missing = [name for name in guide.terms
               if not any(re.search(rf"(?<![\w-]){re.escape(f.lower())}(?![\w-])", text) for f in TERMS[name].forms)]
    assert missing == [], f"{guide.file} lists terms it never writes: {missing}"


def test_the_table_holds_every_page_file_once_with_a_title_icon_and_question():
    files = [p.file for section in pages.SECTIONS for p in section.pages]
    assert sorted(files) == sorted(f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py"))
    assert len(set(files)) == len(files) and len({p.title for p in pages.PAGES.values()}) == len(files)
    assert [p.file for p in pages.PAGES.values() if p.default] == ["pages/home.py"]
    for page in pages.PAGES.values():
        assert re.fullmatch(r":material/[a-z_]+:", page.icon), page   # drawn offline; an emoji is an empty box
        assert page.does.endswith(".") and page.asks.endswith("?"), page
    listed = [p.file for _, on_home in pages.on_home() for p in on_home]
    assert sorted(listed) == sorted(f for f in files if f != "pages/home.py")   # Home lists every other page


def _question_keys(path: Path) -> set[str]:
    """The keys of the predict-then-reveal questions a file asks (``ask_first(q, "softmax", …)``, ``key="worked"``)."""
    found = set()
    for call in ast.walk(ast.parse(path.read_text())):
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") in ("ask_first", "predict_then_reveal"):
            given = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "key")]
            found |= {a.value for a in given if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found


def test_a_pages_quiz_key_is_the_key_of_a_question_it_asks():
    """``Page.quiz`` names the question a lesson step uses with ``question = "page"`` (and the lesson bar waits on):
    it must be a key the page file, or a view it draws from explorer/ui/views/, passes to ask_first."""
    views = set().union(*(_question_keys(f) for f in (ROOT / "explorer/ui/views").glob("*.py")))
    asking = [p for p in pages.PAGES.values() if p.quiz]
    assert len(asking) >= 9
    for page in asking:
        assert page.quiz in _question_keys(ROOT / page.file) | views, page


def test_app_py_builds_its_navigation_from_the_table_alone():
    """app.py names no page file, title or icon: its st.Page entries come from a loop over SECTIONS (AppTest in
    tests/app/test_navigation_app.py checks the navigation it draws)."""
    tree = ast.parse((ROOT / "app.py").read_text())
    literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert [v for v in literals if re.fullmatch(r"pages/\w+\.py|:material/\w+:", v)] == []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Page"]
    assert len(calls) == 1
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.DictComp, ast.For)) and "SECTIONS" in ast.unparse(n)]
    assert loops, "app.py's st.Page entries come from a loop over explorer.sitemap.table.SECTIONS"


def test_guide_for_any_path_of_a_page_file():
    assert pages.guide_for(str(ROOT / "pages" / "write.py")).title == "Watch it write"
    assert [t.name for t in pages.terms_of("/elsewhere/pages/lab_masks.py")][:3] == ["mask", "causal mask",
                                                                                     "padding mask"]
    assert pages.terms_of("pages/home.py") == [] and pages.guide_for("nothing.py") is None
    assert "pages/write.py" in [g.file for g in pages.pages_using("top-p")]


@pytest.mark.parametrize("guide", [g for g in pages.PAGES.values() if g.terms], ids=lambda g: g.file)
def test_a_page_that_writes_an_abbreviation_spells_it_out_in_its_words(guide):
    """MLP, GQA, RoPE, KV…: a page that writes one lists it, so its "Words on this page" says what it stands for.
    Read from the page and its Streamlit modules only: the core's strings (a model's description) are not all drawn
    on every page that imports them."""
    text = _screen_text(guide.file, ui_only=True)
    written = [t.name for t in TERMS.values() if t.expands
               and re.search(rf"(?<![\w-]){re.escape(t.name.split()[0])}(?![\w-])", text)]
    assert [name for name in written if name not in guide.terms] == []


def test_a_translated_term_shows_the_english_one_beside_it():
    from explorer.words.i18n import language

    with language("de"):
        assert TERMS["attention weight"].title == "Aufmerksamkeitsgewicht (attention weight)"
        assert TERMS["MLP"].title == "MLP (mehrschichtiges Perzeptron)"   # the English name is the same
        assert TERMS["softmax"].title == "Softmax"
        assert TERMS["layer"].shown_meaning.startswith("Eine Stufe")
    with language("es"):
        assert TERMS["layer"].title == "capa (layer)"
    assert TERMS["layer"].title == "layer"


def test_lookup_reads_a_label_in_english_or_in_the_session_language():
    from explorer.words import i18n

    with i18n.language("de"):
        assert lookup("Schicht").name == "layer"                 # a term's translated name
        assert lookup("Layer").name == "layer"                   # the English label still works
        assert lookup("Aufmerksamkeitsgewicht").name == "attention weight"
        assert i18n.source_text("Heads und der Block", "de") == "Heads and the block"   # read back to its id
    with i18n.language("es"):
        assert lookup("cabeza").name == "head" and lookup("Temperatura").name == "temperature"
    assert lookup("Schicht") is None   # an English session reads English labels


def test_search_finds_a_term_by_its_translation():
    from explorer.words.i18n import language

    with language("de"):
        assert [t.name for t in glossary.matching("Aufmerksamkeitsgewicht")][0] == "attention weight"
