"""The concept labs in German and Spanish: each lab (each tab of the positions lab) opened in English and in the
other language, its question answered, and every text it showed compared: none may stay English (model tokens,
example sentences, model names and the words every language shares aside)."""
import re

import pytest
from labs_helpers import ROOT, TIMEOUT
from pagetest import english_left, page_texts
from streamlit.testing.v1 import AppTest

from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.words import i18n
from explorer.words.glossary import TERMS

SHARED = {"softmax", "token", "tokens", "query", "key", "value", "heatmap", "encoder", "decoder", "embedding", "sin",
          "cos", "max", "rad", "nats", "mib", "ln", "ffn", "relu", "pad", "bert", "base", "rope", "gpu", "float",
          "one", "hot", "original"}
SAME_IN = {"de": {"head", "heads", "text", "tok", "dim", "std", "abw", "self", "attention", "padding", "batch"},
           "es": {"sinusoidal", "feed", "forward", "post", "pre", "norm", "tok", "dim"}}
MODELS = {w for name in (EMBEDDED_ENCODER, EMBEDDED_DECODER) for w in re.findall(r"[^\W\d_]+", name)}
# what other modules write on these pages, translated in their own files: the glossary's words (ui/words.py: the
# sidebar's "Words on this page", the tooltips), the quiz's own controls (ui/predict_first.py), every chart's table
# switch (ui/chart_text.py)
GLOSSARY = tuple(t.meaning for t in TERMS.values())
THEIRS: set[str] = set()   # every shared module is translated now

LABS = [("pages/lab_worked_example.py", {}), ("pages/lab_why_attention.py", {}), ("pages/lab_softmax.py", {}),
        ("pages/lab_permutation.py", {}), ("pages/lab_masks.py", {}), ("pages/lab_block.py", {}),
        *[("pages/lab_positions.py", {"pos_tab": tab}) for tab in
          ("Sinusoidal", "Learned table", "Rotary (RoPE)", "Real heads")]]


def _answered(page: str, lang: str, params: dict) -> AppTest:
    """``page`` in ``lang`` (the link's lang= as app.py reads it, and the session's choice it leads to), with its
    first predict-then-reveal question answered (its first option) so that the reveal shows too."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    at.query_params.update({"lang": lang, **params})
    at.session_state["lang"] = lang
    with i18n.language(lang):   # AppTest calls a widget's format_func here, in the test's thread
        at.run()
        assert not at.exception, at.exception
        asked = [r for r in at.radio if (r.key or "").endswith("_answer")]
        if asked:
            asked[0].set_value(asked[0].options[0]).run()
            next(b for b in at.button if (b.key or "").endswith("_commit")).click().run()
            assert not at.exception, at.exception
    return at


def _typed(at: AppTest) -> set[str]:
    """The words of the example sentences in the page's text boxes: user text, never translated."""
    return {w for box in at.text_input for w in re.findall(r"[^\W\d_]+", str(box.value or ""))}


def _theirs(text: str) -> bool:
    return text in THEIRS or any(meaning in text for meaning in GLOSSARY)


_english: dict[tuple, tuple[list[str], set[str]]] = {}


@pytest.mark.parametrize("lang", ["de", "es"])
@pytest.mark.parametrize(("page", "params"), LABS, ids=[f"{p[6:-3]}{'-' + q['pos_tab'] if q else ''}" for p, q in LABS])
def test_no_english_left(page, params, lang):
    key = (page, tuple(params.items()))
    if key not in _english:
        en = _answered(page, "en", params)
        _english[key] = (page_texts(en), _typed(en))
    texts_en, typed = _english[key]
    texts = page_texts(_answered(page, lang, params))
    assert len(texts) >= len(texts_en) * 0.9, "the page showed much less than in English"
    left = [t for t in english_left(texts_en, texts, SHARED | SAME_IN[lang] | MODELS | typed) if not _theirs(t)]
    assert not left, f"still English on {page} ({lang}): {left}"


def test_positions_tab_keeps_its_english_id_in_the_link():
    """The tabs are labelled in the session's language; the link names the open tab by its English id, so a
    lesson step, a shared link and a following class open the same tab in every language."""
    at = _answered("pages/lab_positions.py", "de", {"pos_tab": "Real heads"})
    tabs = at.get("tab")
    assert [t.label for t in tabs] == ["Sinusförmig", "Gelernte Tabelle", "Rotierend (RoPE)", "Echte Heads"]
    assert any(r.label == "Modell" for r in at.radio)   # the real-heads tab is the one drawn
    assert at.query_params["pos_tab"] == ["Real heads"] or at.query_params["pos_tab"] == "Real heads"
