"""AppTest of the explore pages about heads in German and Spanish (issue 37): each page, opened with ``lang=de``
and ``lang=es``, writes no text that it also writes, word for word, in English, except tokens, the English example
sentences, model names, numbers and the terms every language keeps (``pagetest.english_left``). The computed
sentences (the flip's "5 of 72 heads lean…") come in the page's language with the computed values kept."""
import re

import pagetest
import pytest
from pagetest import ROOT, english_left, page_texts, texts
from streamlit.testing.v1 import AppTest

from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE, FLIP_PAIRS
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.ui.views.heads_do import KNOCK_OPEN
from explorer.words import i18n
from explorer.words.glossary import TERMS

PAGES = {   # page: its URL parameters (the breakdown open, so that its sentences and figures are read too)
    "pages/heatmaps.py": {"breakdown": "1"},
    "pages/compare.py": {},
    "pages/flip.py": {},
    "pages/heads_do.py": {"ablation": "mean"},   # its own sweep: test_heads_do_app presses the zero one's button
    "pages/learn.py": {"tr_ask": "none"},        # the ready-made run unfolded: curves, heads, knockouts, circuits
}
OPENED = {"pages/flip.py": {KNOCK_OPEN: True}}   # Session State set after the first run: the flip's knock-out section
CLICKS = {"pages/heads_do.py": ("ko_top", "sweep_run"), "pages/flip.py": ("flipko_top",)}   # then buttons, by key
SHARED = {"softmax", "token", "tokens", "query", "key", "value", "heatmap", "encoder", "decoder", "embedding", "cos",
          "max", "nats", "ln", "log", "odds", "csv", "rollout", "bertviz", "cls", "sep", "vs"}
SAME_IN = {"de": {"head", "heads", "score", "flip", "self", "attention", "sink", "bias"}, "es": {"rollout"}}
EXAMPLE_WORDS = {w.lower() for w in re.findall(r"[^\W\d_]+", " ".join(
    [ANIMAL_TIRED, ANIMAL_WIDE, *FLIP_PAIRS, EMBEDDED_ENCODER, EMBEDDED_DECODER, "MiniLM SmolLM2 Instruct"]))}
# What other modules write on these pages, translated in their own files on other branches: the glossary's words
# (ui/words.py, words/glossary.py), the model menu, text box and token pickers (ui/pickers.py, ui/widgets.py,
# examples.py, model/registry.py), every chart's table switch and summary (ui/chart_text.py, access/summary.py),
# the quiz's controls (ui/predict_first.py). Empty PENDING_ELSEWHERE once those branches are merged.
GLOSSARY = tuple(t.meaning for t in TERMS.values())
PENDING_ELSEWHERE: tuple[re.Pattern, ...] = ()   # all merged: nothing left to other branches


def _elsewhere(text: str) -> bool:
    return any(p.search(text) for p in PENDING_ELSEWHERE)


def page_words(path: str, lang: str) -> list[str]:
    """``path`` in ``lang`` (its link's lang= and the session's choice it leads to), opened, then its sections
    opened and buttons pressed; every text it showed."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=300)
    at.query_params.update({**PAGES[path], "lang": lang})
    at.session_state["lang"] = lang
    with i18n.language(lang):   # AppTest calls a widget's format_func here, in the test's thread
        at.run()
        assert not at.exception, at.exception
        if path in OPENED:
            for key, value in OPENED[path].items():
                at.session_state[key] = value
            at.run()
        for key in CLICKS.get(path, ()):
            if any(b.key == key for b in at.button):   # the sweep, once run, is shared: its button is gone
                at.button(key=key).click().run()
        assert not at.exception, at.exception
        return page_texts(at)


@pytest.fixture(scope="module")
def english() -> dict[str, list[str]]:
    return {path: page_words(path, "en") for path in PAGES}


@pytest.mark.parametrize("lang", ["de", "es"])
@pytest.mark.parametrize("path", list(PAGES))
def test_no_english_left(english, path, lang):
    other = page_words(path, lang)
    assert len(other) > 20, other   # the page was drawn
    left = english_left(english[path], other, SHARED | SAME_IN[lang] | pagetest.ALLOWED_IN[lang] | EXAMPLE_WORDS)
    assert [t for t in left if not _elsewhere(t)] == []


@pytest.mark.parametrize(("lang", "said"), [("de", "5 von 72 Heads neigen sich in A zu 'animal' und in B zu 'street'."),
                                            ("es", "5 de 72 cabezas se inclinan hacia 'animal' en A y hacia 'street' "
                                                   "en B.")])
def test_the_flip_sentence_is_a_template_with_its_computed_values(lang, said):
    at = AppTest.from_file(str(ROOT / "pages/flip.py"), default_timeout=300)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, at.exception
    assert said in texts(at)


@pytest.mark.parametrize(("lang", "labels"), [
    ("es", {"Usar el par: it … tired / wide (codificador)", "Usar el par: tired / wide … luego it (decodificador)"}),
    ("de", {"Paar verwenden: it … tired / wide (Encoder)", "Paar verwenden: tired / wide … dann it (Decoder)"})])
def test_the_pair_buttons_name_the_pairs_in_the_page_language(lang, labels):
    """The examples' pair labels (explorer/examples.py, N_) reach the page, and a homework run of it, translated:
    "Usar el par: it … tired / wide (encoder)" showed an English label inside a Spanish button."""
    at = AppTest.from_file(str(ROOT / "pages/flip.py"), default_timeout=300)
    at.query_params["lang"] = lang
    at.session_state["lang"] = lang
    with i18n.language(lang):
        at.run()
    assert not at.exception, at.exception
    assert labels <= {b.label for b in at.button}
