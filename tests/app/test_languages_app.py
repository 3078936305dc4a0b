"""No English left (issue 37): every page of ``explorer.sitemap.table`` rendered in German and in Spanish writes no
text that it also writes, word for word, in English, apart from what is never translated: model tokens, user
and example text, numbers, model names and the words every language keeps (``pagetest.ALLOWED``).

Each page, and each step of every shipped lesson (its page on the step's view), is opened through app.py (its
navigation, sidebar and "Words on this page" included) with ``lang=en``, ``lang=de`` and ``lang=es``;
``pagetest.english_left`` compares what the renders wrote (``pagetest.page_texts``: headings, text, widget labels,
options and help, link labels, chart titles and axis titles). The lessons' own words (the bar, the step's question)
are not on these pages: a step is opened as its link opens it, not run as a lesson.

Pages that other branches are still translating are listed in ``NOT_YET_TRANSLATED``: they are expected to fail
(strict: a page that came out clean fails its xfail, and its entry must go as its branch is merged)."""
from __future__ import annotations

import re
from functools import cache
from urllib.parse import parse_qsl, urlsplit

import pytest
from pagetest import ALLOWED, ALLOWED_IN, ROOT, english_left, page_texts, ticks
from streamlit.testing.v1 import AppTest

from explorer.examples import EXAMPLES, FLIP_PAIRS
from explorer.model.registry import EMBEDDED, KNOWN_HUB
from explorer.sitemap.table import PAGES
from explorer.ui import language
from explorer.words.i18n import LANGUAGES

LANGS = ("de", "es")
NOT_YET_TRANSLATED: dict[str, str] = {}   # page file -> what still writes English there (none now)
# never translated: the example sentences (the models read English) and the model names
TOKEN = re.compile(r"“␣?[^\s”]+”")   # one model token in quotes (a prediction's options): as the model wrote it
NEVER = (*EXAMPLES.values(), *(s for pair in FLIP_PAIRS.values() for s in pair[:2]), *EMBEDDED, *KNOWN_HUB,
         *LANGUAGES.values(),   # and the language menu, each language by its own name
         "K7M-2QX")             # the room code a box shows as its example


