"""The training core (explorer.learning): the config guard, the data, the head measures on hand-built patterns and
matrices, the network's conventions against the maths, determinism, and the ways a run ends early."""
import numpy as np
import pytest
import torch

from explorer import maths
from explorer.learning import circuits, config, data, metrics, runs, train
from explorer.learning.config import ConfigError, TrainConfig
from explorer.learning.network import AttentionOnly
from explorer.words.i18n import language

TINY = TrainConfig(n_layers=2, n_heads=2, d_model=16, vocab=12, context=16, steps=12, batch=4, checkpoint_every=4,
                   repeat_min=3, repeat_max=6)


@pytest.fixture
def one_thread():
    """Runs are bit-for-bit deterministic with one intra-op thread (the training child's setting)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- the config guard ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, word", [
    ({"n_layers": 0}, "Layers"), ({"n_layers": 9}, "Layers"), ({"d_model": 7}, "d_model"),
    ({"n_heads": 3, "d_model": 16}, "split evenly"), ({"context": 16, "repeat_max": 8}, "context"),
    ({"lr": 0.0}, "Learning rate"), ({"lr": -1.0}, "Learning rate"), ({"lr": 5.0}, "Learning rate"),
    ({"lr": float("nan")}, "Learning rate"),
    ({"vocab": 8, "repeat_max": 8, "context": 32}, "vocabulary"), ({"task": "sorting"}, "task"),
    ({"steps": 10**6}, "Training steps"), ({"repeat_min": 9, "repeat_max": 5}, "shortest"),
])
def test_a_config_out_of_range_is_refused_in_one_sentence(changes, word):
    with pytest.raises(ConfigError) as refused, language("en"):
        config.check(TrainConfig().with_(**changes))
    with language("en"):
        text = str(refused.value)
    assert word in text and text.endswith(".") and text.count(". ") == 0


@pytest.mark.parametrize("values", [{"seed": "abc"}, {"lr": "1e400"}, {"layers_of_doom": "1"},
                                    {"n_layers": "<script>alert(1)</script>"}, {"layer_norm": "maybe"}])
def test_link_values_that_are_not_settings_or_numbers_are_refused(values):
    with pytest.raises(ConfigError):
        config.parse(values)


def test_a_refusal_writes_its_numbers_the_readers_way():
    with pytest.raises(ConfigError) as refused:
        config.check(TrainConfig(lr=0.5))
    with language("en"):
        assert "between 1e-05 and 0.1, not 0.5" in str(refused.value)
    with language("de"):
        assert "0,1" in str(refused.value) and "0,5" in str(refused.value)


@pytest.mark.parametrize("lang, said", [("en", "“Seed” must be between 0 and 2,147,483,647, not -1."),
                                        ("de", "„Startwert“ muss zwischen 0 und 2.147.483.647 liegen, nicht -1."),
                                        ("es", "«Semilla» debe estar entre 0 y 2.147.483.647, no -1.")])
def test_a_refusal_names_a_setting_as_the_page_does_and_groups_the_seed_limit(lang, said):
    """Never "n_layers" or "2,14748e+09": the seed's limit grouped by Babel, the setting by the page's label."""
    with pytest.raises(ConfigError) as refused:
        config.check(TrainConfig(seed=-1))
    with language(lang):
        assert str(refused.value).endswith(said)
    with pytest.raises(ConfigError) as refused:
        config.parse({"n_layers": "two"})
    with language("de"):
        assert "„Schichten“" in str(refused.value) and "n_layers" not in str(refused.value)


def test_link_values_are_read_as_numbers():
    cfg = config.parse({"n_layers": "1", "seed": " 7 ", "lr": "0.005", "layer_norm": "true"})
    assert (cfg.n_layers, cfg.seed, cfg.lr, cfg.layer_norm) == (1, 7, 0.005, True)
    assert config.parse({}) == TrainConfig()


# --- the data ------------------------------------------------------------------------------------------------------

def test_the_repeat_is_where_the_batch_says_and_its_place_varies():
    cfg = TrainConfig()
    b = data.batch(cfg, 200, torch.Generator().manual_seed(1))
    assert (b.tokens[:, 0] == data.BOS).all() and (b.tokens[:, 1:] != data.BOS).all()
    for row in range(200):
        f, s, n = int(b.first[row]), int(b.second[row]), int(b.length[row])
        assert cfg.repeat_min <= n <= cfg.repeat_max and f >= 1 and s >= f + n and s + n <= cfg.context
        assert torch.equal(b.tokens[row, f:f + n], b.tokens[row, s:s + n])
    # no fixed position or distance can find the second copy
    assert len(set(b.first.tolist())) > 5 and len(set((b.second - b.first).tolist())) > 10


def test_the_no_repeat_task_draws_the_same_places_but_copies_nothing():
    cfg = TrainConfig(task="no-repeat")
    b = data.batch(cfg, 200, torch.Generator().manual_seed(1))
    same = [torch.equal(b.tokens[r, int(b.first[r]):int(b.first[r] + b.length[r])],
                        b.tokens[r, int(b.second[r]):int(b.second[r] + b.length[r])]) for r in range(200)]
    assert sum(same) == 0


def test_copy_masks_and_prefix_targets_by_hand():
    # BOS, then tokens; first copy [5, 6, 7] at 2, second at 7: the predictions inside a copy after its first token
    tokens = torch.tensor([[0, 3, 5, 6, 7, 4, 9, 5, 6, 7]])
    b = data.Batch(tokens, torch.tensor([2]), torch.tensor([7]), torch.tensor([3]))
    first, second = b.copy_masks()
    assert first[0].nonzero().flatten().tolist() == [2, 3] and second[0].nonzero().flatten().tolist() == [7, 8]
    rows, queries, keys = b.prefix_targets()
    assert queries.tolist() == [7, 8] and keys.tolist() == [3, 4] and rows.tolist() == [0, 0]
    assert all(tokens[0, q] == tokens[0, k - 1] for q, k in zip(queries, keys))   # "after my earlier self"


# --- the measures on hand-built patterns and matrices --------------------------------------------------------------

def test_previous_token_and_prefix_scores_on_hand_built_patterns():
    T = 6
    previous = np.eye(T, k=-1)
    previous[0, 0] = 1.0
    assert metrics.previous_token_score(previous) == pytest.approx(1.0)
    assert metrics.previous_token_score(np.full((T, T), 1 / T)) == pytest.approx(1 / T)
    assert metrics.previous_token_score(np.eye(T)) == pytest.approx(0.0)
    # two half-and-half rows: query 4 puts 0.5 on key 2, query 5 puts 0.25 on key 3 -> mean 0.375
    w = np.zeros((T, T))
    w[4, 2], w[4, 0], w[5, 3], w[5, 0] = 0.5, 0.5, 0.25, 0.75
    assert metrics.prefix_matching_score(w, [4, 5], [2, 3]) == pytest.approx(0.375)
    stacked = np.stack([w, previous])                    # leading axes are kept: [2]
    np.testing.assert_allclose(metrics.prefix_matching_score(stacked, [4, 5], [2, 3]), [0.375, 0.0])


def test_k_composition_on_constructed_matrices():
    d = 4
    e1, e2 = np.eye(d)[:, :1], np.eye(d)[:, 1:2]
    assert metrics.k_composition(e1 @ e1.T, e1 @ e1.T) == pytest.approx(1.0)      # reads exactly what is written
    assert metrics.k_composition(e1 @ e1.T, e2 @ e2.T) == pytest.approx(0.0)      # reads another direction
    assert metrics.k_composition(np.eye(d), np.eye(d)) == pytest.approx(0.5)      # ‖I‖/(‖I‖‖I‖) = 1/√4
    # the key side counts, not the query side: W_QK = e2 e1ᵀ reads keys along e1 and queries along e2
    assert metrics.k_composition(e2 @ e1.T, e1 @ e1.T) == pytest.approx(1.0)
    assert metrics.k_composition(e1 @ e2.T, e1 @ e1.T) == pytest.approx(0.0)


def test_the_aligned_cap_by_hand():
    d = 4
    assert metrics.aligned_k_composition(np.eye(d), np.eye(d)) == pytest.approx(0.5)     # 1/√4: four equal directions
    # singular values (3, 1) and (2, 0): √(3²·2²) / (√10 · 2) = 6 / (2√10)
    w_qk, w_ov = np.diag([1.0, 3.0]), np.array([[0.0, 0.0], [2.0, 0.0]])
    assert metrics.aligned_k_composition(w_qk, w_ov) == pytest.approx(6 / (2 * np.sqrt(10)))
    rng = np.random.default_rng(0)
    for _ in range(20):       # no pair of matrices scores above its cap
        a, b = rng.standard_normal((6, 6)), rng.standard_normal((6, 6))
        assert metrics.k_composition(a, b) <= metrics.aligned_k_composition(a, b) + 1e-12


def test_the_random_baseline_is_about_one_over_root_d_and_seeded():
    b32, b128 = metrics.random_k_composition(32, 16), metrics.random_k_composition(128, 32)
    assert b32 == metrics.random_k_composition(32, 16)
    assert abs(b32 - 1 / np.sqrt(32)) < 0.02 and abs(b128 - 1 / np.sqrt(128)) < 0.01


def test_copying_score_and_diagonal_share_by_hand():
    assert metrics.copying_score(np.eye(5)) == pytest.approx(1.0)
    assert metrics.copying_score(-np.eye(5)) == pytest.approx(-1.0)
    assert metrics.copying_score(np.diag([3.0, -1.0])) == pytest.approx(0.5)        # (3 − 1) / (3 + 1)
    assert metrics.copying_score(np.array([[0.0, 1.0], [1.0, 0.0]])) == pytest.approx(0.0)   # a swap: λ = ±1
    assert metrics.diagonal_share(np.array([[2.0, 1.0], [3.0, 1.0]])) == 0.5


def test_phase_change_is_the_first_step_where_both_hold():
    steps = np.array([0, 10, 20, 30])
    assert metrics.phase_change(steps, [0.1, 0.6, 0.6, 0.7], [3.0, 3.0, 3.0, 3.0], [3.0, 2.0, 1.4, 1.0]) == 20
    assert metrics.phase_change(steps, [0.1, 0.4, 0.4, 0.4], [3.0] * 4, [1.0] * 4) is None


# --- the network's conventions ---------------------------------------------------------------------------------------

def test_the_network_attention_equals_the_maths_and_is_causal():
    model = AttentionOnly(TINY, torch.Generator().manual_seed(3)).eval()
    tokens = data.batch(TINY, 2, torch.Generator().manual_seed(4)).tokens
    with torch.no_grad():
        _logits, patterns = model(tokens, keep_patterns=True)
        x = (model.W_E[tokens] + model.W_pos[:TINY.context]).numpy()
        q = np.einsum("btd,hde->bhte", x, model.W_Q[0].numpy())
        k = np.einsum("btd,hde->bhte", x, model.W_K[0].numpy())
    ours = maths.softmax(np.where(maths.causal_mask(TINY.context), q @ k.swapaxes(-1, -2) / np.sqrt(TINY.d_head),
                                  -np.inf))
    np.testing.assert_allclose(patterns[0].numpy(), ours, atol=1e-5)      # float32 against float64
    assert (np.triu(patterns[1].numpy(), k=1) == 0).all()
    np.testing.assert_allclose(patterns[1].sum(-1).numpy(), 1.0, atol=1e-6)


def test_the_ov_circuit_is_what_one_token_writes():
    """A one-token sequence attends only to itself, so each head writes x W_OV and the logits are
    (x + Σ_heads x W_OV) W_U: the circuits' product convention is the model's."""
    cfg = TINY.with_(n_layers=1)
    model = AttentionOnly(cfg, torch.Generator().manual_seed(5)).eval()
    weights = train.weights_of(model)
    with torch.no_grad():
        logits = model(torch.tensor([[7]]))[0, 0].numpy()
    x = weights["W_E"][7] + weights["W_pos"][0]
    expected = (x + sum(x @ circuits.ov(weights, 0, h) for h in range(cfg.n_heads))) @ weights["W_U"]
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    with torch.no_grad(), model.knocked_out([(0, 0), (0, 1)]):
        np.testing.assert_allclose(model(torch.tensor([[7]]))[0, 0].numpy(), x @ weights["W_U"], atol=1e-5)


def test_a_layer_norm_run_has_no_circuits_but_says_why():
    cfg = TINY.with_(layer_norm=True)
    weights = train.weights_of(AttentionOnly(cfg, torch.Generator().manual_seed(0)))
    with pytest.raises(circuits.NoCircuits, match="LayerNorm"):
        circuits.circuits(cfg, weights, (1, 0), (0, 0))


# --- runs: determinism, saving, early ends -------------------------------------------------------------------------

def test_the_same_seed_gives_the_same_run_bit_for_bit(one_thread):
    a, b = train.train(TINY), train.train(TINY)
    assert runs.same_run(a, b) and [c.step for c in a.checkpoints] == [0, 4, 8, 12]
    for step in a.snapshots:
        assert all(np.array_equal(a.snapshots[step][k], b.snapshots[step][k]) for k in a.snapshots[step])
    assert not runs.same_run(a, train.train(TINY.with_(seed=1)))


def test_a_saved_run_reads_back_the_same(tmp_path, one_thread):
    run = train.train(TINY)
    runs.save(run, tmp_path / "r.npz")
    back = runs.load(tmp_path / "r.npz")
    assert back.config == TINY and runs.same_run(run, back)
    assert set(back.snapshots) == set(runs.kept_snapshots(run))
    assert np.array_equal(back.final_weights()["W_Q"], run.final_weights()["W_Q"])


def test_the_weights_go_through_the_state_dict_and_back_to_the_same_model():
    """weights_of/model_from are the model's own state_dict, each layer's heads stacked: a LayerNorm model comes back
    with the same outputs, and a weight missing or left over is refused rather than silently left at its init."""
    cfg = TINY.with_(layer_norm=True)
    model = AttentionOnly(cfg, torch.Generator().manual_seed(3)).eval()
    weights = train.weights_of(model)
    assert weights["W_Q"].shape == (2, 2, 16, 8) and weights["W_O"].shape == (2, 2, 8, 16)
    assert set(weights) == {"W_E", "W_pos", "W_U", "W_Q", "W_K", "W_V", "W_O",
                            *(f"norms.{i}.{p}" for i in range(3) for p in ("weight", "bias"))}
    tokens = torch.tensor([[1, 5, 7, 5, 7, 2]])
    with torch.inference_mode():
        assert torch.equal(train.model_from(cfg, weights)(tokens), model(tokens))
    with pytest.raises(RuntimeError, match="norms.2.bias"):
        train.model_from(cfg, {k: v for k, v in weights.items() if k != "norms.2.bias"})
    with pytest.raises(RuntimeError, match="Unexpected"):
        train.model_from(TINY, weights)   # a LayerNorm run's weights in a model without norms


def test_a_run_has_one_format_a_file_and_the_pipes_parts_read_alike(tmp_path, one_thread):
    """The npz file and the training child's messages are the same format (runs.to_arrays/from_arrays): the bytes a
    child sends for a run's end are an npz file that runs.load reads, and a run sent as parts reassembles whole."""
    run = train.train(TINY)
    kept = runs.kept_snapshots(run)
    (tmp_path / "sent.npz").write_bytes(runs.dumps(run, kept))
    runs.save(run, tmp_path / "saved.npz")
    sent, saved = runs.load(tmp_path / "sent.npz"), runs.load(tmp_path / "saved.npz")
    assert runs.same_run(sent, run) and runs.same_run(saved, run) and set(sent.snapshots) == set(kept)
    assert all(np.array_equal(sent.snapshots[s][k], saved.snapshots[s][k]) for s in kept for k in run.snapshots[s])
    parts = [runs.loads(runs.dumps(train.Run(TINY, run.probe_tokens, checkpoints=[c]))) for c in run.checkpoints]
    whole = train.Run(TINY, parts[0].probe_tokens, [c for part in parts for c in part.checkpoints])
    assert runs.same_run(whole, run) and whole.probe_tokens.tolist() == run.probe_tokens.tolist()
    with pytest.raises(ValueError):
        runs.loads(b"this is no run")


