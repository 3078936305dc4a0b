"""explorer.concepts on the embedded encoder, plus the pure helpers the concept labs share (quiz, figures, text)."""
import random

import numpy as np
import pytest

from explorer import maths
from explorer.attention.result import extract
from explorer.labs import real_model
from explorer.labs.notation import format_list, format_weight, format_weights, latex_number
from explorer.labs.quiz import Question, compare_option, nearest_option
from explorer.plots.concepts import cost_figure, labelled_heatmap, path_length_figure, saturation_figure, weights_bars

SENTENCE = "The animal did not cross the street because it was too tired."


# --------------------------------------------------------------------------------- a real head, temperature

def test_temperature_one_is_the_models_own_attention(encoder):
    result = extract(encoder, SENTENCE)
    for layer, head in [(0, 0), (2, 5), (5, 11)]:
        view = real_model.temperature_view(real_model.head_scores(result, layer, head), 1.0)
        np.testing.assert_allclose(view.weights, result.weights[layer, head], atol=1e-5)
        np.testing.assert_allclose(view.weights.sum(-1), 1.0, atol=1e-9)


def test_low_temperature_sharpens_to_one_hot(encoder):
    result = extract(encoder, SENTENCE)
    scores = real_model.head_scores(result, 2, 0)
    views = [real_model.temperature_view(scores, t) for t in (5.0, 1.0, 0.2, 0.01)]
    peaks = [v.mean_max_weight for v in views]
    assert peaks == sorted(peaks)  # sharper as T falls
    assert [v.mean_entropy for v in views] == sorted([v.mean_entropy for v in views], reverse=True)
    assert views[-1].one_hot_rows == len(result.tokens)
    np.testing.assert_array_equal(views[-1].weights.argmax(-1), scores.argmax(-1))


def test_head_scores_errors(encoder):
    result = extract(encoder, "dog bites man")
    with pytest.raises(ValueError, match="outside"):
        real_model.head_scores(result, 6, 0)
    from dataclasses import replace
    with pytest.raises(ValueError, match="no pre-softmax scores"):
        real_model.head_scores(replace(result, score_records=None), 0, 0)


# -------------------------------------------------------------------------------------------- permutation

def test_token_and_position_vectors_come_from_the_tables(encoder):
    ids = real_model.content_token_ids(encoder, "dog bites man")
    assert encoder.tokenizer.convert_ids_to_tokens(ids) == ["dog", "bites", "man"]
    x = real_model.token_vectors(encoder, ids)
    table = encoder.model.embeddings.word_embeddings.weight.detach().numpy()
    np.testing.assert_array_equal(x, table[ids])
    assert x.shape == (3, 384) and x.dtype == np.float32
    pos = real_model.position_vectors(encoder, 3)
    np.testing.assert_array_equal(pos, encoder.model.embeddings.position_embeddings.weight.detach().numpy()[:3])
    with pytest.raises(ValueError, match="512"):
        real_model.position_vectors(encoder, 513)
    with pytest.raises(ValueError, match="no tokens"):
        real_model.content_token_ids(encoder, "")


def test_dog_bites_man_is_man_bites_dog_without_positions(encoder):
    demo = real_model.permutation_demo(encoder, "dog bites man", [2, 1, 0])
    assert demo.tokens == ["dog", "bites", "man"] and demo.shuffled == ["man", "bites", "dog"]
    # the same set of outputs, reordered: float32 rounding only (about 1e-7)
    np.testing.assert_allclose(demo.out_shuffled, demo.out[[2, 1, 0]], atol=1e-6)
    assert demo.gap_plain.max() < 1e-6
    # with positions, and in the real model, every token's output changes
    assert demo.gap_positions.min() > 0.1
    assert demo.gap_model.min() > 0.1
    # the real model with all position ids 0 is blind to order again
    assert demo.gap_model_no_pos.max() < 1e-5
    table = real_model.permutation_table(demo)
    assert list(table["token"]) == ["man", "bites", "dog"]
    assert list(table["moved"]) == ["3 → 1", "2 → 2", "1 → 3"]


def test_identity_order_changes_nothing(encoder):
    demo = real_model.permutation_demo(encoder, "the cat sat on the mat", range(6))
    assert demo.gap_plain.max() == 0 and demo.gap_positions.max() == 0
    assert demo.gap_model.max() < 1e-5


def test_permutation_demo_rejects_a_bad_order(encoder):
    with pytest.raises(ValueError, match="rearrangement"):
        real_model.permutation_demo(encoder, "dog bites man", [0, 0, 1])


# ------------------------------------------------------------------------------------------ tables, text

