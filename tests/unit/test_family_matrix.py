"""The family matrix: a tiny random model of every family ``explorer.model.families`` knows, loaded through the
app's own local-folder path, runs every capability. Each one either works, checked by its own invariant, or is
refused with exactly the family's one sentence before any forward pass runs.

Tolerances from the maths: float32 sums of d_model = 32 terms of size ~1 are a few 1e-7 apart; fidelity and the
value decomposition must hold to 1e-5, the direct-effect parts add up to the logit within 1e-4 of its size (the
app's own check), the logits the app computes equal the real language-model head's to 1e-5 of their size.
"""
from __future__ import annotations

import traceback
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
import torch
from family_configs import CONFIGS, VARIANTS, build
from tiny import TEXT

from explorer.model import anatomy, families
from explorer.model.families import CAPABILITIES, Unsupported

A, B = TEXT, TEXT.replace("tired", "wide")
PROMPT = "the cat sat on the"
BANDED = {"mistral": [True, True], "gemma2": [True, False], "gemma3_text": [True, False]}   # sliding-window layers


@pytest.fixture(scope="module")
def family_model(tmp_path_factory):
    from explorer.model.loading import load_model
    made = {}

    def get(family: str):
        if family not in made:
            made[family] = load_model(str(build(family, tmp_path_factory.mktemp(family))), device="cpu")
        return made[family]
    return get


@contextmanager
def app_deprecations():
    """Collect every DeprecationWarning or FutureWarning raised while an ``explorer`` frame is on the stack."""
    caught: list[str] = []

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, (DeprecationWarning, FutureWarning)) and any(
                "/explorer/" in frame.filename for frame in traceback.extract_stack()):
            caught.append(f"{category.__name__} at {filename}:{lineno}: {message}")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield caught


@contextmanager
def forwards(model):
    """Count the model's forward passes inside the block."""
    calls = []
    handle = model.register_forward_pre_hook(lambda *args: calls.append(1))
    try:
        yield calls
    finally:
        handle.remove()


# ---------------------------------------------------------------------------------------------- what works means

def check_attention(loaded, result):
    """Rows sum to 1, a causal model's upper triangle is 0, and a sliding window shows as a band: in some layer
    every key ``window`` or more positions back gets exactly 0 (Mistral: every layer; Gemma 2 and 3 alternate)."""
    for part in {id(p): p for p in [result, *result.parts.values()]}.values():
        np.testing.assert_allclose(part.weights.sum(-1), 1.0, atol=1e-5)
        if part.facts.causal and part.part != "cross":
            assert np.all(np.triu(part.weights, 1) == 0)
    banded_layers = BANDED.get(loaded.model.config.model_type)
    if banded_layers:
        window = loaded.model.config.sliding_window
        outside = np.tril(np.ones(result.weights.shape[-2:], dtype=bool), -window)
        banded = [bool(np.all(w[:, outside] == 0)) for w in result.weights]
        assert banded == banded_layers and not outside.all()


def check_scores(loaded, result):
    for part in {id(p): p for p in [result, *result.parts.values()]}.values():
        assert part.fidelity is not None and part.fidelity.max() <= 1e-5
        assert np.isfinite(part.head_scores(0, 0)).any()


def check_knockout(loaded):
    """Knocking out a head zeroes that head's output and changes nothing upstream of it; the sweep's score for a
    head is the measure with that head knocked out."""
    from explorer.heads_do import knockout
    from explorer.heads_do.measures import make_probe
    model = loaded.model
    layers, projs = anatomy.attention_layers(model)
    last, d_head = len(layers) - 1, None
    probe = make_probe(loaded, A)

    def inputs():
        seen = {}
        handles = [p.register_forward_pre_hook(lambda m, a, i=i: seen.__setitem__(i, a[0].clone()))
                   for i, p in enumerate(projs)]
        with torch.inference_mode():
            model(**probe.inputs, use_cache=False)
        for h in handles:
            h.remove()
        return seen
    clean = inputs()
    with knockout.knockout(model, {last: [1]}):
        knocked = inputs()
    d_head = clean[last].shape[-1] // families.n_heads(model)
    for layer in range(last):
        assert torch.equal(clean[layer], knocked[layer])
    assert torch.all(knocked[last][..., d_head:2 * d_head] == 0)
    assert torch.equal(knocked[last][..., :d_head], clean[last][..., :d_head])
    sweep = knockout.sweep(loaded, A, B)
    assert np.isfinite(sweep.effect).all()
    with knockout.knockout(model, {last: [1]}):
        alone = knockout.measure(loaded, A)
    assert sweep.score_a[last, 1] == pytest.approx(alone.score, abs=1e-5 * max(1.0, abs(alone.score)))


