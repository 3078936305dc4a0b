"""Attribution on cases whose answer is known by hand: a one-layer model where attention and gradient agree by
construction, integrated gradients' completeness, attention flow on a 3-token 2-layer graph, rank correlations,
and faithfulness on a model that reads one token only. Then the whole explanation on tiny random models."""
import threading
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from explorer.attention.analysis import rollout
from explorer.attribution import agreement, faithfulness, flow, gradients
from explorer.attribution.explain import METHODS, explain
from explorer.heads_do.measures import Probe

# ---------------------------------------------------------------------------------------------- a hand-built model


class OneLayer(torch.nn.Module):
    """One attention layer with fixed weights ``a`` from the last position and the value = the embedding: the last
    hidden state is ``Σ_j a_j e_j``. The probe's score reads it along ``u``: f(e) = u · Σ_j a_j e_j, so
    ∂f/∂e_j = a_j u and gradient × input = a_j (u · e_j) = a_j when every u · e_j = 1."""

    def __init__(self, embeddings: torch.Tensor, a: torch.Tensor):
        super().__init__()
        self.embed = torch.nn.Embedding.from_pretrained(embeddings, freeze=False)
        self.a = a

    def get_input_embeddings(self):
        return self.embed

    def forward(self, input_ids=None, inputs_embeds=None, attention_mask=None, use_cache=False):
        e = self.embed(input_ids) if inputs_embeds is None else inputs_embeds          # (B, T, d)
        a = self.a[: e.shape[1]]
        last = torch.einsum("t,btd->bd", a.to(e), e)
        hidden = torch.zeros_like(e)
        hidden[:, -1] = last
        return SimpleNamespace(last_hidden_state=hidden)


def _fake(model, kind="decoder", tokenizer=None):
    return SimpleNamespace(model=model, kind=kind, lock=threading.Lock(), tokenizer=tokenizer,
                           spec=SimpleNamespace(name="hand-built"))


def _probe(ids, u):
    def values_of(hidden):
        s = hidden[:, -1].double() @ u.double()
        return torch.stack([s, torch.zeros_like(s)], dim=1)
    ids = torch.tensor([ids])
    return Probe("t", "t", "next-token", ["x", "y"], {"input_ids": ids, "attention_mask": torch.ones_like(ids)},
                 values_of)


