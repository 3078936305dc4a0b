"""The labs' predict-then-reveal questions, built in the core from what the lab computed (pages only ask them): the
right option follows the numbers, and the text typed by a student goes through the page's own escape."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.labs import blocks, real_model


def padding(change_unmasked: list[float]) -> blocks.PaddingExperiment:
    n = len(change_unmasked)
    return blocks.PaddingExperiment("a *cat*", "a much longer sentence", ["a", "*cat*", "[PAD]", "[PAD]"][:n + 2], n,
                                    np.full(n, 1e-7), np.array(change_unmasked), np.zeros(2), np.ones(2))


@pytest.mark.parametrize("moves, band", [([1e-6, 2e-6], 0), ([0.01, 0.02], 1), ([0.04, 0.2], 2)])
def test_the_padding_question_picks_the_band_of_the_mean_change(moves, band):
    q = blocks.padding_question(padding(moves), "MiniLM", shown=lambda t: f"<{t}>")
    assert q.correct == q.options[band]
    assert "<a *cat*>" in q.prompt and "2 tokens" in q.prompt and "2 [PAD]" in q.prompt
    assert "<*cat*>" in q.reveal   # the token that moved most, escaped as the page shows it


@pytest.mark.parametrize("n_tokens, d_model, n_heads", [(6, 64, 8), (10, 512, 4)])
def test_the_heads_cost_question_says_the_same_and_shows_the_counts(n_tokens, d_model, n_heads):
    cost = blocks.head_cost(n_tokens, d_model, n_heads)
    q = blocks.heads_cost_question(cost, n_tokens, d_model, n_heads)
    assert cost.all_heads == cost.one_full_head and q.correct == q.options[1]
    assert f"{cost.one_full_head:,}" in q.prompt and f"**{cost.all_heads:,}**" in q.reveal


def demo(gap: float) -> real_model.PermutationDemo:
    fields = {f: None for f in real_model.PermutationDemo.__dataclass_fields__}
    fields.update(tokens=["*dog*", "bites", "man"], order=np.array([2, 0, 1]), gap_plain=np.array([0.0, gap, 0.0]))
    return real_model.PermutationDemo(**fields)


@pytest.mark.parametrize("gap, same", [(3e-8, True), (0.3, False)])
def test_the_permutation_question_reads_the_first_tokens_gap(gap, same):
    q = real_model.permutation_question(demo(gap), shown=lambda t: f"<{t}>")
    assert q.correct == q.options[0 if same else 1]
    assert "<*dog*>" in q.prompt and f"{gap:.1e}" in q.reveal