def check_values(loaded):
    from explorer.heads_do import values
    vw = values.value_weighted(loaded, A)
    np.testing.assert_allclose(vw.normalised.sum(-1), 1.0, atol=1e-5)
    assert values.decomposition_error(loaded, A) <= 1e-5


def check_roles(loaded):
    from explorer.heads_do.roles import ROLE_NAMES, head_roles
    frame = head_roles(loaded, texts=(A,), n=6)
    scores = frame[list(ROLE_NAMES)].to_numpy()
    assert np.isfinite(scores).all() and (scores >= -1e-6).all() and (scores <= 1 + 1e-6).all()


def lm_logits(loaded, ids):
    """The real causal-LM class's logits (its own head, scaling and soft cap) for ``ids``."""
    from transformers import AutoModelForCausalLM
    full = AutoModelForCausalLM.from_pretrained(loaded.model.config._name_or_path, dtype=torch.float32,
                                                attn_implementation="eager").eval()
    with torch.inference_mode():
        return full(input_ids=torch.tensor([ids])).logits[0].numpy()


def check_generation(loaded):
    from explorer.generation.sampling import Settings
    from explorer.generation.steps import generate
    gen = generate(loaded, PROMPT, Settings(new_tokens=3))
    assert gen.fidelity <= 1e-5
    real = lm_logits(loaded, gen.ids[:gen.n_prompt + gen.steps - 1])[gen.n_prompt - 1:]
    np.testing.assert_allclose(gen.logits, real, atol=1e-5 * max(1.0, float(np.abs(real).max())))
    return gen


def check_direct_effects(loaded, gen):
    from explorer.generation.readout import direct_effect
    for step in range(gen.steps):
        effect = direct_effect(loaded, gen, step)
        assert effect.logit == gen.logits[step, effect.token]
        assert effect.gap <= 1e-4 * max(1.0, abs(effect.logit))
        assert effect.note == (families.mlp_note(loaded.model) or "")
        assert ("mixtures of experts" in effect.note) == (loaded.model.config.model_type in {"mixtral", "qwen2_moe"})


def check_logit_lens(loaded, gen):
    from explorer.generation.readout import logit_lens
    lens = logit_lens(loaded, gen, 0)
    np.testing.assert_allclose(lens.logits_last, gen.logits[0], atol=1e-5 * max(1.0, np.abs(gen.logits[0]).max()))


def check_explain(loaded):
    from explorer.attribution.explain import METHODS, explain
    found = explain(loaded, A, steps=4)
    for method, row in zip(METHODS, found.scores):
        refused = method == "value" and families.refusal(loaded.model, "values")
        assert np.isnan(row).all() if refused else np.isfinite(row).all(), method
    if families.refusal(loaded.model, "values"):
        assert families.refusal(loaded.model, "values") in found.notes


# ---------------------------------------------------------------------------------------------- what refused means

def entry(loaded, capability, gen=None):
    """A call that starts ``capability``; it must raise the refusal before the model runs."""
    from explorer.attribution.explain import explain
    from explorer.generation.readout import direct_effect, logit_lens
    from explorer.generation.sampling import Settings
    from explorer.generation.steps import generate
    from explorer.heads_do import knockout, values
    from explorer.heads_do.roles import head_roles
    return {"knockout": lambda: knockout.sweep(loaded, A, B), "values": lambda: values.value_weighted(loaded, A),
            "roles": lambda: head_roles(loaded, texts=(A,)), "explain": lambda: explain(loaded, A, steps=4),
            "generation": lambda: generate(loaded, PROMPT, Settings(new_tokens=1)),
            "direct_effects": lambda: direct_effect(loaded, gen, 0), "logit_lens": lambda: logit_lens(loaded, gen, 0),
            }[capability]


