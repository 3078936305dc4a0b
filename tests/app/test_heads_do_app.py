"""AppTest of the "What heads do" page on the embedded encoder (and one decoder run): intact numbers, knockouts,
the shared sweep, and bad input. Expected numbers are recomputed here from the same loaded model."""
from functools import partial

import numpy as np
import pytest
from pagetest import array, figures, open_page, texts
from streamlit.testing.v1 import AppTest

from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE
from explorer.heads_do import knockout
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.ui import cached

run = partial(open_page, "pages/heads_do.py")


def metrics(at: AppTest) -> dict[str, float]:
    return {m.label.replace("\\", "").split(":")[0]: float(m.value) for m in at.metric}


def test_intact_values_and_empty_selection():
    at = run()
    intact = knockout.measure_pair(cached.WORKER.get(EMBEDDED_ENCODER), ANIMAL_TIRED, ANIMAL_WIDE)
    shown = metrics(at)
    assert shown["Sentence A"] == pytest.approx(intact.a.score, abs=6e-4)
    assert shown["Shift A − B"] == pytest.approx(intact.shift, abs=6e-4)
    assert "does not get the pair right" in texts(at) and "cos(it, animal)" in at.dataframe[0].value.columns
    assert "No head is knocked out yet" in texts(at)                  # empty selection: a clear message
    assert "Knock heads out" in [h.value for h in at.subheader]


def test_knockout_changes_the_number():
    at = run()
    at.multiselect(key="ko_heads").set_value(["L4H0", "L2H5"]).run()
    assert not at.exception
    with knockout.knockout(cached.WORKER.get(EMBEDDED_ENCODER).model, {4: [0], 2: [5]}):
        knocked = knockout.measure_pair(cached.WORKER.get(EMBEDDED_ENCODER), ANIMAL_TIRED, ANIMAL_WIDE)
    shown = metrics(at)
    assert shown["Sentence A, knocked out"] == pytest.approx(knocked.a.score, abs=6e-4)
    assert shown["Sentence A, knocked out"] != pytest.approx(shown["Sentence A"], abs=1e-3)
    bars = figures(at)[""]["data"]                                     # before/after bars (untitled)
    assert [t["name"] for t in bars] == ["intact", "heads knocked out"]
    dots = figures(at)["Click heads to knock them out"]["data"][2]     # the chosen heads carry a dot
    assert set(zip(array(dots["y"]).astype(int), array(dots["x"]).astype(int))) == {(4, 0), (2, 5)}
    at.radio(key="ablation").set_value("mean").run()                   # mean ablation: another number
    assert not at.exception and metrics(at)["Sentence A, knocked out"] != pytest.approx(knocked.a.score, abs=1e-4)


def test_every_head_knocked_out_and_top_k():
    at = run()
    at.button(key="ko_all").click().run()
    assert not at.exception
    assert np.isfinite(metrics(at)["Sentence A, knocked out"])
    assert "Every head is knocked out" in texts(at) and "Without 72 heads" in texts(at)
    at.number_input(key="ko_k").set_value(2).run()
    at.button(key="ko_top").click().run()
    assert len(at.multiselect(key="ko_heads").value) == 2 and "Without 2 heads" in texts(at)


def test_sweep_is_drawn_with_spearman():
    at = run()
    at.button(key="sweep_run").click().run()
    assert not at.exception
    maps = figures(at)
    effect = array(maps["Knockout effect per head (each head alone)"]["data"][0]["z"])
    assert effect.shape == (6, 12) and np.isfinite(effect).all() and np.abs(effect).max() > 0
    assert array(maps["Attention flip per head"]["data"][0]["z"]).shape == (6, 12)
    assert "Spearman ρ =" in texts(at) and "They need not agree" in texts(at)
    again = run()                                                      # a new session sees the shared result
    assert "Knockout effect per head (each head alone)" in figures(again)


def test_bad_candidates_are_messages():
    at = run(ko_c1="giraffe")
    assert "'giraffe' is not a word" in texts(at)
    at = run(text="The armadillo didn't cross the street because it was too tired.",
             text_b="The armadillo didn't cross the street because it was too wide.", ko_c1="armadillo")
    assert "'armadillo' is 3 tokens" in texts(at)
    at = run(ko_c2=" ")
    assert "Type a query word and two candidate words." in texts(at)


def test_decoder_shows_probabilities_and_reads_the_flip_at_the_prompt():
    at = run(model=EMBEDDED_DECODER)
    table = at.dataframe[0].value
    assert {"P(animal)", "P(street)", "log-odds"} <= set(table.columns)
    assert 0 < table.loc[0, "P(animal)"] < 1
    assert "the last 'the' of the prompt" in texts(at)
    assert "Sentence A" in metrics(at)