def _one_layer():
    u = torch.tensor([1.0, 0.0, 0.0])
    # four tokens, each with u · e = 1 and different other coordinates
    emb = torch.tensor([[1.0, 0.5, -1.0], [1.0, -2.0, 0.3], [1.0, 0.0, 2.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    a = torch.tensor([0.1, 0.6, 0.05, 0.25])
    return _fake(OneLayer(emb, a)), _probe([0, 1, 2, 3], u), a.numpy()


def test_gradient_x_input_equals_attention_by_construction():
    loaded, probe, a = _one_layer()
    gxi = gradients.gradient_x_input(loaded, probe)
    assert gxi == pytest.approx(a, abs=1e-6)
    rho, tau = agreement.agreement(np.stack([a, gxi]))
    assert rho[0, 1] == pytest.approx(1.0) and tau[0, 1] == pytest.approx(1.0)
    assert agreement.top_k(a, 3) == agreement.top_k(gxi, 3) == [1, 3, 0]


def test_integrated_gradients_of_a_linear_model_are_exact():
    """f is linear in e, so IG is (e − b)·∇f exactly: a_j (u·(e_j − b_j)), summing to f(e) − f(b), delta ~ 0."""
    loaded, probe, a = _one_layer()
    ig = gradients.integrated_gradients(loaded, probe, [0, 1, 2, 3], steps=4, baseline="zero")
    assert ig.scores == pytest.approx(a, abs=1e-6)           # the zero baseline: u · (e_j − 0) = 1
    assert ig.f_input - ig.f_baseline == pytest.approx(1.0, abs=1e-6) and abs(ig.delta) < 1e-6
    blank = gradients.integrated_gradients(loaded, probe, [1, 2], steps=4, baseline="blank")
    assert blank.scores[[0, 3]] == pytest.approx([0, 0])     # tokens not attributed are the same in the baseline


class Cubic(OneLayer):
    """The last hidden state's first coordinate is f(e) = Σ_t w_t s_t³ with s_t = e_t[0] (the probe reads it along
    u = (1, 0, 0)): a score whose gradient changes along the integration path, so every part of the formula shows.

    ∂f/∂e_t = 3 w_t s_t² u, so gradient × input = 3 w_t s_t³ (the gradient alone, summed over dimensions, is
    3 w_t s_t²). Integrated gradients from a baseline b_t (s_b = b_t[0], Δ = s_t − s_b) with n midpoints
    α_k = (k − ½)/n: IG_t = Δ · (1/n) Σ_k 3 w_t (s_b + α_k Δ)², and since (1/n) Σ α_k² = 1/3 − 1/(12 n²) this is
    w_t (s_t³ − s_b³) − w_t Δ³ / (4 n²): exact but for the midpoint rule's error, which the step count sets."""

    def forward(self, input_ids=None, inputs_embeds=None, attention_mask=None, use_cache=False):
        e = self.embed(input_ids) if inputs_embeds is None else inputs_embeds          # (B, T, d)
        hidden = torch.zeros_like(e)
        hidden[:, -1, 0] = (self.a.to(e) * e[..., 0] ** 3).sum(-1)                 # self.a holds the weights w
        return SimpleNamespace(last_hidden_state=hidden)


def _cubic():
    """Tokens 0-3 with s = 2, −1, 0.5, −2 and weights w = 0.5, 1, 2, 0.25; token 4 (the end-of-text, the blank
    baseline) has s = 1. f(input) = 4 − 1 + 0.25 − 2 = 1.25."""
    emb = torch.tensor([[2.0, 0.5, -1.0], [-1.0, 3.0, 0.0], [0.5, 1.0, 1.0], [-2.0, 0.0, 2.0], [1.0, 0.0, 0.0]])
    w = torch.tensor([0.5, 1.0, 2.0, 0.25])
    tokenizer = SimpleNamespace(eos_token_id=4, pad_token_id=None, unk_token_id=None)
    return _fake(Cubic(emb, w), tokenizer=tokenizer), _probe([0, 1, 2, 3], torch.tensor([1.0, 0.0, 0.0]))


# float32 arithmetic on terms of size ≤ 12: a few units of 12 · 2⁻²³ ≈ 1.4e-6
EXACT = 1e-5


def test_gradient_x_input_by_hand_on_a_cubic_score():
    """3 w s³ = 3·0.5·8, 3·1·(−1), 3·2·0.125, 3·0.25·(−8) = 12, −3, 0.75, −6 (the gradient without × input
    would give 6, 3, 1.5, 3; the opposite sign −12, 3, …)."""
    loaded, probe = _cubic()
    assert gradients.gradient_x_input(loaded, probe) == pytest.approx([12.0, -3.0, 0.75, -6.0], abs=EXACT)


def test_integrated_gradients_by_hand_zero_baseline_two_steps():
    """b = 0 (Δ = s): IG_t = w s³ (1 − 1/(4n²)); at n = 2, 15/16 of 4, −1, 0.25, −2 = 3.75, −0.9375, 0.234375,
    −1.875. Their sum 1.171875 falls short of f(e) − f(0) = 1.25 by the delta −0.078125. At n = 4 the factor is
    63/64 (4 → 3.9375), and Gauss–Legendre points would be exact for this cubic (4)."""
    loaded, probe = _cubic()
    ig = gradients.integrated_gradients(loaded, probe, [0, 1, 2, 3], steps=2, baseline="zero")
    assert ig.scores == pytest.approx([3.75, -0.9375, 0.234375, -1.875], abs=EXACT)
    assert (ig.f_input, ig.f_baseline) == pytest.approx((1.25, 0.0), abs=EXACT)
    assert ig.delta == pytest.approx(-0.078125, abs=EXACT) and ig.steps == 2
    four = gradients.integrated_gradients(loaded, probe, [0, 1, 2, 3], steps=4, baseline="zero")
    assert four.scores == pytest.approx(np.array([4.0, -1.0, 0.25, -2.0]) * 63 / 64, abs=EXACT)


def test_integrated_gradients_by_hand_blank_baseline():
    """Tokens 1 and 2 blanked to the end-of-text token (s_b = 1), tokens 0 and 3 kept (score 0). Token 1: Δ = −2,
    midpoints s = 0.5, −0.5, mean gradient 3·1·0.25 = 0.75, IG = −2 · 0.75 = −1.5 (= (−1 − 1) + 8/16). Token 2:
    Δ = −0.5, s = 0.875, 0.625, mean gradient 6·(0.765625 + 0.390625)/2 = 3.46875, IG = −1.734375. f at the
    baseline: 4 + 1 + 2 − 2 = 5; delta = −3.234375 − (1.25 − 5) = 0.515625."""
    loaded, probe = _cubic()
    ig = gradients.integrated_gradients(loaded, probe, [1, 2], steps=2, baseline="blank")
    assert ig.scores == pytest.approx([0.0, -1.5, -1.734375, 0.0], abs=EXACT)
    assert (ig.f_input, ig.f_baseline, ig.delta) == pytest.approx((1.25, 5.0, 0.515625), abs=EXACT)


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_integrated_gradients_completeness_within_the_stated_delta(tiny_loaded, family):
    """On a tiny random model: Σ scores − (f(x) − f(b)) is the delta Captum states (up to float32 rounding of a sum
    of ~20 terms of size ~0.1), and the delta shrinks as steps grow on this smooth path."""
    from tiny import TEXT

    from explorer.heads_do.measures import make_probe
    loaded = tiny_loaded(family)
    probe = make_probe(loaded, TEXT)
    n = probe.inputs["input_ids"].shape[1]
    positions = list(range(1, n - 1)) if family == "bert" else list(range(n - 8))
    coarse = gradients.integrated_gradients(loaded, probe, positions, steps=2)
    fine = gradients.integrated_gradients(loaded, probe, positions, steps=32)
    for ig in (coarse, fine):
        assert ig.scores.sum() - (ig.f_input - ig.f_baseline) == pytest.approx(ig.delta, abs=1e-5)
    assert abs(fine.delta) <= abs(coarse.delta) + 1e-6
    assert fine.f_input == pytest.approx(faithfulness.score(loaded, probe), abs=1e-5)


# ---------------------------------------------------------------------------------------------- attention flow

HAND_A0 = [[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]
HAND_A1 = [[1, 0, 0], [0.5, 0.5, 0], [0.1, 0.1, 0.8]]


def test_flow_on_three_tokens_two_layers_by_hand():
    """Source: token 2 after layer 2; edges to layer 1 carry A1[2] = (0.1, 0.1, 0.8), layer 1 to the input A0.
    Into input 0: 0.1 (via token 0) + min(0.1, 0.5) (via 1) + min(0.8, 0.2) (via 2) = 0.4; into input 1:
    min(0.1, 0.5) + min(0.8, 0.3) = 0.4; into input 2: min(0.8, 0.5) = 0.5. Rollout multiplies instead:
    A1[2] @ A0 = (0.31, 0.29, 0.40)."""
    w = np.array([HAND_A0, HAND_A1])[:, None]               # (layer 2, head 1, 3, 3)
    assert flow.attention_flow(w, [2], residual=0.0) == pytest.approx([0.4, 0.4, 0.5])
    assert rollout(w, residual=0.0)[-1][2] == pytest.approx([0.31, 0.29, 0.40])
    assert flow.attention_flow(w, [0], residual=0.0) == pytest.approx([1.0, 0.0, 0.0])
    assert flow.attention_flow(w, [0, 2], residual=0.0) == pytest.approx([0.7, 0.2, 0.25])


def test_flow_mixes_the_residual_as_rollout_does():
    w = np.array([HAND_A0, HAND_A1])[:, None]
    steps = flow.mixed_layers(w, 0.5)
    assert steps[0] == pytest.approx(rollout(w, 0.5)[0])
    assert steps[1] @ steps[0] == pytest.approx(rollout(w, 0.5)[1])
    # with the residual, input 2 can also reach the top through token 2's own edges: 0.5·0.8 + 0.5 = 0.9 …
    assert flow.attention_flow(w, [2], 0.5)[2] == pytest.approx(min(0.9, 0.75))   # … capped by 0.5·0.5 + 0.5


def test_flow_is_bounded_in_tokens(monkeypatch):
    monkeypatch.setattr(flow, "BUDGET", 2 * 3 ** 3)
    assert flow.max_tokens(2) == 3
    w = np.full((2, 1, 4, 4), 0.25)
    with pytest.raises(ValueError, match="up to 3 tokens"):
        flow.attention_flow(w, [3])


# ---------------------------------------------------------------------------------------------- rank agreement

def test_rank_correlations_by_hand():
    """x = 1 2 3 4, y = 1 3 2 4: one swapped pair. Spearman 1 − 6·Σd²/(n(n²−1)) = 1 − 12/60 = 0.8; Kendall
    (5 concordant − 1 discordant) / 6 = 2/3. With a tie in x (1 1 2 3 vs 1 2 3 4): τ-b = 5 / √(5·6)."""
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    assert agreement.spearman(x, y) == pytest.approx(0.8)
    assert agreement.kendall(x, y) == pytest.approx(2 / 3)
    assert agreement.kendall([1, 1, 2, 3], [1, 2, 3, 4]) == pytest.approx(5 / np.sqrt(30))
    assert agreement.kendall([4, 3, 2, 1], [1, 2, 3, 4]) == pytest.approx(-1.0)
    assert np.isnan(agreement.kendall([1, 1, 1], [1, 2, 3]))


def test_kendall_matches_scipy_on_random_data():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 5, 30).astype(float), rng.normal(size=30)
    assert agreement.kendall(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)


def test_agreement_compares_sizes_and_skips_missing_methods():
    scores = np.array([[1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [np.nan] * 3])
    rho, tau = agreement.agreement(scores)
    assert rho[0, 1] == pytest.approx(1.0) and tau[0, 1] == pytest.approx(1.0)
    assert np.isnan(rho[2]).all() and np.isnan(tau[:, 2]).all()
    assert agreement.top_k([0.1, -0.9, 0.5, np.nan], 3) == [1, 2, 0]
    assert "closest pair is a and b" in agreement.summary(rho, ["a", "b", "c"])


# ---------------------------------------------------------------------------------------------- faithfulness

class OneToken(torch.nn.Module):
    """The score is 2 when token id 7 is in the input and 0 otherwise: the prediction depends on one token only."""

    def forward(self, input_ids=None, attention_mask=None, use_cache=False, **_):
        present = (input_ids == 7).any(dim=1).double() * 2.0                             # (B,)
        hidden = torch.zeros(*input_ids.shape, 1, dtype=torch.float64)
        hidden[:, -1, 0] = present
        return SimpleNamespace(last_hidden_state=hidden)


@pytest.mark.parametrize("kind", ["decoder", "encoder"])
def test_faithfulness_on_a_model_that_reads_one_token(kind):
    loaded = _fake(OneToken(), kind, SimpleNamespace(mask_token_id=0))
    probe = _probe([3, 4, 7, 5, 6], torch.tensor([1.0]))
    words = [[0], [1], [2, 3], [4]]                       # word 2 holds token 7
    right, wrong = [2, 0, 1, 3], [3, 1, 0, 2]
    found = faithfulness.removal_scores(loaded, probe, words, [right, wrong], ks=(1, 2, 3))
    assert faithfulness.score(loaded, probe) == 2.0
    assert found[0].tolist() == [0.0, 0.0, 0.0]            # the right word first: the score falls at k = 1
    assert found[1].tolist() == [2.0, 2.0, 2.0]            # never removed in the top 3: nothing moves


def test_removal_deletes_for_decoders_and_masks_for_encoders():
    inputs = {"input_ids": torch.tensor([[5, 6, 7, 8]]), "attention_mask": torch.ones(1, 4, dtype=torch.long)}
    assert faithfulness.without(inputs, [1, 2], delete=True)["input_ids"].tolist() == [[5, 8]]
    assert faithfulness.without(inputs, [1, 2], delete=True)["attention_mask"].shape == (1, 2)
    assert faithfulness.without(inputs, [1], delete=False, fill=0)["input_ids"].tolist() == [[5, 0, 7, 8]]
    assert inputs["input_ids"].tolist() == [[5, 6, 7, 8]]  # the probe's own inputs are never changed
    a, b = faithfulness.random_orders(6), faithfulness.random_orders(6)
    assert a == b and sorted(a[0]) == list(range(6)) and len(a) == faithfulness.N_RANDOM


# ---------------------------------------------------------------------------------------------- tiny real models

@pytest.mark.parametrize("family", ["llama", "gpt2", "bert"])
def test_explain_on_tiny_models(tiny_loaded, family):
    from tiny import TEXT
    seen = []
    e = explain(tiny_loaded(family), TEXT, steps=4, progress=lambda f, m: seen.append(f))
    n_words = len(e.words)
    assert e.words[:2] == ["the", "animal"] and e.words[-1] == "."
    assert e.scores.shape == (len(METHODS), n_words) and np.isfinite(e.scores).all()
    assert e.spearman.shape == e.kendall.shape == (6, 6) and np.diag(e.spearman) == pytest.approx(np.ones(6))
    assert e.removed.shape == (7, 3) and np.isfinite(e.removed).all()
    assert e.removal == ("masked" if family == "bert" else "deleted")
    assert e.ig.f_input == pytest.approx(e.score, abs=1e-5)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    attention = e.scores[METHODS.index("attention")]
    assert (attention >= 0).all() and attention.sum() <= 1 + 1e-6


def test_explain_without_flow_past_its_bound(tiny_loaded, monkeypatch):
    from tiny import TEXT
    monkeypatch.setattr(flow, "BUDGET", 2 * 5 ** 3)
    e = explain(tiny_loaded("llama"), TEXT, steps=2)
    assert np.isnan(e.scores[METHODS.index("flow")]).all()
    assert any("up to 5 tokens" in note for note in e.notes)
    assert np.isfinite(e.scores[METHODS.index("ig")]).all() and np.isnan(e.removed[METHODS.index("flow")]).all()
    assert np.isfinite(e.removed[-1]).all()


def test_blank_token_is_never_a_zero_embedding(tiny_loaded):
    """The tiny Llama has no end-of-text token and its pad row is zeros (padding index): the blank is [UNK]."""
    loaded = tiny_loaded("llama")
    blank = gradients.blank_token(loaded)
    assert blank == loaded.tokenizer.unk_token_id
    assert loaded.model.get_input_embeddings().weight[loaded.tokenizer.pad_token_id].abs().sum() == 0


def test_explain_refuses_a_text_past_its_bound(tiny_loaded, monkeypatch):
    from explorer.attribution import explain as module
    monkeypatch.setattr(module, "MAX_TOKENS", 5)
    with pytest.raises(ValueError, match="up to 5 tokens"):
        explain(tiny_loaded("llama"), "the animal didn't cross the street because it was too tired .")
    with pytest.raises(ValueError, match="empty"):
        explain(tiny_loaded("llama"), "  ")
