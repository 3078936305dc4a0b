"""Generation with the key/value cache on tiny random Llama and GPT-2 models: the cached rows equal a full
forward's, seeded sampling repeats, top-k / top-p / the draw by hand, the logit lens and the direct effect."""
import numpy as np
import pytest
import torch

from explorer.generation.kvcache import cache_bytes, cache_growth, full_forward
from explorer.generation.readout import direct_effect, logit_lens
from explorer.generation.sampling import Settings, clamp_settings, considered, draw, pick, process, uniforms
from explorer.generation.steps import generate

DECODERS = ["llama", "gpt2"]
PROMPT = "the animal didn't cross the street"
SAMPLED = Settings(new_tokens=10, greedy=False, temperature=1.5, seed=7)


def run(loaded, settings=Settings(new_tokens=6), prompt=PROMPT):
    return generate(loaded, prompt, settings)


# ---------------------------------------------------------------------------------------------- sampling by hand

LOGITS = np.log(np.array([0.1, 0.4, 0.05, 0.3, 0.15]))   # probabilities 0.1 0.4 0.05 0.3 0.15


def test_process_keeps_the_distribution_when_nothing_is_cut():
    assert np.allclose(process(LOGITS), [0.1, 0.4, 0.05, 0.3, 0.15])


def test_top_k_by_hand():
    # the two most likely are tokens 1 (0.4) and 3 (0.3): renormalised 4/7 and 3/7
    assert np.allclose(process(LOGITS, top_k=2), [0, 4 / 7, 0, 3 / 7, 0])
    assert np.allclose(process(LOGITS, top_k=1), [0, 1, 0, 0, 0])


def test_top_p_by_hand():
    # sorted 0.4, 0.3, 0.15, 0.1, 0.05: 0.4 + 0.3 = 0.7 reaches 0.7, so exactly two are kept
    assert np.allclose(process(LOGITS, top_p=0.7), [0, 4 / 7, 0, 3 / 7, 0])
    # 0.71 needs the third (0.85): 0.4, 0.3, 0.15 over 0.85
    assert np.allclose(process(LOGITS, top_p=0.71), [0, 0.4 / 0.85, 0, 0.3 / 0.85, 0.15 / 0.85])
    assert np.allclose(process(LOGITS, top_p=0.01), [0, 1, 0, 0, 0])       # the most likely always stays


def test_temperature_then_top_k():
    p = process(LOGITS, temperature=0.5, top_k=2)                         # squares, then renormalises
    assert np.allclose(p, [0, 0.16 / 0.25, 0, 0.09 / 0.25, 0])


def test_draw_is_inverse_cdf_in_order_of_probability():
    p = np.array([0.1, 0.4, 0.05, 0.3, 0.15])                             # order 1, 3, 4, 0, 2
    assert [draw(p, u) for u in (0.0, 0.39, 0.41, 0.69, 0.71, 0.84, 0.86, 0.94, 0.96, 0.999)] == \
        [1, 1, 3, 3, 4, 4, 0, 0, 2, 2]
    assert draw(np.array([0.0, 0.5, 0.5, 0.0]), 0.9999999) == 2         # never a token of probability 0


def test_pick_greedy_and_sampled():
    assert pick(LOGITS, Settings(), None) == 1
    assert pick(LOGITS, Settings(greedy=False, top_k=2), 0.5) == 1       # 0.5 < 4/7: still the first
    assert pick(LOGITS, Settings(greedy=False, top_k=2), 0.6) == 3       # past 4/7: the second
    assert np.array_equal(uniforms(3, 4), uniforms(3, 4)) and not np.array_equal(uniforms(3, 4), uniforms(4, 4))


def test_considered_before_and_after():
    seen = considered(LOGITS, 1.0, 2, 1.0, n=3)
    assert seen.ids.tolist() == [1, 3, 4] and seen.kept == 2
    assert np.allclose(seen.before, [0.4, 0.3, 0.15]) and np.allclose(seen.after, [4 / 7, 3 / 7, 0])


