"""The student's text on a head's map: the corpus map's own PCA reused (the corpus points come back unchanged),
a corpus sentence typed as the text lands on its own points, no overlay on t-SNE, empty and over-long texts."""
import numpy as np
import pytest

from explorer.geometry import maps, overlay, project
from explorer.geometry.corpus_pass import run_pass

SENTENCES = ("the animal didn't cross the street because it was too tired .", "the cat sat on the mat .",
             "a dog bites man", "the dog sat on the mat because it was tired .")


@pytest.fixture(scope="module")
def passes(tiny_corpus_pass):
    return lambda family: tiny_corpus_pass(family, SENTENCES)


def test_fit_pca_then_transform_is_pca():
    x = np.random.default_rng(3).normal(size=(50, 6)) * [5, 3, 1, 1, 0.5, 0.1] + 7
    mean, directions = project.fit_pca(x)
    assert directions.shape == (2, 6)
    np.testing.assert_allclose(directions @ directions.T, np.eye(2), atol=1e-12)    # orthonormal rows
    assert np.array_equal(project.pca_transform(x, (mean, directions)), project.pca(x))


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_the_corpus_through_the_reused_projection_is_its_map(passes, family):
    run = passes(family)
    for layer, head in ((0, 0), (1, 3)):
        hm = maps.head_map(run, layer, head, "pca")
        assert np.array_equal(overlay.place(run, hm), hm.xy)          # bit for bit: the same operations


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_a_corpus_sentence_as_the_text_lands_on_its_own_points(tiny_loaded, passes, family):
    run = passes(family)
    s = 1
    a, b = int(run.starts[s]), int(run.starts[s + 1])
    typed = overlay.text_pass(tiny_loaded(family), SENTENCES[s])
    assert typed.run.tokens == run.tokens[a:b] and not typed.truncated
    for layer, head in ((0, 1), (1, 2)):
        hm = maps.head_map(run, layer, head, "pca")
        xy = overlay.place(typed.run, hm)
        corpus = np.concatenate([hm.xy[a:b], hm.xy[run.n_points + a:run.n_points + b]])
        # Alone or in a padded batch, the model's float32 q and k may differ in their last bits; stored as float16
        # a coordinate then moves by at most one float16 step (2⁻¹⁰ of itself). The alignment multiplies queries
        # by c and keys by 1/c, and projecting on orthonormal directions never lengthens a difference; the output
        # is rounded to float32 (2⁻²⁴ of the largest coordinate, twice).
        q, k = typed.run.head_qk(layer, head)
        step = 2.0 ** -10 * np.concatenate([np.linalg.norm(q, axis=1) * hm.alignment.scale,
                                            np.linalg.norm(k, axis=1) / hm.alignment.scale])
        bound = step + 2 * 2.0 ** -24 * np.abs(hm.xy).max()
        assert (np.linalg.norm(xy - corpus, axis=1) <= bound).all()
        other = overlay.place(overlay.text_pass(tiny_loaded(family), "a dog sat").run, hm)
        assert np.linalg.norm(other[1:3] - corpus[1:3], axis=1).max() > bound.max()   # a different text moves


def test_tsne_maps_get_no_overlay(passes):
    run = passes("bert")
    assert overlay.place(run, maps.head_map(run, 0, 0, "tsne")) is None


def test_empty_text_is_no_overlay_and_a_long_one_is_cut(tiny_loaded):
    loaded = tiny_loaded("bert")
    assert overlay.text_pass(loaded, "") is None and overlay.text_pass(loaded, "  \n ") is None
    limit = overlay.max_tokens(loaded)
    long = overlay.text_pass(loaded, " ".join(["the cat sat on the mat ."] * 20))    # 142 tokens with [CLS] [SEP]
    assert long.truncated and long.n_text_tokens == 142 and long.run.n_points == limit < 142
    hm = maps.head_map(run_pass(loaded, SENTENCES), 0, 0, "pca")
    assert overlay.place(long.run, hm).shape == (2 * limit, 2)


def test_a_map_draws_the_first_tokens_of_a_long_text():
    xy = np.arange(20, dtype=np.float32).reshape(10, 2)                          # 5 queries, then 5 keys
    np.testing.assert_array_equal(overlay.drawn(xy, 2), xy[[0, 1, 5, 6]])
    np.testing.assert_array_equal(overlay.drawn(xy, 9), xy)