def run_family(loaded) -> dict[str, str]:
    """``{capability: "works" or the refusal sentence}``, every capability checked."""
    from explorer.attention.result import extract
    found, gen = {}, None
    result = extract(loaded, A)
    for capability in CAPABILITIES:
        why = families.refusal(loaded.model, capability)
        if why is None:
            if capability in {"attention", "scores"}:
                globals()[f"check_{capability}"](loaded, result)
            elif capability == "generation":
                gen = check_generation(loaded)
            elif capability in {"direct_effects", "logit_lens"}:
                globals()[f"check_{capability}"](loaded, gen)
            else:
                globals()[f"check_{capability}"](loaded)
            found[capability] = "works"
            continue
        assert why.count(". ") == 0 and why.endswith(".") and families.family_of(loaded.model).name in why
        if capability == "scores":
            assert result.fidelity is None and result.scores is None
        elif capability in families.DECODER_ONLY and loaded.kind != "decoder":
            assert "needs a causal decoder" in why
        else:
            with forwards(loaded.model) as calls, pytest.raises(Unsupported) as refused:
                entry(loaded, capability, gen)()
            assert str(refused.value) == why and not calls
        found[capability] = why
    return found


@pytest.mark.parametrize("family", [*sorted(CONFIGS), *VARIANTS])
def test_every_capability_works_or_is_refused_in_one_sentence(family_model, family):
    loaded = family_model(family)
    assert families.family_of(loaded.model).kind == loaded.kind
    with app_deprecations() as caught:
        found = run_family(loaded)
    assert found == {c: families.refusal(loaded.model, c) or "works" for c in CAPABILITIES}
    assert not caught, caught


def test_every_known_family_is_in_the_matrix():
    assert sorted(CONFIGS) == sorted(families.FAMILIES)


def test_an_unknown_family_is_named_with_the_known_ones():
    from types import SimpleNamespace
    with pytest.raises(Unsupported) as err:
        families.family_of(SimpleNamespace(model_type="mamba"))
    assert "'mamba'" in str(err.value) and "gpt_neox" in str(err.value) and "bert" in str(err.value)
    assert families.refusal(SimpleNamespace(model_type="mamba"), "knockout") == str(err.value)
    assert families.refusal(SimpleNamespace(model_type="mamba"), "attention") is None   # the fidelity number
    assert families.refusal(SimpleNamespace(model_type="mamba"), "scores") is None      # says if it is right


def test_docs_models_md_is_what_the_family_module_says():
    from tools.models_table import ROOT, table
    assert (ROOT / "docs" / "models.md").read_text(encoding="utf-8") == table(), \
        "docs/models.md is stale: run .venv/bin/python tools/models_table.py"


def test_the_deprecation_watch_sees_a_warning_under_the_apps_frames():
    """The matrix's watch is live: a DeprecationWarning raised while explorer code runs is caught, one raised
    outside it is not."""
    class Old(torch.nn.Module):
        def __getattr__(self, name):
            warnings.warn(f"{name} is deprecated", DeprecationWarning, stacklevel=2)
            return None
    with app_deprecations() as caught:
        anatomy.get(Old(), "cache")
        warnings.warn("not the app's", DeprecationWarning, stacklevel=1)
    assert len(caught) == 1 and "cache is deprecated" in caught[0]


# ---------------------------------------------------------------------------------------------- one score taken apart

ORIGIN_KINDS = {"learned": {"learned", "later"}, "rope": {"rope"}, "alibi": {"alibi"}, "relative": {"relative"}}


def check_breakdown(loaded, result) -> set[tuple[str, str]]:
    """Every head of every layer (and every part of an encoder-decoder), one query row: the parts add up to the
    model's score to 1e-5 of its size and our softmax gives the model's weight to 1e-5; the origin is the one the
    family states: the layer-0 split adds up to the score, the rotary curve at the pair's own distance is the
    score, ALiBi's bias is slope × key position; a one-head score equals the whole layer's. Returns the
    (part, origin kind) pairs seen."""
    from explorer.attention.breakdown import breakdown
    from explorer.attention.score_origin import CROSS, origin
    kinds, refused = set(), families.origin_refusal(loaded.model)
    for part in {id(p): p for p in [result, *result.parts.values()]}.values():
        query = len(part.tokens) - 2
        all_scores = part.scores
        for layer in range(part.facts.n_layers):
            for head in range(part.facts.n_heads):
                scores = part.head_scores(layer, head)
                np.testing.assert_allclose(scores, all_scores[layer, head], rtol=1e-6, atol=1e-6)
                for key in range(len(part.keys)):
                    b = breakdown(part, layer, head, query, key)
                    assert b.gap <= 1e-5, (layer, head, key, b.gap)
                    if b.masked:
                        assert scores[query, key] == -np.inf and b.weight == 0
                        continue
                    tol = 1e-5 * b.size
                    assert abs(b.score - scores[query, key]) <= tol
                    where = origin(loaded.model, part, b)
                    kinds.add((part.part, where.kind))
                    if where.split is not None:
                        assert abs(where.split.total - scores[query, key]) <= tol
                        assert set(where.split.parts) >= {"token·token", "token·position", "position·token",
                                                          "position·position", "rest"}
                    if where.rotary is not None:
                        assert abs(where.rotary.at_own - scores[query, key]) <= tol
                    if where.alibi is not None:
                        assert abs(where.alibi.bias - where.alibi.expected) <= tol and (key == 0 or b.bias)
                    if where.kind == "relative":
                        assert b.bias and f"{b.bias:+.4f}" in where.sentence
                    if part.part == "cross":
                        assert where.sentence == CROSS
                    if refused:
                        assert (where.kind, where.sentence) == ("none", refused)
        if (part.part, "rope") in kinds:
            check_unrotated(loaded, part)
    return kinds


