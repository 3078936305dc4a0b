"""explorer.heads_do.pairs: knocked-out measures on tiny models agree with effects' own, and the page's small rules."""
import math

import numpy as np
import pandas as pd
import pytest
from tiny import TEXT

from explorer.heads_do import knockout, pairs
from explorer.heads_do.measures import Measure, PairMeasure, make_probe, pair_notes

A, B = TEXT, TEXT.replace("tired", "wide")


def _pair(a_score, b_score, kind="next-token"):
    def m(text, score):
        return Measure(text, kind, ["animal", "street"], {"animal": 0.5, "street": 0.25}, score, text)
    a, b = m("A", a_score), m("B", b_score)
    return PairMeasure(a, b, a_score - b_score, pair_notes(a, b))


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_knocked_pair_matches_effects(tiny_loaded, family):
    loaded = tiny_loaded(family)
    intact = pairs.knocked_pair(loaded, A, B, [])
    assert intact.shift == knockout.measure_pair(loaded, A, B).shift
    with knockout.knockout(loaded.model, {1: [2], 0: [1]}):
        expected = knockout.measure_pair(loaded, A, B)
    got = pairs.knocked_pair(loaded, A, B, [(1, 2), (0, 1)])
    assert got.a.score == pytest.approx(expected.a.score, abs=1e-9)
    assert got.b.score == pytest.approx(expected.b.score, abs=1e-9)
    assert got.shift != pytest.approx(intact.shift)
    # mean ablation of one head equals the sweep's row for that head (same means: both texts' positions)
    sweep = knockout.sweep(loaded, A, B, mode="mean")
    one = pairs.knocked_pair(loaded, A, B, [(1, 3)], mode="mean")
    assert one.a.score == pytest.approx(sweep.score_a[1, 3], abs=1e-5)
    assert one.shift - sweep.base.shift == pytest.approx(sweep.effect[1, 3], abs=1e-5)
    assert knockout.measure_pair(loaded, A, B).shift == intact.shift    # hooks removed afterwards


def test_flip_texts_are_what_the_decoder_measure_reads(tiny_loaded):
    loaded = tiny_loaded("llama")
    ta, tb, query, note = pairs.flip_texts("decoder", A + "  ", B, "it")
    assert ta == make_probe(loaded, A + "  ").prompt and tb == make_probe(loaded, B).prompt
    assert query == "the" and "the last 'the'" in note
    assert pairs.flip_texts("encoder", A, B, "it") == (A, B, "it", "")


def test_measure_table_and_explain():
    wrong = _pair(7.9, 6.5)
    table = pairs.measure_table(wrong)
    assert list(table.columns) == ["sentence", "P(animal)", "P(street)", "log-odds", "prefers"]
    assert list(table["prefers"]) == ["animal", "animal"]
    text = pairs.explain(wrong)
    assert "does not get the pair right" in text and "1.40 further towards 'animal'" in text
    right = _pair(0.2, -0.1, kind="representation")
    assert list(pairs.measure_table(right).columns)[1:4] == ["cos(it, animal)", "cos(it, street)", "difference"]
    assert pairs.explain(right).startswith("The model gets the pair right")


def test_knockout_notes():
    pair = _pair(0.1, 0.1)
    every = [(layer, head) for layer in range(2) for head in range(3)]
    assert pairs.knockout_notes(every[:-1], 2, 3, pair) == []
    (note,) = pairs.knockout_notes(every, 2, 3, pair)
    assert note.startswith("Every head is knocked out")
    assert "not a number" in pairs.knockout_notes([], 2, 3, _pair(float("nan"), 0.0))[0]


def test_top_flips_toggle_grid():
    table = pd.DataFrame({"layer": [0, 0, 1, 1], "head": [0, 1, 0, 1], "flip": [0.1, -0.5, 0.3, 0.2]})
    assert pairs.top_flips(table, 2) == [(1, 0), (1, 1)]
    assert pairs.top_flips(table, 0) == []
    assert pairs.toggle([(0, 1)], (1, 1)) == [(0, 1), (1, 1)]
    assert pairs.toggle([(0, 1), (1, 1)], (0, 1)) == [(1, 1)]
    grid = pairs.head_marks([(1, 0), (5, 5)], 2, 2)
    assert grid.tolist() == [[False, False], [True, False]]


def test_agreement_sentence():
    assert "hardly agree." in pairs.agreement(0.05) and "between the sizes" in pairs.agreement(0.05)
    assert "look more tend, weakly, to matter less" in pairs.agreement(-0.3)
    assert "agree clearly." in pairs.agreement(0.7) and "would read as ρ = −1" in pairs.agreement(0.7)
    assert "constant" in pairs.agreement(math.nan)
    assert "+0.70" in pairs.agreement(0.7)


def test_role_badges_and_stats_with():
    roles = pd.DataFrame({"layer": [0, 0], "head": [0, 1], "previous_token": [0.9, 0.1], "first_token": [0.0, 0.6],
                          "broad": [0.2, 0.1], "duplicate": [0.0, 0.2], "induction": [0.0, 0.9]})
    assert list(pairs.role_badges(roles)) == ["previous token", "induction, first token"]   # 3x, 1.2x the cut
    stats = pd.DataFrame({"layer": [0, 0], "head": [0, 1], "entropy": [1.0, 2.0]})
    sinks = pd.DataFrame({"layer": [0, 0], "head": [0, 1], "sink_weight": [0.8, 0.1], "sink_value": [0.2, 0.1]})
    out = pairs.stats_with(stats, sinks, roles)
    assert list(out.columns) == ["layer", "head", "entropy", "sink by weight", "sink by value size", "role",
                                 "induction", "duplicate"]
    assert out.loc[1, "role"] == "induction, first token" and out.loc[0, "sink by value size"] == 0.2
    assert pairs.stats_with(stats).equals(stats)
    assert np.isnan(pairs.stats_with(stats.assign(head=[0, 7]), sinks).loc[1, "sink by weight"])