def test_a_nan_loss_stops_the_run_and_says_so(monkeypatch):
    real = train.next_token_losses
    calls = {"n": 0}

    def poisoned(model, tokens):
        calls["n"] += 1
        losses = real(model, tokens)
        return losses * float("nan") if calls["n"] == 3 else losses

    monkeypatch.setattr(train, "next_token_losses", poisoned)
    run = train.train(TINY)
    assert run.stopped == "nan" and run.checkpoints[-1].step < 3
    assert all(np.isfinite(c.loss) for c in run.checkpoints)


def test_a_run_stops_at_its_time_cap_and_when_cancelled():
    assert train.train(TINY.with_(steps=500), max_seconds=0.0).stopped == "time"
    import threading
    cancel = threading.Event()
    cancel.set()
    run = train.train(TINY.with_(steps=500), cancel=cancel)
    assert run.stopped == "cancelled" and run.checkpoints[-1].step == 1


def test_the_shipped_runs_are_the_configs_they_are_named_for():
    for name, cfg in runs.SHIPPED.items():
        run = runs.shipped(name)
        assert run.config == cfg and runs.shipped_for(cfg) == name
        assert run.checkpoints[-1].step == cfg.steps and run.stopped is None
    assert runs.shipped("two-layers").phase_change() is not None
    assert runs.shipped("one-layer").phase_change() is None


def test_seen_tokens_by_hand():
    """A model whose logits are 0 everywhere gives each of the 11 ordinary tokens p = 1/12 (the start token 1/12
    too): on a second copy its mass on seen tokens is (number seen)/12 and the share (number seen)/11."""
    cfg = TINY.with_(n_layers=1)
    weights = train.weights_of(AttentionOnly(cfg, torch.Generator().manual_seed(0)))
    weights["W_U"] = np.zeros_like(weights["W_U"])
    seen = circuits.seen_tokens(cfg, weights)
    assert seen.mass == pytest.approx(seen.share * 11 / 12, rel=1e-5)
    assert 0 < seen.share < 1