def test_format_bytes_and_cost_frame():
    assert real_model.format_bytes(150_994_944) == "144 MiB"
    assert real_model.format_bytes(512) == "512 B"
    assert real_model.format_bytes(2.25 * 2 ** 30) == "2.25 GiB"
    frame = real_model.cost_frame([512, 1024])
    assert list(frame["n² per head"]) == [262_144, 1_048_576]
    assert list(frame["weights, 12×12 heads"]) == ["144 MiB", "576 MiB"]
    np.testing.assert_allclose(frame["work: attention ÷ recurrent"], [512 / 768, 1024 / 768])


def test_softmax_rows_frame_prints_the_seeds_rows():
    frame = real_model.softmax_rows_frame()
    assert list(frame["softmax"]) == ["[0.090, 0.245, 0.665]", "[0.0000001, 0.0003, 0.9997]"]
    assert frame["gradient size"][1] < 1e-3 < 0.3 < frame["gradient size"][0]


@pytest.mark.parametrize("p, text", [(0.0900306, "0.090"), (3.3535e-4, "0.0003"), (1.12497e-7, "0.0000001"),
                                     (0.9996645, "0.9997"), (1.0, "1.000"), (0.0, "0.000"), (0.5, "0.500")])
def test_format_weight(p, text):
    assert format_weight(p) == text


def test_number_formatting():
    assert latex_number(2.0) == "2" and latex_number(-0.0) == "0" and latex_number(0.70710678) == "0.707"
    assert latex_number(-1e-9) == "0" and latex_number(-np.inf) == r"-\infty"
    assert format_list([1.0, 0.0, 0.7071]) == "[1, 0, 0.707]"
    assert format_weights(maths.softmax([1.0, 2.0, 3.0])) == "[0.090, 0.245, 0.665]"


# ------------------------------------------------------------------------------------------------- quiz

def test_question_checks_against_the_computed_answer():
    q = Question("2 + 2?", ("3", "4"), "4", "It is 4.")
    assert q.check("4") and not q.check("3") and not q.check(None)
    assert q.fingerprint != Question("2 + 2?", ("3", "4"), "3", "").fingerprint
    with pytest.raises(ValueError, match="not one of the options"):
        Question("?", ("a", "b"), "c", "")


def test_option_helpers():
    assert nearest_option(15.7, {"about 1": 1, "about 16": 16, "about 256": 256}) == "about 16"
    assert nearest_option(4.0, {"2×": 2, "4×": 4, "8×": 8}) == "4×"
    assert compare_option(0.155, 0.198, "larger", "smaller", "same") == "smaller"
    assert compare_option(0.3, 0.2, "larger", "smaller", "same") == "larger"
    assert compare_option(0.2, 0.2 + 1e-12, "larger", "smaller", "same") == "same"


# ----------------------------------------------------------------------------------------------- figures

def test_heatmap_keeps_repeated_tokens_apart_and_query_zero_on_top():
    tokens = ["the", "cat", "saw", "the", "dog"]
    fig = labelled_heatmap(np.eye(5), tokens, tokens)
    assert list(fig.data[0].x) == list(range(5)) and list(fig.data[0].y) == list(range(5))
    assert list(fig.layout.xaxis.ticktext) == tokens and list(fig.layout.yaxis.ticktext) == tokens
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.data[0].text[0][0] == "1.000"  # small matrices are annotated
    assert labelled_heatmap(np.zeros((20, 20)), ["t"] * 20, ["t"] * 20).data[0].text is None


def test_concept_figures_have_data():
    curves = maths.saturation_curves([1, 16, 256], n_queries=50)
    fig = saturation_figure(curves, 16)
    assert len(fig.data) == 8 and all(len(t.y) == 3 for t in fig.data)
    fig = path_length_figure(maths.path_length_matrix(6, "recurrent"), maths.path_length_matrix(6, "attention"),
                             pair=(2, 5))
    assert fig.data[0].z.max() == 5 and fig.data[1].z.max() == 1 and len(fig.layout.shapes) == 2
    fig = cost_figure(maths.cost_table([16, 256, 4096]), d_model=768, selected_n=256)
    assert [len(t.y) for t in fig.data] == [3, 3, 3]
    fig = weights_bars(["a", "b"], {"raw": np.array([0.9, 0.1]), "scaled": np.array([0.6, 0.4])})
    assert len(fig.data) == 2 and list(fig.layout.xaxis.ticktext) == ["a", "b"]


def test_new_order_never_repeats_the_screen_nor_the_sentence():
    rng = random.Random(0)
    items = ["1 · dog", "2 · bites", "3 · man"]
    current = items[::-1]
    for _ in range(200):   # a plain random draw would hit each forbidden order ~1 time in 6
        order = real_model.new_order(items, current, rng)
        assert sorted(order) == sorted(items) and order != current and order != items
        current = order
    assert real_model.new_order(["a", "b"], ["b", "a"], rng) == ["a", "b"]   # two items: the only other order
    assert real_model.new_order(["a", "b"], ["a"], rng) in (["a", "b"], ["b", "a"])   # a partial pick: any order