def test_clamp_settings_notes(monkeypatch):
    monkeypatch.setenv("EXPLORER_MAX_NEW_TOKENS", "40")
    settings, notes = clamp_settings(dict(new_tokens="500", temperature="-3", top_k="x", top_p="2", seed="5",
                                          greedy="sample"))
    assert settings == Settings(new_tokens=40, greedy=False, temperature=0.05, top_k=0, top_p=1.0, seed=5)
    assert len(notes) == 4 and any("40" in n for n in notes)
    assert clamp_settings({}) == (Settings(), [])


# ---------------------------------------------------------------------------------------------- tiny models

@pytest.mark.parametrize("family", DECODERS)
def test_cached_rows_equal_a_full_forward(tiny_loaded, family):
    loaded = tiny_loaded(family)
    gen = run(loaded, Settings(new_tokens=8, greedy=False, seed=1))
    assert gen.steps >= 2
    fed = gen.n_prompt + gen.steps - 1
    full, ms = full_forward(loaded, gen.ids[:fed])
    assert full.shape == gen.weights.shape == (2, 4, fed, fed) and ms > 0
    # float32 attention rows of the same maths in another order: a few float32 epsilons (1.2e-7) apart
    assert np.abs(full - gen.weights).max() <= 1e-5 and gen.fidelity <= 1e-5
    assert np.allclose(gen.weights.sum(-1), 1, atol=1e-5)                   # every fed row sums to 1
    assert not np.triu(gen.weights, 1).any()                                # nothing later is seen
    q = gen.query(gen.steps - 1)
    assert np.array_equal(gen.row(gen.steps - 1, 1, 3), gen.weights[1, 3, q, :q + 1])


@pytest.mark.parametrize("family", DECODERS)
def test_seeded_sampling_is_reproducible(tiny_loaded, family):
    loaded = tiny_loaded(family)
    a, b = run(loaded, SAMPLED), run(loaded, SAMPLED)
    assert a.ids == b.ids and np.array_equal(a.draws, b.draws)
    other = run(loaded, Settings(new_tokens=10, greedy=False, temperature=1.5, seed=8))
    assert other.ids != a.ids                                               # another seed, another text
    for step in range(a.steps):                                             # each token is the draw's pick
        probs = process(a.logits[step], 1.5)
        assert a.picked(step) == draw(probs, a.draws[step])


@pytest.mark.parametrize("family", DECODERS)
def test_logits_and_lens_equal_the_language_model(tiny_loaded, tiny_folder, family):
    from transformers import AutoModelForCausalLM

    loaded = tiny_loaded(family)
    gen = run(loaded)
    lm = AutoModelForCausalLM.from_pretrained(tiny_folder(family), attn_implementation="eager").eval()
    with torch.inference_mode():
        want = lm(torch.tensor([gen.ids[:gen.n_prompt + 2]])).logits[0].numpy()
    tol = 1e-5 * np.abs(want).max()                                         # float32 rounding of a dot product
    for step in range(3):
        assert np.abs(gen.logits[step] - want[gen.query(step)]).max() <= tol
        lens = logit_lens(loaded, gen, step, k=3)
        assert lens.ids.shape == (2, 3)
        assert np.abs(lens.logits_last - want[gen.query(step)]).max() <= tol  # the last layer's lens IS the output
        assert lens.ids[-1, 0] == np.argmax(want[gen.query(step)]) and lens.picked_rank[-1] == 0


@pytest.mark.parametrize("family", DECODERS)
def test_direct_effect_parts_add_up(tiny_loaded, family):
    loaded = tiny_loaded(family)
    gen = run(loaded)
    for step in range(gen.steps):
        effect = direct_effect(loaded, gen, step)
        assert effect.heads.shape == (2, 4) and effect.mlps.shape == (2,)
        assert effect.gap <= 1e-4 * max(1.0, abs(effect.logit))
    other = direct_effect(loaded, gen, 0, token=5)                          # any token's logit decomposes
    assert other.gap <= 1e-4 * max(1.0, abs(other.logit)) and other.logit == gen.logits[0, 5]


