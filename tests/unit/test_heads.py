"""explorer.compare: word choices, flip ranking, head patterns, link parsing and CSV frames, on hand-made tables."""
import math

import numpy as np
import pandas as pd
import pytest

from explorer.attention import analysis, heads


def _flip_table(flip: np.ndarray, flips: np.ndarray) -> pd.DataFrame:
    n_layers, n_heads = flip.shape
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    return pd.DataFrame({"layer": layer.ravel(), "head": head.ravel(), "A:animal": 0.5, "A:street": 0.1,
                         "B:animal": 0.1, "B:street": 0.4, "lean_a": 0.4, "lean_b": -0.3,
                         "flip": flip.ravel(), "flips": flips.ravel()})


def test_word_options_dedupe_case_and_punctuation():
    words = ["The", "animal", "didn", "'", "t", "cross", "the", "street", "because", "it", "was", "too", "tired", "."]
    options = heads.word_options(words)
    assert options[0] == "The" and "the" not in options
    assert "'" not in options and "." not in options
    assert options[-1] == "tired"


def test_pick_and_match_word():
    options = ["The", "animal", "it", "tired"]
    assert heads.match_word(options, "IT") == "it"
    assert heads.match_word(options, "it,") == "it"
    assert heads.match_word(options, "cat") is None
    assert heads.pick_word(options, "cat", "animal") == "animal"
    assert heads.pick_word(options, "cat", "dog") == "tired"
    assert heads.pick_word([], "cat") is None


def test_words_after_position():
    words = ["the", "animal", "it", "tired", "it"]
    word_ids = [-1, 0, 1, 2, 3, 4, -1]
    assert heads.words_after(words, word_ids, 3) == ["tired", "it"]
    assert heads.words_after(words, word_ids, 6) == []


def test_grid_and_best_head_prefers_heads_that_flip():
    flip = np.array([[0.9, 0.1], [0.2, -0.95]])
    flips = np.array([[False, True], [True, False]])
    table = _flip_table(flip, flips)
    assert np.array_equal(heads.grid(table, "flip", 2, 2), flip)
    assert heads.best_head(table) == (1, 0)          # largest flip among flipping heads, not the 0.9
    none = _flip_table(flip, np.zeros_like(flips))
    assert heads.best_head(none) == (1, 1)           # no flipping head: the largest change either way


def test_ranked_flips_names_and_order():
    table = _flip_table(np.array([[0.3, 0.1], [0.2, 0.0]]), np.array([[True, True], [False, False]]))
    ranked, any_flip = heads.ranked_flips(table)
    assert any_flip
    assert list(ranked["flip"]) == [0.3, 0.1]
    assert "A → animal" in ranked.columns and "flips" not in ranked.columns
    ranked, any_flip = heads.ranked_flips(_flip_table(np.array([[0.1, -0.5]]), np.array([[False, False]])))
    assert not any_flip and list(ranked["head"]) == [1, 0]


def test_small_flip_note_only_when_every_flip_is_small():
    assert heads.small_flip_note(_flip_table(np.array([[0.3, -0.01]]), np.array([[True, False]]))) == ""
    note = heads.small_flip_note(_flip_table(np.array([[0.012, -0.02]]), np.array([[True, False]])))
    assert "0.020" in note and "small" in note


def test_max_row_difference():
    a = np.eye(3)
    b = a.copy()
    b[2] = [0.5, 0.5, 0]
    assert heads.max_row_difference(a, b, [0, 1]) == 0.0
    assert heads.max_row_difference(a, b, [2]) == 1.0
    assert math.isnan(heads.max_row_difference(a, np.eye(4), [0]))


def _weights_with_patterns(n: int = 6) -> np.ndarray:
    """Four hand-made heads in one layer: previous-token, sink on position 0, uniform, sharp on self."""
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0
    sink = np.zeros((n, n))
    sink[:, 0] = 1.0
    uniform = np.full((n, n), 1.0 / n)
    sharp = 0.9 * np.eye(n) + 0.1 / n
    return np.stack([prev, sink, uniform, sharp])[None]  # (1, 4, n, n)


def test_patterns_find_each_kind():
    stats = analysis.head_stats(_weights_with_patterns())
    found = {p.name: p for p in heads.patterns(stats, n_tokens=6, special_sinks=False)}
    assert found["previous-token"].heads[0] == (0, 0)
    assert found["attention sink"].heads == [(0, 1)]
    assert found["broad"].heads[0] == (0, 2)
    assert (0, 3) in found["sharp"].heads and (0, 1) not in found["sharp"].heads
    assert "first token" in found["attention sink"].meaning
    assert "[CLS]" in {p.name: p for p in heads.patterns(stats, 6)}["attention sink"].meaning


def test_preselect_distinct_heads():
    stats = analysis.head_stats(_weights_with_patterns())
    chosen = heads.preselect(stats, k=4)
    assert len(chosen) == len(set(chosen)) == 4
    assert chosen == [(0, 0), (0, 1), (0, 3), (0, 2)]  # previous-token, sink, sharp, broad
    assert heads.preselect(stats, k=2) == [(0, 0), (0, 1)]


@pytest.mark.parametrize("raw, expected, n_notes", [
    ("L4H0,L2H3", [(4, 0), (2, 3)], 0),
    ("4.0, 2:3", [(4, 0), (2, 3)], 0),
    ("L9H0", [(5, 0)], 1),                       # clamped to the last layer
    ("L-1H20", [(0, 11)], 1),
    ("banana,L1H1", [(1, 1)], 1),
    ("L1H1,L1H1", [(1, 1)], 0),                  # duplicates once
    ("L0H0,L0H1,L0H2,L0H3,L0H4", [(0, 0), (0, 1), (0, 2), (0, 3)], 1),
    ("", [], 0),
])
def test_parse_heads(raw, expected, n_notes):
    got, notes = heads.parse_heads(raw, n_layers=6, n_heads=12)
    assert got == expected
    assert len(notes) == n_notes


def test_head_id_round_trip():
    assert heads.parse_heads(heads.head_id((3, 7)), 6, 12)[0] == [(3, 7)]


def test_matrix_frame_labels_stay_unique():
    frame = heads.matrix_frame(np.eye(3), ["the", "cat", "the"], ["the", "cat", "the"])
    assert list(frame.index) == ["0:the", "1:cat", "2:the"]
    assert frame.loc["2:the", "2:the"] == 1.0
    csv = frame.to_csv()
    assert csv.splitlines()[0] == "query \\ key,0:the,1:cat,2:the"
