"""The decoder, explanation and geometry pages in German and Spanish: every text they write is translated (what
stays as it is: model tokens and names, numbers, the English example text, words both languages write alike), and
what a shared job computed for an English session reads in the language of the session showing it."""
import re

import pagetest
import pytest
from pagetest import APP, english_left, page_texts
from streamlit.testing.v1 import AppTest

from explorer.examples import ANIMAL_TIRED
from explorer.ui.views.generation_run import DEFAULT_PROMPT

PAGES = ("pages/write.py", "pages/explain.py", "pages/geometry.py")
ALLOWED = {*pagetest.ALLOWED, *"Prompt Head Heads logit Logit token Tokens MLP PCA SNE Top softmax Query Key Value "
           "Heatmap Encoder Decoder Embedding kB ms MB".split(),
           *re.findall(r"[^\W\d_]+", DEFAULT_PROMPT + " " + ANIMAL_TIRED)}
# Texts of shared modules that other parts of the work translate (the glossary, the model picker, the pickers'
# head lists, the quiz, the examples box, chart descriptions, the heatmap links, the knockout measure's boxes):
# each pattern goes once its module speaks German and Spanish.
NOT_YET: list[str] = []   # every shared module is translated now


def shown(at: AppTest) -> list[str]:
    """``page_texts`` and what it leaves out that these pages show: the pick control's label and options, the
    page links' labels."""
    out = page_texts(at)
    for control in at.get("button_group"):   # st.segmented_control and st.pills (the pills are tokens)
        if control.key != "_step_pick":
            out += [control.proto.label, *(o.content for o in control.proto.options)]
    return out + [link.proto.label for link in at.get("page_link")]


def opened(page: str, lang: str) -> AppTest:
    """``page`` in the app (links resolve), in a session that came with ``?lang=``."""
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def english():
    return {}


@pytest.mark.parametrize("lang", ["de", "es"])
@pytest.mark.parametrize("page", PAGES)
def test_no_english_left(english, page, lang):
    if page not in english:        # English first: the shared jobs (generation, explanation, corpus pass) run now
        english[page] = shown(opened(page, "en"))
    other = shown(opened(page, lang))
    left = [t for t in english_left(english[page], other, ALLOWED | pagetest.ALLOWED_IN[lang])
            if not any(re.search(p, t) for p in NOT_YET)]
    assert not left, left
    assert len(other) >= 0.8 * len(english[page])   # the same page, not an error in its place