@cache
def rendered(page: str, lang: str, params: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What ``page`` wrote in ``lang`` (``page_texts``), opened with ``params`` in its link (a lesson step's view),
    and what it shows that is never translated: the chart's tick labels (tokens) and the text boxes' contents (a
    user's or an example's text)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params.update({**dict(params), "lang": lang})
    at.run()
    if page != "pages/home.py":
        at.switch_page(page).run()
    assert not at.exception, at.exception
    typed = [str(w.value) for kind in ("text_area", "text_input") for w in at.get(kind)]
    return tuple(page_texts(at)), tuple(ticks(at) + typed)


def cases():
    for page in PAGES:
        for lang in LANGS:
            why = f"translated on another branch: {NOT_YET_TRANSLATED.get(page)}"
            marks = [pytest.mark.xfail(strict=True, reason=why)] if page in NOT_YET_TRANSLATED else []
            yield pytest.param(page, lang, marks=marks, id=f"{page.removeprefix('pages/').removesuffix('.py')}-{lang}")


def english_in(page: str, lang: str, params: tuple[tuple[str, str], ...] = ()) -> list[str]:
    en, en_kept = rendered(page, "en", params)
    other, other_kept = rendered(page, lang, params)
    left = english_left(en, other, ALLOWED | ALLOWED_IN[lang], keep=(*NEVER, *en_kept, *other_kept))
    return [t for t in left if not TOKEN.fullmatch(t)]


@pytest.mark.parametrize("page,lang", list(cases()))
def test_no_english_left(page, lang):
    left = english_in(page, lang)
    assert not left, f"{page} in {lang} still writes English:\n" + "\n".join(left)


def step_cases():
    """Every step of every shipped lesson: its page opened on the step's view (the parameters its link sets)."""
    from explorer.lessons import catalogue

    for lesson in catalogue({})[0]:
        for i, step in enumerate(lesson.steps, 1):
            why = f"its page is translated on another branch: {NOT_YET_TRANSLATED.get(step.page)}"
            marks = [pytest.mark.xfail(strict=True, reason=why)] if step.page in NOT_YET_TRANSLATED else []
            for lang in LANGS:
                yield pytest.param(step.page, tuple(sorted(step.params.items())), lang, marks=marks,
                                   id=f"{lesson.source.split(':')[-1]}-{i}-{lang}")


@pytest.mark.parametrize("page,params,lang", list(step_cases()))
def test_no_english_left_on_a_lesson_step(page, params, lang):
    left = english_in(page, lang, params)
    assert not left, f"{page} with {dict(params)} in {lang} still writes English:\n" + "\n".join(left)


def test_english_left_ignores_tokens_numbers_and_allowed_words():
    en = ["Layer 3", "Take “it” → “animal” apart", "it → animal 0.51", "Softmax", "12"]
    de = ["Schicht 3", "Take “it” → “animal” apart", "it → animal 0.51", "Softmax", "12"]
    assert english_left(en, de, ALLOWED, keep=["The animal didn't cross the street because it was too tired."]) \
        == ["Take “it” → “animal” apart"]


# ---------------------------------------------------------------------------------------------- choosing

def glossary_page(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(params)
    at.run()
    at.switch_page("pages/glossary.py").run()
    assert not at.exception, at.exception
    return at


def test_the_picker_reruns_the_page_in_that_language_and_keeps_the_rest():
    at = glossary_page()
    assert at.sidebar.selectbox(key=language.PICKED).options == ["English", "Deutsch", "Español"]
    at.text_input(key="find").input("nucleus").run()
    assert "lang" not in at.query_params   # an English session on a plain link: the link stays plain
    at.sidebar.selectbox(key=language.PICKED).select("de").run()
    assert not at.exception
    assert at.title[0].value == "Glossar" and at.text_input(key="find").label == "Wort suchen"
    assert at.text_input(key="find").value == "nucleus" and "**Top-p**" in at.markdown[0].value
    assert at.query_params["lang"] == "de" and at.query_params["find"] == "nucleus"   # the link opens in German
    at.sidebar.selectbox(key=language.PICKED).select("es").run()
    assert at.title[0].value == "Glosario" and at.query_params["lang"] == "es"


def test_the_link_language_is_kept_and_every_page_link_carries_it():
    at = glossary_page(lang="es")
    assert at.sidebar.selectbox(key=language.PICKED).value == "es"
    at.switch_page("pages/lab_worked_example.py").run()   # the navigation drops the address's parameters
    assert not at.exception and at.query_params["lang"] == "es"   # written back: the address names the language
    assert [e.proto.query_string for e in at.get("page_link")] == ["lang=es"]   # "Every word: the glossary"
    home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    home.query_params["lang"] = "de"
    home.run()
    links = [dict(parse_qsl(e.proto.query_string)) for e in home.get("page_link")]
    assert links and all(link.get("lang") == "de" for link in links)


def _join_link():
    import streamlit as st

    from explorer.ui import language
    from explorer.ui.live import membership

    language.choose()
    st.markdown(membership.join_url("K7M2QX"))
    st.markdown(membership.teacher_url("K7M2QX", "secret"))


def test_join_links_carry_the_session_language_and_english_links_stay_plain():
    at = AppTest.from_function(_join_link)
    at.query_params["lang"] = "de"
    at.run()
    assert [urlsplit(m.value).query for m in at.markdown] == ["join=K7M2QX&lang=de",
                                                              "room=K7M2QX&teacher=secret&lang=de"]
    plain = AppTest.from_function(_join_link).run()
    assert [urlsplit(m.value).query for m in plain.markdown] == ["join=K7M2QX", "room=K7M2QX&teacher=secret"]


def _marks(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html") if "documentElement.lang" in h.proto.body]


def test_the_page_names_its_language_for_the_browser():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["lang"] = "de"
    at.run()
    assert _marks(at) == [language.lang_script("de")]
    at.run()   # sent once a language: not again on the next run
    assert not _marks(at)
    at.sidebar.selectbox(key=language.PICKED).select("es").run()
    assert [m.endswith('lang = "es";</script>') for m in _marks(at)] == [True]


def test_a_follower_keeps_its_own_language_when_the_teacher_moves(fresh_store):
    from pagetest import classroom_page, seat_of

    teacher = classroom_page(lang="de")
    next(b for b in teacher.button if b.key == "_class_start").click().run()
    student = classroom_page(lang="es")
    student.text_input(key="_class_typed").input(seat_of(teacher).room)
    next(b for b in student.button if b.key == "_class_join").click().run()
    teacher.switch_page("pages/glossary.py").run()
    assert teacher.title[0].value == "Glossar"
    student.run()
    assert not student.exception and student.title[0].value == "Glosario"
    assert student.query_params["lang"] == "es" and student.session_state[language.STATE] == "es"
