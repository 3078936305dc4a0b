"""explorer.patching on tiny random models of each supported family: the exact grids' invariants, hooked patches
against patches written by hand, path patching where it must equal head patching, hooks gone after a failed run,
a hand-computed example of the normalisation and the attribution formula, and every refusal."""
import dataclasses
import sys

import numpy as np
import pytest
import torch
from tiny import TEXT, build

from explorer.model.loading import load_model
from explorer.patching import MAX_TOKENS, MinimalPair, Refused, compare, patch, prepare, preview, top
from explorer.patching.attribution import estimate
from explorer.patching.contrast import Contrast
from explorer.patching.exact import patch_residual
from explorer.patching.grids import Patched
from explorer.patching.path import receiver_inputs
from explorer.words.i18n import language

WIDE = TEXT.replace("tired", "wide")
DECODER = MinimalPair("the dog bites the man", "the cat bites the man", answer="man", wrong="dog")
ENCODER = MinimalPair(TEXT, WIDE, layer=1, head=2, query="it", candidates=("animal", "street"))
FAMILIES = {"llama": DECODER, "gpt2": DECODER, "bert": ENCODER}
EXACT = 1e-5   # float32 sums reordered by a batch of another size: a few ulps of metrics of order 1


@pytest.fixture(scope="module")
def contrasts(tiny_loaded):
    made = {}

    def get(family):
        if family not in made:
            made[family] = prepare(tiny_loaded(family), FAMILIES[family], least=0.0)
        return made[family]
    return get


def _metric_by_hand(c: Contrast, text: str, pre=(), block_pre=()) -> float:
    """The metric of one plain forward pass of the whole model (no resuming, no batch, every token, no cache), with
    forward pre-hooks (``block_pre``: with keyword arguments)."""
    model = c.loaded.model
    handles = [m.register_forward_pre_hook(fn) for m, fn in pre]
    handles += [m.register_forward_pre_hook(fn, with_kwargs=True) for m, fn in block_pre]
    try:
        with torch.inference_mode():
            out = model(**c.runs[text].inputs, use_cache=False, output_attentions=c.kind == "encoder")
    finally:
        for h in handles:
            h.remove()
    if c.kind == "encoder":
        rows = out.attentions[c.pair.layer][0, c.pair.head][c.query_rows].mean(0).double()
        a, b = c.candidate_rows
        return float(rows[a].sum() - rows[b].sum())
    from explorer.heads_do.measures import output_embedding
    weight, _bias = output_embedding(c.loaded)
    weight = weight.detach()
    last = out.last_hidden_state[0, -1].double()
    return float(last @ weight[c.answer_ids[0]].double() - last @ weight[c.answer_ids[1]].double())


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_whole_layer_gives_the_other_text_nothing_gives_the_run(contrasts, family):
    c = contrasts(family)
    everywhere = list(range(c.n_tokens))
    for layer in range(c.n_layers):
        assert patch_residual(c, layer, everywhere) == pytest.approx(c.clean, abs=EXACT)
        assert patch_residual(c, layer, everywhere, "clean", "corrupted") == pytest.approx(c.corrupted, abs=EXACT)
        assert patch_residual(c, layer, []) == pytest.approx(c.corrupted, abs=EXACT)
        assert patch_residual(c, layer, everywhere, "corrupted", "corrupted") == pytest.approx(c.corrupted, abs=EXACT)
    assert _metric_by_hand(c, "clean") == pytest.approx(c.clean, abs=EXACT)
    assert _metric_by_hand(c, "corrupted") == pytest.approx(c.corrupted, abs=EXACT)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_grids_read_zero_where_nothing_differs(contrasts, family):
    c = contrasts(family)
    for direction, unpatched in (("denoise", 0.0), ("noise", 1.0)):
        grid = patch(c, "residual", direction)
        assert grid.values.shape == (c.n_layers, c.n_tokens) and grid.unpatched == unpatched
        same = [p for p in range(c.n_tokens) if p not in c.positions]
        if c.kind == "decoder":   # a causal decoder's positions before the first difference are the same
            before = [p for p in same if p < min(c.positions)]
            assert np.all(grid.values[:, before] == unpatched)
        # layer 0's input is the embedding: a position whose token is the same has the same input
        assert np.all(grid.values[0, same] == unpatched)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("direction", ["denoise", "noise"])
