"""The ready patching pairs on the embedded models: each one's clean and corrupted metric differ by more than the
documented threshold (measured: ioi +6.12 / −5.49 logits, induction +0.85 / −5.28, factual +6.60 / −7.63,
flip 0.627 / 0.160 attention), and the exact grids keep their invariants on a real model."""
import numpy as np
import pytest

from explorer.patching import MIN_DIFFERENCE, READY, compare, patch, prepare, preview
from explorer.patching.exact import patch_residual


@pytest.fixture(scope="module")
def contrasts(encoder, decoder):
    return {name: prepare(encoder if pair.kind == "encoder" else decoder, pair) for name, pair in READY.items()}


@pytest.mark.parametrize("name", sorted(READY))
def test_ready_pair_is_told_apart(contrasts, name):
    c = contrasts[name]
    assert c.pair.model == c.loaded.spec.name
    assert abs(c.clean - c.corrupted) > MIN_DIFFERENCE[c.kind]
    assert c.clean > c.corrupted        # the clean text's answer (or candidate 0) is the one preferred more


def test_ioi_last_layer_residual_and_preview(contrasts):
    c = contrasts["ioi"]
    every = list(range(c.n_tokens))
    assert patch_residual(c, c.n_layers - 1, every) == pytest.approx(c.clean, abs=1e-4)
    grid = patch(c, "residual")
    # the only differing token is the second name: at layer 0 its column alone is the whole difference; by the last
    # layer most of it has moved to the last position (measured 0.96; the name's column still feeds its keys)
    assert grid.values[0, c.positions[0]] == pytest.approx(1.0, abs=1e-4)
    assert np.all(grid.values[:, : c.positions[0]] == 0.0)
    assert grid.values[-1, -1] > 0.5
    agree = compare(grid, preview(c))
    assert agree.pearson > 0.5          # measured 0.85


def test_flip_every_granularity(contrasts):
    c = contrasts["flip"]
    for g in ("residual", "heads", "patterns"):
        assert np.isfinite(patch(c, g).values).all()
    path = patch(c, "path", receiver=(c.pair.layer, c.pair.head))
    heads = patch(c, "heads")
    assert np.allclose(path.raw[c.pair.layer - 1], heads.raw[c.pair.layer - 1], atol=1e-5)
