"""The six explanations on the embedded models: shapes, the words scored, integrated gradients' completeness,
and the facts the page's text relies on (no timings asserted; bench/attribution.py measures them)."""
import numpy as np
import pytest

from explorer.attribution import lesson
from explorer.attribution.explain import METHODS, explain
from explorer.examples import ANIMAL_TIRED
from explorer.heads_do import knockout

WORDS = ["The", "animal", "didn", "cross", "the", "street", "because", "it", "was", "too", "tired", "."]


def _check(e, loaded):
    assert e.scores.shape == (6, len(e.words)) and np.isfinite(e.scores).all()
    assert [w for w in e.words if w in WORDS] == WORDS                  # the sentence's words, in order
    assert e.score == pytest.approx(knockout.measure(loaded, ANIMAL_TIRED).score, abs=1e-4)
    ig = e.ig                                                            # completeness within the stated delta
    assert ig.scores.sum() - (ig.f_input - ig.f_baseline) == pytest.approx(ig.delta, abs=1e-3)
    assert e.removed.shape == (7, 3) and np.isfinite(e.removed).all()
    for name in ("attention", "rollout", "value"):                      # shares of one row of weights
        row = e.scores[METHODS.index(name)]
        assert (row >= 0).all() and row.sum() <= 1 + 1e-5


def test_encoder(encoder):
    e = explain(encoder, ANIMAL_TIRED)
    _check(e, encoder)
    assert e.removal == "masked" and not e.first_is_sink
    assert e.ig.relative_gap < 0.05            # measured 0.07 %: the blank-text path is smooth on MiniLM


@pytest.mark.slow
def test_decoder(decoder):
    e = explain(decoder, ANIMAL_TIRED)
    _check(e, decoder)
    assert e.removal == "deleted" and e.first_is_sink
    assert e.scores[METHODS.index("ig"), 0] == 0.0                      # kept in the baseline
    assert e.words[e.top("ig", 1)[0]] == "animal"
    assert e.words[e.top("attention", 1)[0]] == "The"                  # the last layer looks at the sink
    assert e.ig.relative_gap < 0.5             # measured 11.5 % at 32 midpoints: shown on the page
    # Lesson 3's question compares the two with the first word left out of both (IG cannot score it): "animal"
    asked = lesson.top_word_question(e)
    assert [e.words[lesson.top_word(e, m)] for m in ("attention", "ig")] == ["animal", "animal"]
    assert asked.correct == lesson.AGREE and "first word left out" in asked.prompt
    assert "**The**" in asked.reveal and "44%" in asked.reveal   # the sink's share, measured 44 %
    said = lesson.agreement_sentence(e)   # the same pair, the same way: ρ +0.32 without the first word (+0.04 with)
    assert "ρ = +0.32, a partial agreement" in said and "compared without the first word, The" in said
