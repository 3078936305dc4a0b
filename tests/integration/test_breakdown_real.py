"""One score taken apart on the two embedded models: for every head of a few layers and every key of the pronoun's
row, the parts add up to the model's own score (to 1e-5 of its size) and our softmax of the row gives the model's
weight (to 1e-5); the encoder's layer-0 split and the decoder's relative-position curve at the pair's own distance
equal that score; the decoder's unrotated vectors are its q_proj and k_proj outputs."""
from __future__ import annotations

import numpy as np
import pytest
from projections import query_key_projections

from explorer.attention.breakdown import breakdown
from explorer.attention.result import extract
from explorer.attention.score_origin import origin
from explorer.examples import ANIMAL_TIRED


def _check_rows(loaded, layers):
    result = extract(loaded, ANIMAL_TIRED)
    query = [i for i, t in enumerate(result.tokens) if t.strip().lower() == "it"][-1]
    kinds = set()
    for layer in layers:
        for head in range(result.facts.n_heads):
            scores = result.head_scores(layer, head)[query]
            for key in range(len(result.keys)):
                b = breakdown(result, layer, head, query, key)
                assert b.gap < 1e-5, (layer, head, key, b.gap)
                if b.masked:
                    continue
                assert abs(b.score - scores[key]) <= 1e-5 * b.size
                where = origin(loaded.model, result, b)
                kinds.add(where.kind)
                if where.split is not None:
                    assert abs(where.split.total - scores[key]) <= 1e-5 * b.size
                    assert abs(sum(where.split.terms.values()) - where.split.total) <= 1e-9 * b.size
                if where.rotary is not None:
                    assert abs(where.rotary.at_own - scores[key]) <= 1e-5 * b.size
    return result, kinds


def test_encoder_scores_split_into_token_and_position(encoder):
    result, kinds = _check_rows(encoder, [0, 3])
    assert kinds == {"learned", "later"}
    b = breakdown(result, 0, 3, 10, 8)
    split = origin(encoder.model, result, b).split
    assert set(split.parts) == {"token·token", "token·position", "position·token", "position·position", "rest"}
    assert len({round(v, 6) for v in split.parts.values()}) == 5   # five different numbers, none a copy


def test_decoder_rotary_curve_and_grouped_heads(decoder):
    result, kinds = _check_rows(decoder, [0, 2, 29])
    assert kinds == {"rope"}
    b = breakdown(result, 2, 4, 8, 0)
    assert (b.n_heads, b.n_kv_heads, b.kv_head) == (9, 3, 1)
    q, k = query_key_projections(decoder, 2, ANIMAL_TIRED, result.facts.d_head)
    r = origin(decoder.model, result, b).rotary
    np.testing.assert_allclose(r.query_before, q[8, 4], atol=1e-4 * np.abs(q[8, 4]).max())
    np.testing.assert_allclose(r.key_before, k[0, 1], atol=1e-4 * np.abs(k[0, 1]).max())
    assert r.before == pytest.approx(float(q[8, 4] @ k[0, 1]) * b.scale, rel=1e-5)
    assert r.own == 8 and len(r.distances) >= 128
