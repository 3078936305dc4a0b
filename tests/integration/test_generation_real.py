"""Generation on the embedded SmolLM2: greedy after "The capital of France is" it writes " Paris", the cached
rows equal one full forward's, and the readouts add up on a real 30-layer model."""
import numpy as np

from explorer.generation.readout import direct_effect, logit_lens
from explorer.generation.sampling import Settings
from explorer.generation.steps import generate


def test_greedy_paris(decoder):
    gen = generate(decoder, "The capital of France is", Settings(new_tokens=4))
    assert decoder.tokenizer.decode(gen.ids[gen.n_prompt:gen.n_prompt + 1]) == " Paris"
    assert gen.weights.shape[:2] == (30, 9) and gen.n_kv_heads == 3
    assert gen.fidelity <= 1e-5                                   # cached rows == one full forward's rows
    assert gen.full_ms > 0 and np.all(gen.step_ms > 0)
    effect = direct_effect(decoder, gen, 0)
    assert effect.gap <= 1e-4 * abs(effect.logit)                # float32 sums of ~300 parts of a logit ~17
    lens = logit_lens(decoder, gen, 0)
    assert np.abs(lens.logits_last - gen.logits[0]).max() <= 1e-5 * np.abs(gen.logits[0]).max()
    assert decoder.tokenizer.decode([int(lens.ids[-1, 0])]) == " Paris" and lens.picked_rank[-1] == 0
    assert lens.picked_rank[0] > 100                             # the first block has not found it yet
