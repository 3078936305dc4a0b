"""Lessons 4 and 5's measures on tiny random models: the repeat found in a token sequence, each copy's loss and
where a head looks worked out by hand; the loss read through the model equals −ln softmax of its own logits and
moves when heads are knocked out; the computed questions' answers are the ones their own numbers give (the
scale, the layer-0 split, the key head shared); a check returns (agrees, what was measured)."""
import numpy as np
import pytest
import torch
from tiny import TEXT

from explorer.attention import breakdown as bd
from explorer.attention.result import extract
from explorer.heads_do import repeats
from explorer.heads_do.measures import output_embedding
from explorer.lessons import induction_claims as ic
from explorer.lessons import score_claims as sc
from explorer.lessons.claims import NotComputable
from explorer.maths import softmax

REPEAT = "the cat sat on the mat the cat sat on the mat"


def test_the_repeat_is_the_longest_tail_written_twice():
    assert repeats.find_repeat([9, 1, 2, 3, 1, 2, 3]) == (1, 3)
    assert repeats.find_repeat([5, 5, 5, 5]) == (0, 2)          # the longest tail, not the shortest
    with pytest.raises(ValueError, match="written twice"):
        repeats.find_repeat([1, 2, 3, 4])


def test_each_copys_loss_skips_its_first_token():
    # tokens 0..6, repeat at offset 1 with n = 3: loss entry t is the loss of token t + 1
    losses = np.array([10.0, 4.0, 6.0, 9.0, 1.0, 3.0])
    found = repeats.copy_loss(losses, 1, 3)
    assert (found.first, found.second) == (5.0, 2.0)             # tokens 2, 3 and tokens 5, 6


def test_where_a_head_looks_from_the_second_copy_by_hand():
    n, offset, size = 2, 1, 5                                    # tokens: [x a b a b]
    w = np.zeros((size, size))
    w[3, 2], w[4, 0] = 1.0, 1.0                                  # query 3 reads the token after its twin (2)
    found = repeats.looks(w, offset, n)
    assert found == {"previous": 0.5, "first": 0.5, "same": 0.0, "after": 0.5}


def test_the_loss_is_minus_log_softmax_of_the_models_logits_and_knockouts_move_it(tiny_loaded):
    loaded = tiny_loaded("llama")
    ids = extract(loaded, REPEAT).token_ids
    losses = repeats.token_losses(loaded, ids)
    w_u, _ = output_embedding(loaded)
    with torch.inference_mode():
        hidden = loaded.model(input_ids=torch.tensor([ids])).last_hidden_state[0]
        logp = torch.log_softmax((hidden @ w_u.T).double(), -1).numpy()
    assert np.allclose(losses, [-logp[t, ids[t + 1]] for t in range(len(ids) - 1)], atol=1e-6)
    assert not np.allclose(repeats.token_losses(loaded, ids, {0: [0, 1]}), losses)
    with pytest.raises(ValueError, match="encoder"):
        repeats.token_losses(tiny_loaded("bert"), ids)


@pytest.mark.parametrize("second, label", [(13.0, 0), (11.0, 1), (8.5, 1), (7.9, 2), (5.0, 2), (4.9, 3)])
def test_the_loss_option_follows_the_ratio_of_the_copies(second, label):
    assert ic.loss_label(10.0, second) == ic.LOSS_OPTIONS[label]


def test_the_induction_lessons_questions_answer_with_their_own_numbers(tiny_loaded):
    loaded = tiny_loaded("llama")
    params = {"text": REPEAT, "layer": "1", "head": "1", "heads": "L0H0,L1H1"}
    result = extract(loaded, REPEAT)
    offset, n = repeats.find_repeat(result.token_ids)
    loss = repeats.copy_losses(loaded, result.token_ids)
    asked = ic.repeat_loss(loaded, params)
    assert asked.correct == ic.loss_label(loss.first, loss.second) and f"{loss.second:.2f}" in asked.reveal
    found = repeats.looks(result.weights[1, 1], offset, n)
    assert ic.where_head_looks(loaded, params).correct == repeats.LOOKS[max(found, key=found.get)]
    knocked = repeats.copy_losses(loaded, result.token_ids, {0: [0], 1: [1]}).second
    assert f"**{knocked:.2f}**" in ic.knockout_repeat_loss(loaded, params).reveal
    with pytest.raises(NotComputable, match="written twice"):
        ic.repeat_loss(loaded, {"text": TEXT})


def test_the_induction_checks_measure_the_role_probe(tiny_loaded):
    loaded = tiny_loaded("llama")
    for check in (ic.strongest_previous_token_head, ic.strongest_induction_head):
        agrees, said = check(loaded, {"layer": "0", "head": "0"})
        assert isinstance(agrees, bool) and "the head-role probe's strongest" in said
    agrees, said = ic.previous_before_induction(loaded, {"text": REPEAT, "heads": "L1H0,L0H1"})
    assert agrees is False and "the step shows L1H0, L0H1" in said   # an induction head before its helper
    agrees, said = ic.writes_the_repeat(loaded, {"prompt": "the cat sat on the", "new": "2"})
    assert "greedy tokens" in said


def test_the_scale_question_compares_the_rows_softmax_with_and_without_it(tiny_loaded):
    loaded = tiny_loaded("bert")
    params = {"text": TEXT, "layer": "1", "head": "0", "query": "3", "key": "2"}
    b = bd.breakdown(extract(loaded, TEXT), 1, 0, 3, 2)
    unscaled = softmax(b.row_scores / b.scale)[2]
    question = sc.without_the_scale(loaded, params)
    assert question.correct == ("the same" if abs(unscaled - b.weight) < 0.005 else
                                "larger" if unscaled > b.weight else "smaller")
    assert f"{b.weight:.1%}" in question.prompt


def test_the_layer_0_split_question_names_the_largest_part_and_the_parts_add_up(tiny_loaded):
    loaded = tiny_loaded("bert")
    params = {"text": TEXT, "layer": "0", "head": "1", "query": "3", "key": "2"}
    question = sc.position_part(loaded, params)
    assert question.options == (*sc.PART_NAMES.values(), sc.REST)   # the four parts and the rest, always offered
    split = sc._origin(loaded, *sc.cell(loaded, params), "learned").split
    sizes = dict(zip(question.options, [abs(split.parts.get(k, 0.0)) for k in (*sc.PART_NAMES, "rest")]))
    assert question.correct == max(sizes, key=sizes.get)
    agrees, said = sc.split_adds_up(loaded, params)
    assert agrees and "add up" in said
    with pytest.raises(NotComputable):    # from layer 1 on there is no split
        sc.position_part(loaded, {**params, "layer": "1"})
    with pytest.raises(NotComputable):    # a rotary decoder has no learned position parts
        sc.position_part(tiny_loaded("llama"), params)


def test_the_grouped_key_head_question_and_checks_on_a_grouped_decoder(tiny_loaded):
    loaded = tiny_loaded("llama")                # 2 key heads shared by the query heads
    result = extract(loaded, TEXT)
    n_heads = result.weights.shape[1]
    params = {"text": TEXT, "layer": "1", "head": str(n_heads - 1), "query": "4", "key": "1"}
    question = sc.shared_key_head(loaded, params)
    share = n_heads // 2
    assert question.correct == f"query heads {share}–{n_heads - 1}"
    assert isinstance(sc.shared_keys_differ(loaded, params)[0], bool)
    agrees, said = sc.curve_meets_score(loaded, params)
    assert agrees, said
    with pytest.raises(NotComputable, match="own key head"):
        sc.shared_key_head(tiny_loaded("bert"), {**params, "head": "0"})
