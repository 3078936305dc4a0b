"""The shipped head atlas against the embedded models: its first windows read again give the stored numbers, and
the heads the lessons name are checked against it."""
import numpy as np
import pytest

from explorer.atlas import head_stats, labels, shipped, survey

# Tolerances, from the maths. The stored weights and a fresh run's may differ per weight by the model's float32
# rounding on another BLAS or thread count; the heatmap page treats a recompute within DELTA as exact. A weight
# measure is a mean over queries of a sum of at most N_KEYS weights, so it moves by at most N_KEYS·DELTA; a mean
# distance weighs each by at most N_KEYS tokens (N_KEYS²·DELTA); an entropy term w·ln w moves by at most
# DELTA·(1 + ln(1/DELTA)) per key. A top-key share can flip only where two keys tie within DELTA: a few tokens.
DELTA, N_KEYS = 1e-5, 256
ATOL = {name: N_KEYS * DELTA for name in head_stats.WEIGHT_MEASURES}
ATOL |= {"distance": N_KEYS ** 2 * DELTA, "entropy": N_KEYS * DELTA * (1 + np.log(1 / DELTA))}


@pytest.mark.parametrize("which", ["encoder", "decoder"])
def test_a_slice_read_again_equals_the_stored_numbers(which, request):
    loaded = request.getfixturevalue(which)
    atlas = shipped.load(loaded.spec.name)
    assert atlas is not None and atlas.problems == []
    texts = [atlas.texts[i] for i in range(survey.SLICE)]
    again = survey.survey(loaded, texts)
    for name, atol in ATOL.items():
        np.testing.assert_allclose(again.means[name], atlas.slice_means[name], atol=atol, rtol=0, err_msg=name)
    n_queries = again.counts["top_previous"].min()
    for name in head_stats.SHARES:
        np.testing.assert_allclose(again.means[name], atlas.slice_means[name], atol=3 / n_queries, err_msg=name)


def test_the_lessons_named_heads_checked_on_the_corpus():
    """The verdict shown beside each name the app gives a head is what the atlas says (and is said in the lesson)."""
    from explorer.model.registry import EMBEDDED_DECODER

    atlas = shipped.load(EMBEDDED_DECODER)
    found = {role: labels.verdict(atlas, (layer, head), role)
             for _where, layer, head, role in labels.named_heads(EMBEDDED_DECODER)}
    assert set(found) == {"previous", "induction"}
    assert found["previous"].agrees and found["previous"].rank == 1