def test_direct_effect_counts_the_biases(tiny_loaded):
    """GPT-2's output projections and final LayerNorm have biases (0 at initialisation: made random here)."""
    loaded = tiny_loaded("gpt2")
    model = loaded.model
    biased = [model.ln_f.bias, *(block.attn.c_proj.bias for block in model.h)]
    saved = [b.detach().clone() for b in biased]
    try:
        with torch.no_grad():
            for b in biased:
                b.normal_(0, 0.5)
        gen = run(loaded)
        effect = direct_effect(loaded, gen, 0)
        assert abs(effect.biases) > 1e-3 and effect.gap <= 1e-4 * max(1.0, abs(effect.logit))
    finally:
        with torch.no_grad():
            for b, old in zip(biased, saved):
                b.copy_(old)


def test_direct_effect_of_a_head_is_its_share_through_the_fixed_norm(tiny_loaded):
    """Zeroing one head of the last layer changes the final residual by that head's part plus what the MLP after
    it makes of the change; with the MLP's clean output put back and the norm's scale held fixed, the logit
    moves by exactly the head's direct effect."""
    from explorer.generation import taps
    from explorer.heads_do.knockout import knockout
    from explorer.heads_do.measures import output_embedding

    loaded = tiny_loaded("llama")
    gen = run(loaded)
    effect = direct_effect(loaded, gen, 0)
    with knockout(loaded.model, {1: [2]}):
        knocked = generate(loaded, PROMPT, Settings(new_tokens=1), check=False)
    x = torch.from_numpy(knocked.resid[0, -1] - knocked.mlp[0, -1] + gen.mlp[0, -1])
    norm = taps.final_norm(loaded.model)
    w_u, _ = output_embedding(loaded)
    fixed = (w_u[gen.picked(0)].detach() * norm.weight.detach() * x * effect.scale).sum()
    assert float(fixed) == pytest.approx(effect.total - effect.heads[1, 2], abs=1e-4)


@pytest.mark.parametrize("family", DECODERS)
def test_cache_size_formula_matches_the_real_cache(tiny_loaded, family):
    gen = run(tiny_loaded(family))
    held = gen.n_prompt + gen.steps - 1                                     # the last pick is never fed
    n_kv = 2 if family == "llama" else 4
    assert gen.cache_bytes == cache_bytes(2, n_kv, held, 8, 4) == 2 * n_kv * held * 8 * 2 * 4
    tokens, sizes = cache_growth(gen)
    assert tokens[0] == gen.n_prompt and np.all(np.diff(sizes) == cache_bytes(2, n_kv, 1, 8, 4))


def test_stops_at_end_of_sequence(tiny_loaded):
    loaded = tiny_loaded("llama")
    first = run(loaded).picked(0)
    saved = loaded.model.config.eos_token_id
    loaded.model.config.eos_token_id = first
    try:
        gen = run(loaded)
    finally:
        loaded.model.config.eos_token_id = saved
    assert gen.stopped == "eos" and gen.steps == 1 and gen.weights.shape[-1] == gen.n_prompt
    assert gen.fidelity <= 1e-5


def test_encoder_and_empty_prompt_are_refused(tiny_loaded):
    with pytest.raises(ValueError, match="needs a causal decoder"):
        run(tiny_loaded("bert"))
    with pytest.raises(ValueError, match="empty"):
        run(tiny_loaded("llama"), prompt="")


def test_each_step_goes_through_the_runner(tiny_loaded):
    calls, texts = [], []
    gen = generate(tiny_loaded("llama"), PROMPT, Settings(new_tokens=4), run=lambda fn: calls.append(1) or fn(),
                   on_token=lambda step, text: texts.append(text))
    assert len(calls) == gen.steps + 1                                      # every step, then the full check
    assert len(texts) == gen.steps and texts[-1] == tiny_loaded("llama").tokenizer.decode(gen.ids[gen.n_prompt:])


def test_a_prompt_longer_than_the_context_is_cut(tiny_loaded):
    """The tiny Llama reads 64 positions: a 100-word prompt is cut to 63 tokens and one token is written."""
    gen = run(tiny_loaded("llama"), prompt="the cat sat on the mat " * 17)
    assert gen.truncated and gen.n_prompt == 63 and gen.steps == 1 and gen.stopped in {"context", "eos"}