def check_unrotated(loaded, part):
    """Layer 0 reads each token's own embedding, wherever it stands: turned back with the family's frequencies
    and pairing, the two queries of a word that occurs twice are the same vector (a wrong table, sign or pairing
    of dimensions leaves them apart; the curve at the pair's own distance cannot tell)."""
    from explorer.attention.breakdown import breakdown
    from explorer.attention.score_origin import origin
    ids = part.token_ids
    first = next(i for i, t in enumerate(ids) if ids.count(t) > 1)
    second = ids.index(ids[first], first + 1)
    for head in range(part.facts.n_heads):
        a, b = (origin(loaded.model, part, breakdown(part, 0, head, i, 0)).rotary.query_before
                for i in (first, second))
        np.testing.assert_allclose(a, b, atol=1e-5 * np.abs(a).max())


@pytest.mark.parametrize("family", [*sorted(CONFIGS), *VARIANTS])
def test_every_family_takes_a_score_apart_or_says_why_not(family_model, family):
    from explorer.attention.result import extract
    loaded = family_model(family)
    result = extract(loaded, A)
    assert result.facts.position == families.positions_of(loaded.model)   # what a page says is the table's
    seen = check_breakdown(loaded, result)
    kinds = {kind for _, kind in seen}
    why = families.origin_refusal(loaded.model)
    if why is not None:
        assert kinds == {"none"} and why.count(". ") == 0 and why.endswith(".")
        assert families.family_of(loaded.model).name in why
        return
    expected = set(ORIGIN_KINDS[families.positions_of(loaded.model)])
    if loaded.kind == "encoder-decoder":
        expected.add("none")   # cross attention says why in one sentence
        assert ("cross", "none") in seen and ("cross", "learned") not in seen
        if "learned" in expected:   # BART's decoder makes its own first input: split too
            assert ("decoder", "learned") in seen
    assert kinds == expected, (kinds, expected)


def test_a_falcon_with_alibi_says_alibi_everywhere(family_model):
    """Falcon's table entry is rotary; its config's ``alibi`` (``Family.alibi_flag``) makes it ALiBi, and the
    result's facts read that from ``families.positions_of`` rather than guessing from rotary config fields."""
    from explorer.attention.result import model_facts
    rotary, alibi = family_model("falcon"), family_model("falcon-rw-1b")
    assert (model_facts(rotary).position, model_facts(alibi).position) == ("rope", "alibi")


@pytest.mark.parametrize("family", sorted(CONFIGS))
def test_every_family_reads_its_head_size_and_context_from_the_table(family_model, family):
    """One rule each, in the family table: the head size the capture's queries have, and the context every reader
    cuts at (a text longer than the tiny configs' 64 positions is cut there, before RoBERTa's and MPNet's position
    rows run out, which count on after the padding row; a config that names no limit reads up to the app's own
    maximum)."""
    from explorer.attention.result import MAX_TOKENS, extract
    loaded = family_model(family)
    cfg = loaded.model.config
    result = extract(loaded, " ".join(["the cat sat on the mat"] * 30))
    assert result.facts.d_head == families.d_head(cfg)
    if result.score_records is not None:
        assert result.score_records[0]["q"].shape[-1] == families.d_head(cfg)
    limit = families.position_limit(cfg)
    skipped = cfg.pad_token_id + 1 if family in {"roberta", "xlm-roberta", "mpnet"} else 0   # positions after padding
    assert families.context_length(cfg) == (limit - skipped if limit else 10**9)
    expected = min(MAX_TOKENS, loaded.tokenizer.model_max_length or 10**9, families.context_length(cfg))
    assert len(result.token_ids) == expected and result.truncated
