"""Knockout, composition and circuits over every earlier → later pair of layers (explorer.learning.circuits), on a
three-layer run whose induction head sits in its last layer and whose partner sits in the middle layer.

The run is built from the ready-made two-layer run's trained weights: its layer 0 becomes layer 1, its layer 1
becomes layer 2, and a new layer 0 writes nothing (its output matrices are 0, so the residual stream passes it
unchanged). The three-layer model then computes exactly what the two-layer one does, so its induction heads are
L2H0/L2H1 and their partner is L1H1 (the two-layer run's L0H1): a partner looked for in layer 0 only, or a
composition computed from layer 0 into layer 1 only, names a head that writes nothing.
"""
import numpy as np
import pytest
import torch

from explorer.learning import circuits, data, runs, train
from explorer.lessons import learning_claims as claims


@pytest.fixture(scope="module")
def shipped():
    return runs.shipped("two-layers")


@pytest.fixture(scope="module")
def three(shipped):
    """(the three-layer run, the two-layer run it was built from)."""
    two = shipped.final_weights()
    cfg = shipped.config.with_(n_layers=3)
    weights = {name: two[name].copy() for name in ("W_E", "W_pos", "W_U")}
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        dead = np.zeros_like(two[name][:1]) if name == "W_O" else np.random.default_rng(1).normal(
            size=two[name][:1].shape).astype(two[name].dtype)
        weights[name] = np.concatenate([dead, two[name]])          # [layer, head, ...]: layer 0 new, then 1, 2
    model = train.model_from(cfg, weights)
    held = data.batch(cfg, train.EVAL_SIZE, data.generator(cfg.seed, 2))
    checkpoint = train.evaluate(model, held, data.probe(cfg), cfg.steps)
    run = train.Run(cfg, probe_tokens=data.probe(cfg).tokens[0].numpy(), checkpoints=[checkpoint],
                    snapshots={cfg.steps: weights})
    return run, shipped


def test_the_dead_layer_changes_nothing(three):
    run, shipped = three
    cfg = run.config
    tokens = data.batch(cfg, 8, data.generator(cfg.seed, 5)).tokens
    with torch.inference_mode():
        three_logits = train.model_from(cfg, run.final_weights())(tokens)
        two_logits = train.model_from(shipped.config, shipped.final_weights())(tokens)
    assert torch.allclose(three_logits, two_logits, atol=1e-4)   # float32 sums in another order, nothing more
    # the layers' scores moved up one layer: layer 2 prefix-matches as layer 1 did
    assert np.allclose(run.checkpoints[0].prefix[1:], shipped.checkpoints[-1].prefix, atol=2e-3)


def test_the_partner_is_found_in_the_middle_layer(three):
    run, _shipped = three
    ko = circuits.knockouts(run.config, run.final_weights(), run.checkpoints[0].prefix)
    assert ko.induction[0][0] == 2 and set(ko.induction) == {(2, 0), (2, 1)}
    assert ko.partner == (1, 1)
    assert np.allclose(ko.single[0], 0.0, atol=1e-5)            # a head that writes nothing costs nothing
    assert ko.single[1, 1] > 1.0 and ko.cost(ko.pair) > ko.cost(ko.together) - 0.05


def test_composition_covers_every_earlier_later_pair(three):
    run, _shipped = three
    comp = circuits.composition(run.config, run.final_weights())
    assert comp.writers == ((0, 0), (0, 1), (1, 0), (1, 1))
    assert comp.readers == ((1, 0), (1, 1), (2, 0), (2, 1))
    assert np.isnan(comp.of((1, 0), (1, 1))) and np.isnan(comp.of((1, 1), (1, 0)))   # same layer: no pair
    assert comp.of((0, 0), (2, 0)) == 0.0                        # the dead layer writes nothing for anyone to read
    assert comp.best_writer((2, 0)) == (1, 1)
    assert comp.best_pair()[0][0] == 1 and comp.best_pair()[1][0] == 2


def test_the_lesson_questions_and_checks_follow_the_layers(three, monkeypatch):
    run, _shipped = three
    monkeypatch.setattr(claims, "run_for", lambda params: run)
    partner = claims.partner_question(run)
    assert partner.options == ("L0H0", "L0H1", "L1H0", "L1H1") and partner.correct == "L1H1"
    assert "earlier layer" in partner.prompt
    head = claims.head_question(run)
    assert head.accepted == ("L2H0", "L2H1")
    agrees, said = claims.pair_agrees(None, {})
    assert agrees and "L1H1" in said
    copies, _ = claims.head_copies(None, {})
    assert copies
    found = circuits.circuits(run.config, run.final_weights(), (2, 0), (1, 1))
    assert found.qk_diagonal >= 0.9 and found.ov_diagonal >= 0.9
