"""AppTest of "Which words mattered?": the encoder's six rows, agreement and faithfulness against the core's own
numbers, the predict-then-reveal question, the decoder default, and bad input (a text too long for attention flow,
a candidate of several tokens, candidates that share their first token)."""
import numpy as np
import pytest
from pagetest import array, figures, open_page, texts, unfolded

from explorer.attribution import flow
from explorer.attribution.explain import METHODS, explain
from explorer.examples import ANIMAL_TIRED
from explorer.heads_do import knockout
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.ui import cached

ROWS = "Which words mattered, by each method"


def run(**params):
    """The page with what its question folds shown (as after "Show me without predicting")."""
    return unfolded(open_page("pages/explain.py", **params))


def test_encoder_rows_agreement_and_faithfulness_match_the_core():
    at = run(model=EMBEDDED_ENCODER)
    expected = explain(cached.WORKER.get(EMBEDDED_ENCODER), ANIMAL_TIRED)
    assert float(at.metric[0].value) == pytest.approx(expected.score, abs=6e-4)
    figs = figures(at)
    rows = figs[ROWS]["data"][0]
    z = array(rows["z"]).reshape(len(METHODS), -1)
    assert z.shape == (6, len(expected.words)) and np.nanmax(np.abs(z), axis=1) == pytest.approx(np.ones(6))
    assert [t.replace("\\", "") for t in figs[ROWS]["layout"]["xaxis"]["ticktext"]] == expected.words
    assert sum(1 for s in figs[ROWS]["layout"]["shapes"]) == 18          # top 3 outlined in each of 6 rows
    agree = figs["Do they rank the words alike? (Spearman ρ)"]["data"][0]
    assert array(agree["z"]).reshape(6, 6) == pytest.approx(expected.spearman, abs=1e-6)
    moved = figs["Top k words removed: how far the score moves"]["data"][0]
    assert array(moved["z"]).reshape(7, 3) == pytest.approx(expected.moved, abs=1e-6)
    said = texts(at)
    assert "The closest pair is" in said and "Raw attention and integrated gradients" in said
    assert "masking the top words of" in said and "Gap (convergence delta)" in said
    at.slider(key="ex_top").set_value(1).run()                          # one word marked a row: redrawn only
    assert not at.exception and len(figures(at)[ROWS]["layout"]["shapes"]) == 6


def test_question_is_answered_by_the_computation():
    at = open_page("pages/explain.py", model=EMBEDDED_ENCODER)
    assert ROWS not in figures(at)   # the six explanations are folded until the prediction
    e = explain(cached.WORKER.get(EMBEDDED_ENCODER), ANIMAL_TIRED)
    same = e.top("attention", 1) == e.top("ig", 1)
    radio = at.radio(key="explain_top_word_answer")
    radio.set_value(radio.options[0]).run()
    at.button(key="explain_top_word_commit").click().run()
    assert not at.exception
    verdicts = [s.value for s in at.success] + [x.value for x in at.error]
    assert len(verdicts) == 1 and verdicts[0].startswith("Right" if same else "Not quite")
    assert "Last-layer attention's top word is" in texts(at)


def test_text_too_long_for_flow_keeps_the_other_methods(monkeypatch):
    monkeypatch.setattr(flow, "BUDGET", 6 * 8 ** 3)                     # MiniLM: flow up to 8 tokens
    at = run(model=EMBEDDED_ENCODER, text=ANIMAL_TIRED + " It rained.")
    said = texts(at)
    assert "up to 8 tokens" in said and "The other methods are shown without it" in said
    z = array(figures(at)[ROWS]["data"][0]["z"]).reshape(6, -1)
    assert np.isnan(z[METHODS.index("flow")]).all()
    assert np.isfinite(np.delete(z, METHODS.index("flow"), axis=0)).all()


def test_candidate_words_that_are_not_single_tokens():
    at = run(model=EMBEDDED_DECODER, ex_c1="armadillo", ex_c2="street")
    assert "'armadillo' is" in texts(at) and "tokens" in texts(at)      # its first token stands for the word
    at = run(model=EMBEDDED_DECODER, ex_c1="armadillo", ex_c2="armadillos")
    assert "start with the same token" in texts(at) and not figures(at)


@pytest.mark.slow
def test_decoder_default():
    at = run()
    intact = knockout.measure(cached.WORKER.get(EMBEDDED_DECODER), ANIMAL_TIRED)
    assert float(at.metric[0].value) == pytest.approx(intact.score, abs=6e-4)
    assert len(figures(at)) == 3
    assert "ln P(animal) − ln P(street)" in texts(at) and "deleting the top words of" in texts(at)
    assert "keep the first token" in texts(at) and "parks its attention" in texts(at)


def test_empty_text_missing_word_and_markup():
    at = run(model=EMBEDDED_ENCODER, text=" ")
    assert "Type a text to explain." in texts(at) and not figures(at)
    at = run(model=EMBEDDED_ENCODER, ex_c1="giraffe")
    assert "'giraffe' is not a word of" in texts(at) and not figures(at)
    at = run(model=EMBEDDED_ENCODER, text="<script>alert(1)</script> **the animal** saw the street and it ran")
    ticks = figures(at)[ROWS]["layout"]["xaxis"]["ticktext"]
    assert "&lt;" in ticks and "script" in ticks and not at.warning
