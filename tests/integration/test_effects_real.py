"""Knockout sweeps, value-weighted attention and head roles on the embedded encoder (MiniLM) and decoder
(SmolLM2). Timings are printed (run with -s to see them); their targets are rows S1-S3 of bench/effects.py, not
assertions here. The decoder's whole sweep (270 heads, ~30 s of CPU) is that benchmark's row S2; a sweep agreeing
with single knockouts is tested on every family's tiny model (tests/unit/test_family_matrix.py) and here on MiniLM."""
import time

import numpy as np
import pytest

from explorer.attention.analysis import flip
from explorer.attention.result import extract
from explorer.heads_do import knockout, roles, values

A = "The animal didn't cross the street because it was too tired."
B = "The animal didn't cross the street because it was too wide."


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def test_encoder_sweep_agrees_with_single_knockouts(encoder):
    sweep, wall, cpu = _timed(lambda: knockout.sweep(encoder, A, B))
    print(f"\nencoder zero sweep (72 heads x 2 texts): wall {wall:.2f} s, cpu {cpu:.2f} s; base {sweep.base.notes}")
    assert sweep.effect.shape == (6, 12) and sweep.base.a.kind == "representation"
    layer, head = np.unravel_index(np.abs(sweep.effect).argmax(), sweep.effect.shape)
    with knockout.knockout(encoder.model, {int(layer): [int(head)]}):
        single = knockout.measure_pair(encoder, A, B)
    assert single.shift - sweep.base.shift == pytest.approx(sweep.effect[layer, head], abs=1e-5)
    mean = knockout.sweep(encoder, A, B, mode="mean")
    print(f"strongest zero-ablation head L{layer}H{head}: {sweep.effect[layer, head]:+.4f}; "
          f"mean-ablation corr with zero: {np.corrcoef(mean.effect.ravel(), sweep.effect.ravel())[0, 1]:.2f}")
    table = flip(extract(encoder, A), extract(encoder, B), "it", ["animal", "street"]).table
    rho = knockout.spearman(knockout.flip_map(table), sweep.effect)
    print(f"Spearman(attention flip, knockout effect) on the encoder: {rho:+.3f}")
    assert -1 <= rho <= 1


@pytest.mark.slow   # 270 heads x 2 texts through the 135M decoder: 20-30 s of CPU; the full suite runs it
def test_decoder_knockout_moves_the_next_token_shift(decoder):
    """On SmolLM2 the pair is measured on the next token; knocking out the strongest previous-token head
    (roles.head_roles) changes the shift, which repeats exactly before and after the knockout."""
    base = knockout.measure_pair(decoder, A, B)
    assert base.a.kind == "next-token" and 0 < base.a.values["animal"] < 1
    assert knockout.measure_pair(decoder, A, B).shift == pytest.approx(base.shift, abs=1e-6)   # deterministic
    frame = roles.head_roles(decoder)
    top = frame.sort_values("previous_token", ascending=False).iloc[0]
    layer, head = int(top["layer"]), int(top["head"])
    with knockout.knockout(decoder.model, {layer: [head]}):
        knocked = knockout.measure_pair(decoder, A, B)
    print(f"\ndecoder A {base.a.values}  B {base.b.values}  shift {base.shift:+.3f}; without L{layer}H{head} "
          f"{knocked.shift:+.3f}")
    assert abs(knocked.shift - base.shift) > 1e-4
    assert knockout.measure_pair(decoder, A, B).shift == pytest.approx(base.shift, abs=1e-6)   # restored after


@pytest.mark.parametrize("which", ["encoder", "decoder"])
def test_value_weighted_identity_and_cost(request, which):
    loaded = request.getfixturevalue(which)
    error = values.decomposition_error(loaded, A)
    extract(loaded, A), values.value_weighted(loaded, A)          # warm up
    plain = min(_timed(lambda: extract(loaded, A))[1] for _ in range(3))
    vw_time = min(_timed(lambda: values.value_weighted(loaded, A))[1] for _ in range(3))
    vw = values.value_weighted(loaded, A)
    stats = values.sink_stats(vw)
    print(f"\n{which}: identity error {error:.2e}; extract {plain * 1e3:.1f} ms, value-weighted "
          f"{vw_time * 1e3:.1f} ms (x{vw_time / plain:.2f}); mean sink weight {stats.sink_weight.mean():.2f} "
          f"vs value share {stats.sink_value.mean():.2f}")
    assert error <= 1e-4
    assert np.allclose(vw.normalised.sum(-1), 1, atol=1e-4)
    assert stats.sink_value.mean() < stats.sink_weight.mean()     # sinks take weight but move little


def test_decoder_induction_heads(decoder):
    frame, wall, _ = _timed(lambda: roles.head_roles(decoder))
    top = frame.sort_values("induction", ascending=False).head(5)
    print(f"\nSmolLM2 roles in {wall:.1f} s; top induction heads:\n{top.round(3).to_string(index=False)}")
    print("top previous-token heads:\n" +
          frame.sort_values("previous_token", ascending=False).head(3).round(3).to_string(index=False))
    assert top.induction.iloc[0] > 0.3            # a trained decoder has induction heads (Olsson et al. 2022)
    assert top.layer.min() > 0                    # they need a previous-token head in an earlier layer
    amap = roles.similar_heads(decoder)
    assert len(amap) == 270 and np.isfinite(amap[["x", "y"]].to_numpy()).all()
