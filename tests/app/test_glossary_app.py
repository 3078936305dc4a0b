"""AppTest of the words: the Glossary page shows every term, its search narrows and is deep-linked, each page's
"Words on this page" lists its terms, and a widget that names a term explains it in its help."""
from pathlib import Path

from pagetest import open_page
from streamlit.testing.v1 import AppTest

from explorer.sitemap import table as pages
from explorer.words import glossary

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_the_glossary_page_shows_every_term_by_idea():
    at = open_page("pages/glossary.py")
    text = _markdown(at)
    for term in glossary.TERMS.values():
        assert f"**{term.title}**  \n{term.meaning}" in text, term.name
    assert [s.value for s in at.subheader] == list(glossary.GROUPS)
    assert "MLP (multilayer perceptron)" in text and "*On: Watch it write, Heads and the block*" in text


def test_the_search_narrows_the_list_and_lives_in_the_link():
    at = open_page("pages/glossary.py", find="nucleus")
    assert at.text_input(key="find").value == "nucleus"
    text = _markdown(at)
    assert "**top-p**" in text and "**softmax**" not in text
    at.text_input(key="find").input("zzz <b>*no*</b>").run()
    assert not at.exception and at.query_params["find"] == "zzz <b>*no*</b>"
    assert "No word matches" in at.info[0].value and "\\<b\\>" in at.info[0].value   # typed text shown as text
    at.text_input(key="find").input("").run()
    assert "find" not in at.query_params and len(at.subheader) == len(glossary.GROUPS)


def test_a_page_lists_its_words_in_the_sidebar_and_links_the_glossary():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/lab_worked_example.py").run()
    assert not at.exception
    box = [e for e in at.sidebar.expander if e.label == "Words on this page"]
    assert len(box) == 1
    listed = box[0].markdown[0].value
    for term in pages.terms_of("pages/lab_worked_example.py"):
        assert f"- **{term.title}**: {term.meaning}" in listed
    assert "**mask**" not in listed   # only this page's words
    assert [link.proto.page for link in at.get("page_link")] == ["glossary"]
    at.switch_page("pages/glossary.py").run()
    assert not [e for e in at.sidebar.expander if e.label == "Words on this page"]   # the glossary needs none


def test_a_widget_that_names_a_term_explains_it():
    at = open_page("pages/lab_block.py")
    sliders = {w.label: w for w in at.select_slider}
    radios = {w.label: w for w in at.radio}
    assert glossary.TERMS["d_model"].meaning in sliders["Model width d_model"].help
    assert glossary.TERMS["layer norm"].meaning in radios["Where the layer norm sits"].help
    assert not sliders["Heads h"].help   # "Heads h" is not a term's name: no guess


def test_the_projector_view_keeps_the_sidebar_shut(tmp_path, monkeypatch):
    """The teacher's projector view has its navigation on top: the words box would open a sidebar beside it."""
    from explorer.ui.live import membership

    monkeypatch.setenv("EXPLORER_CLASSROOM_DB", str(tmp_path / "classroom.sqlite3"))
    monkeypatch.delenv("EXPLORER_CLASSROOM_URL", raising=False)
    membership.store.clear()
    try:
        teacher = AppTest.from_file(APP, default_timeout=120).run()
        teacher.switch_page("pages/classroom.py").run()
        next(b for b in teacher.button if b.label == "Start a class").click().run()
        teacher.switch_page("pages/lab_worked_example.py").run()
        assert [e.label for e in teacher.sidebar.expander] == ["Words on this page"]
        teacher.toggle(key=membership.PROJECTOR).set_value(True).run()
        assert not teacher.exception and not teacher.sidebar.expander
    finally:
        membership.store.clear()