def test_head_patches_equal_patches_written_by_hand(contrasts, family, direction):
    c = contrasts(family)
    base, source = ("corrupted", "clean") if direction == "denoise" else ("clean", "corrupted")
    heads, at = patch(c, "heads", direction), patch(c, "heads_at", direction, position=c.positions[0])
    patterns = patch(c, "patterns", direction)
    d = c.parts.d_head
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            cols = slice(head * d, (head + 1) * d)
            theirs = c.runs[source].z[layer]

            def by_hand(module, args, cols=cols, theirs=theirs, position=None):
                x = args[0].clone()
                if position is None:
                    x[..., cols] = theirs[..., cols]
                else:
                    x[:, position, cols] = theirs[:, position, cols]
                return (x, *args[1:])
            proj = c.parts.out_projs[layer]
            moves = not (c.kind == "encoder" and layer >= c.pair.layer)   # after its weights: cannot move them
            want = _metric_by_hand(c, base, [(proj, by_hand)]) if moves else c.runs[base].metric
            assert heads.raw[layer, head] == pytest.approx(want, abs=EXACT)
            want_at = _metric_by_hand(c, base, [(proj, lambda m, a, f=by_hand: f(m, a, position=c.positions[0]))]) \
                if moves else c.runs[base].metric
            assert at.raw[layer, head] == pytest.approx(want_at, abs=EXACT)
        # the pattern patch: this run's values weighted by the other text's pattern is what its heads output
        group = c.n_heads // c.parts.n_kv
        a, v = c.runs[base].patterns[layer][0], c.runs[base].v[layer][0]
        z = torch.stack([a[h] @ v[:, h // group] for h in range(c.n_heads)], dim=1).flatten(1)
        assert torch.allclose(z, c.runs[base].z[layer][0], atol=1e-6)
    assert np.isfinite(patterns.raw).all()
    if c.kind == "encoder":   # the metric's own head takes the other text's weights: the other text's metric
        assert patterns.raw[c.pair.layer, c.pair.head] == c.runs[source].metric


# the first token differs (every position is run) and a later one too; 4 blocks, so rows join the batch at several
# blocks and earlier blocks are replayed from a later token on
FIRST = MinimalPair("dog sat on the mat because it was tired", "cat sat on a mat because it was tired",
                    answer="mat", wrong="dog")


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    made = {}

    def get(family, pair):
        if (family, pair.clean) not in made:
            loaded = load_model(str(build(family, tmp_path_factory.mktemp(f"deep-{family}"), layers=4)), device="cpu")
            made[family, pair.clean] = prepare(loaded, pair, least=0.0)
        return made[family, pair.clean]
    return get


def _put_at(position: int, theirs: torch.Tensor):
    """A block pre-hook by hand: the block's input at ``position`` becomes ``theirs`` (``(1, T, d)``)."""
    def hook(module, args, kwargs):
        x = (args[0] if args else kwargs["hidden_states"]).clone()
        x[:, position] = theirs[:, position]
        return ((x, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": x})
    return hook


@pytest.mark.parametrize("family", ["llama", "gpt2"])
@pytest.mark.parametrize("pair", [FIRST, DECODER], ids=["first-token", "second-token"])
def test_decoder_grids_from_the_patched_token_equal_full_runs(deep, family, pair):
    """A causal decoder's rows run only the tokens from their patch on, on the cached keys and values of the earlier
    ones: every cell equals one plain forward pass of every token with the patch. Wrong position ids (rotary in
    llama, the learned table in gpt2), a cache of the wrong text or length, or a row joining at the wrong block
    would each move cells by far more than float rounding."""
    c = deep(family, pair)
    assert c.can_skip()
    for direction, (base, source) in (("denoise", ("corrupted", "clean")), ("noise", ("clean", "corrupted"))):
        grid = patch(c, "residual", direction)
        assert grid.runs == c.n_tokens - min(c.positions)          # one batch a position from the first difference
        for layer in range(c.n_layers):
            theirs = c.runs[source].resid[layer]
            for p in range(c.n_tokens):
                want = _metric_by_hand(c, base, block_pre=[(c.parts.layers[layer], _put_at(p, theirs))])
                assert grid.raw[layer, p] == pytest.approx(want, abs=EXACT), (direction, layer, p)
        later = c.positions[-1]                                     # heads at a later token: runs start there
        at, heads = patch(c, "heads_at", direction, position=later), patch(c, "heads", direction)
        patterns = patch(c, "patterns", direction)                  # starts where the weights first differ
        d, group = c.parts.d_head, c.n_heads // c.parts.n_kv
        for layer in range(c.n_layers):
            for head in range(c.n_heads):
                cols, theirs = slice(head * d, (head + 1) * d), c.runs[source].z[layer]

                def by_hand(module, args, cols=cols, theirs=theirs, rows=slice(None)):
                    x = args[0].clone()
                    x[:, rows, cols] = theirs[:, rows, cols]
                    return (x, *args[1:])
                proj = c.parts.out_projs[layer]
                assert heads.raw[layer, head] == pytest.approx(_metric_by_hand(c, base, [(proj, by_hand)]), abs=EXACT)
                at_hand = _metric_by_hand(c, base, [(proj, lambda m, a, f=by_hand, at=later: f(m, a, rows=at))])
                assert at.raw[layer, head] == pytest.approx(at_hand, abs=EXACT)
                weighted = c.runs[base].z[layer].clone()           # the other text's weights on this run's values
                a, v = c.runs[source].patterns[layer][0, head], c.runs[base].v[layer][0, :, head // group]
                weighted[0, :, cols] = a @ v
                pattern_hand = _metric_by_hand(c, base, [(proj, lambda m, a, f=by_hand, w=weighted: f(m, a, theirs=w))])
                assert patterns.raw[layer, head] == pytest.approx(pattern_hand, abs=EXACT)


def test_path_into_the_next_layer_equals_head_patching_on_an_encoder(contrasts):
    """The case where they must agree: the metric is the receiver's own attention (an encoder pair whose head is
    the receiver), and the senders sit in the layer just before it. Nothing lies between sender and receiver to
    freeze, and the metric reads only the receiver's queries and keys, so patching the sender's path into the
    receiver's q, k and v is patching the sender's output. Senders further back differ (heads between are frozen).
    """
    c = contrasts("bert")
    layer = c.pair.layer
    for direction in ("denoise", "noise"):
        path = patch(c, "path", direction, receiver=(layer, c.pair.head), via="qkv")
        heads = patch(c, "heads", direction)
        assert np.allclose(path.raw[layer - 1], heads.raw[layer - 1], atol=EXACT)
        assert np.all(path.raw[layer:] == c.runs[path_base(direction)].metric)


def path_base(direction):
    return "corrupted" if direction == "denoise" else "clean"


def test_path_run_one_keeps_what_a_plain_head_patch_feeds_the_receiver(contrasts):
    """On a decoder: run 1 of path patching, for a sender in the layer before the receiver, keeps the receiver's
    queries, keys and values that a plain patch of that sender (by hand) gives it."""
    c = contrasts("llama")
    layer, head = 1, 3
    d, group = c.parts.d_head, c.n_heads // c.parts.n_kv
    with torch.inference_mode():
        kept = receiver_inputs(c, "corrupted", "clean", 0, list(range(c.n_heads)), (layer, head))
    for sender in range(c.n_heads):
        cols = slice(sender * d, (sender + 1) * d)

        def by_hand(module, args, cols=cols):
            x = args[0].clone()
            x[..., cols] = c.runs["clean"].z[0][..., cols]
            return (x, *args[1:])
        seen = {}
        handles = [p.register_forward_hook(lambda m, a, o, i=i, seen=seen: seen.__setitem__(i, o))
                   for i, p in enumerate(c.parts.qkv[layer])]
        try:
            _metric_by_hand(c, "corrupted", [(c.parts.out_projs[0], by_hand)])
        finally:
            for h in handles:
                h.remove()
        own = [slice(head * d, (head + 1) * d)] + [slice((head // group) * d, (head // group + 1) * d)] * 2
        for part in range(3):
            assert torch.allclose(kept[part][sender], seen[part][0][..., own[part]], atol=1e-6)


def _no_hooks(model) -> bool:
    return all(not m._forward_hooks and not m._forward_pre_hooks and "forward" not in vars(m)
               for m in model.modules())


@pytest.mark.parametrize("granularity", ["residual", "heads", "patterns", "path"])
def test_hooks_removed_when_a_run_fails_half_way(tiny_loaded, tiny_folder, contrasts, granularity):
    c = contrasts("llama")
    model = c.loaded.model
    before = {id(m): (len(m._forward_hooks), len(m._forward_pre_hooks)) for m in model.modules()}

    class Stop(Exception):
        pass

    def stop(done, total):
        if done == 1:
            raise Stop
    with pytest.raises(Stop):
        patch(c, granularity, receiver=(1, 0), progress=stop)
    assert {id(m): (len(m._forward_hooks), len(m._forward_pre_hooks)) for m in model.modules()} == before
    assert all("forward" not in vars(layer) for layer in c.parts.layers)      # no block left replayed
    fresh = load_model(str(tiny_folder("llama")), device="cpu")
    inputs = c.runs["clean"].inputs
    with torch.inference_mode():
        ours = model(**inputs, use_cache=False).last_hidden_state
        theirs = fresh.model(**inputs, use_cache=False).last_hidden_state
    assert torch.equal(ours, theirs)


def test_normalisation_and_attribution_by_hand():
    """clean 2, corrupted −2; two positions, d_model 2. Position 0: delta (1, 2), grad (0.5, −1):
    1·0.5 + 2·(−1) = −1.5. Position 1: delta (0, −1), grad (2, 3): 0·2 + (−1)·3 = −3. Run on the corrupted text
    (−2): estimated metrics −3.5 and −5, normalised (x + 2) / 4: −0.375 and −0.75."""
    delta = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    grad = torch.tensor([[0.5, -1.0], [2.0, 3.0]])
    change = estimate(delta, grad)
    assert change.tolist() == [-1.5, -3.0]
    c = Contrast.__new__(Contrast)
    c.clean, c.corrupted = 2.0, -2.0
    assert c.normalise(-2.0 + change.numpy()).tolist() == [-0.375, -0.75]
    assert c.normalise([2.0, -2.0, 0.0, 4.0]).tolist() == [1.0, 0.0, 0.5, 1.5]
    grid = Patched("residual", "noise", np.array([[1.0, 0.25]]), np.array([[2.0, -1.0]]), ["0"], ["0 a", "1 b"],
                   ("layer", "position"), 2.0, -2.0)
    assert top(grid, 1)[0]["column_label"] == "1 b" and top(grid, 1)[0]["effect"] == -0.75


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_preview_estimates_and_compare(contrasts, family):
    c = contrasts(family)
    est = preview(c)
    assert est.residual.shape == (c.n_layers, c.n_tokens) and est.heads.shape == (c.n_layers, c.n_heads)
    # each head's estimate is the sum of its estimates at each position
    per_position = est.heads_by_position - 0.0   # normalised: (corrupted + Σ change) over the same denominator
    assert np.allclose(est.heads, per_position.sum(1), atol=1e-9)
    assert np.allclose(c.normalise(est.heads_raw), est.heads)
    exact = patch(c, "residual")
    agree = compare(exact, est, k=3)
    assert len(agree.disagree) == 3
    gaps = [abs(x["gap"]) for x in agree.disagree]
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[0] == pytest.approx(np.abs(est.residual - exact.values).max())
    assert -1 <= agree.pearson <= 1 and -1 <= agree.spearman <= 1


# ---------------------------------------------------------------------------------------------- refusals

def _refused(loaded, pair, **kw) -> str:
    with pytest.raises(Refused) as err, language("en"):
        prepare(loaded, pair, **kw)
    with language("de"):
        assert str(err.value)                    # shown in the reader's language, never empty
    with language("en"):
        return str(err.value)


def test_refusals(tiny_loaded):
    llama, bert, t5, gpt2 = (tiny_loaded(f) for f in ("llama", "bert", "t5", "gpt2"))
    said = _refused(llama, dataclasses.replace(DECODER, corrupted="the cat sat on the man"), least=0.0)
    assert "5 tokens" in said and "6" in said and "'sat'" in said and "'on'" in said
    said = _refused(llama, dataclasses.replace(DECODER, answer="dog cat"), least=0.0)
    assert "'dog cat'" in said and "2 tokens" in said
    assert "same token" in _refused(llama, dataclasses.replace(DECODER, wrong="man"), least=0.0)
    assert "empty" in _refused(llama, dataclasses.replace(DECODER, clean="   "), least=0.0)
    assert "empty" in _refused(llama, dataclasses.replace(DECODER, corrupted=""), least=0.0)
    long = " ".join(["the dog"] * MAX_TOKENS)
    said = _refused(llama, MinimalPair(long, long.replace("dog", "cat", 1), answer="man", wrong="dog"), least=0.0)
    assert str(MAX_TOKENS) in said
    assert "characters" in _refused(llama, MinimalPair("a" * 5000, "b" * 5000, answer="man", wrong="dog"))
    assert "same tokens" in _refused(llama, dataclasses.replace(DECODER, corrupted=DECODER.clean), least=0.0)
    assert "encoder-decoder" in _refused(t5, DECODER)
    assert "kind “encoder”" in _refused(llama, ENCODER)
    assert "barely" in _refused(llama, DECODER, least=1e6)
    assert "'zebra'" in _refused(bert, dataclasses.replace(ENCODER, query="zebra"), least=0.0)
    assert "layer 0 to 1" in _refused(bert, dataclasses.replace(ENCODER, layer=7), least=0.0)
    hostile = '<script>alert("x")</script> the man'
    said = _refused(llama, MinimalPair(hostile, "the dog bites the man", answer="man", wrong="dog"), least=0.0)
    assert "tokens" in said
    c = prepare(gpt2, DECODER, least=0.0)
    for kw, words in ((dict(granularity="path", receiver=(1, 0)), "one projection"),
                      (dict(granularity="cells"), "granularity"),
                      (dict(granularity="residual", direction="sideways"), "direction"),
                      (dict(granularity="heads_at", position=99), "position from 0 to")):
        with pytest.raises(Refused, match=words):
            patch(c, **kw)
    c = prepare(llama, DECODER, least=0.0)
    for kw, words in ((dict(receiver=(0, 0)), "receiver head"), (dict(receiver=(1, 9)), "receiver head"),
                      (dict(receiver=(1, 0), via="x"), "queries")):
        with pytest.raises(Refused, match=words):
            patch(c, "path", **kw)


def test_top_lists_the_largest_moves(contrasts):
    c = contrasts("llama")
    grid = patch(c, "residual")
    best = top(grid, 3)
    assert [b["effect"] for b in best] == sorted([b["effect"] for b in best], key=abs, reverse=True)
    assert abs(best[0]["effect"]) == pytest.approx(np.abs(grid.effect).max())
    assert best[0]["column_label"].split(" ", 1)[1] == c.tokens["corrupted"][best[0]["column"]]


def test_a_kept_contrast_counts_its_activations_not_the_model_it_points_to(contrasts):
    """A contrast keeps its loaded model to run again; the work region sizes it by its own arrays (the models region
    holds the weights). Counting the weights made the IOI contrast on SmolLM2 larger than the whole work region: each
    pair prepared emptied it, and every page view ran exact patching again."""
    from explorer.serving import cache

    c = contrasts("llama")
    own = cache.nbytes({k: v for k, v in vars(c).items() if k not in ("loaded", "parts")})
    weights = sum(p.numel() * p.element_size() for p in c.loaded.model.parameters())
    assert own > 0 and weights > own
    assert cache.nbytes(c) == own
    store = cache.ByteLRU(max_bytes=own + 1000)
    store.put("earlier", np.zeros(100, np.float64))   # 800 bytes
    store.put("contrast", c)
    assert store.keys() == ["earlier", "contrast"]   # both fit: the contrast emptied nothing


def test_sizing_a_value_while_another_thread_imports_torch(monkeypatch):
    """The server sizes a gzipped static file while a page's thread is still importing torch: the half-made torch
    has no ``nn`` yet (a browser test's page hung on the AttributeError), and no torch module can exist yet either."""
    import types

    from explorer.serving import cache

    for name in ("torch", "torch.nn.modules.module"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    assert cache.nbytes({"packed": np.zeros(3, np.uint8)}) == 3
