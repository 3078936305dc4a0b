"""What one head does across the class's sentences, on hand-built weights: the kinds, the summary in words, the
class question's computed answer, and the padded batch's layout."""
import numpy as np
import pytest

from explorer.sentences.batch import ClassAttention, padded_batch
from explorer.sentences.head_in_words import (
    EARLIER,
    END,
    LATER,
    PREVIOUS,
    SELF,
    START,
    follow_question,
    key_kind,
    sentence_kinds,
    summarise,
    summary_text,
    word_position,
    word_rows,
)


def sentence(words: list[str], rows_for_head: list[dict[int, int]]) -> tuple:
    """[CLS] words [SEP]; ``rows_for_head[h]``: query -> the key it puts 0.7 on (the rest spread evenly)."""
    tokens = ["[CLS]", *words, "[SEP]"]
    n = len(tokens)
    weights = np.zeros((1, len(rows_for_head), n, n), dtype=np.float32)
    for h, tops in enumerate(rows_for_head):
        for q in range(n):
            weights[0, h, q] = 0.3 / (n - 1)
            weights[0, h, q, tops.get(q, q)] = 0.7
    special = np.array([True, *([False] * len(words)), True])
    return tokens, special, (-1, *range(len(words)), -1), tuple(words), weights


def class_of(*made) -> ClassAttention:
    return ClassAttention("m", False, tuple(" ".join(m[3]) for m in made), tuple(tuple(m[0]) for m in made),
                          tuple(m[1] for m in made), tuple(m[2] for m in made), tuple(m[3] for m in made),
                          tuple(m[4] for m in made))


def test_key_kinds_by_position():
    special = np.array([True, False, False, False, True])
    assert [key_kind(3, k, special) for k in range(5)] == [START, EARLIER, PREVIOUS, SELF, END]
    assert key_kind(1, 2, special) == LATER
    assert key_kind(2, 0, np.zeros(4, bool)) == START   # a decoder without a start token: its first word
    assert key_kind(3, 1, np.zeros(4, bool)) == EARLIER


def test_the_word_is_found_case_and_quotes_aside():
    words, ids = ("The", "dog", "saw", "It", "."), (-1, 0, 1, 2, 3, 4, -1)
    assert word_position(words, ids, "it") == 4 and word_position(words, ids, "“it”") == 4
    again = ("It", "rained", "so", "it", "was", "wet"), (0, 1, 2, 3, 4, 5)
    assert word_position(*again, "it") == 3   # the last one: a pronoun after what it may name
    assert word_position(words, ids, "cat") is None


def test_word_rows_summary_and_odd_ones_first():
    # "it" at token 4 in each; head 0 sends it to "dog" (2, further back) in two sentences, to itself in one
    a = sentence(["the", "dog", "saw", "it"], [{4: 2}, {4: 3}])
    b = sentence(["a", "cat", "ate", "it"], [{4: 2}, {4: 3}])
    c = sentence(["so", "it", "goes", "on"], [{2: 2}, {2: 0}])   # "it" at token 2 looks at itself / start
    ca = class_of(a, b, c)
    rows = word_rows(ca, 0, 0, "it")
    assert [(r.query, r.top, r.top_token, r.kind) for r in rows] == [(4, 2, "dog", EARLIER), (4, 2, "cat", EARLIER),
                                                                    (2, 2, "it", SELF)]
    s = summarise([r.kind for r in rows])
    assert (s.common, s.count, s.total, s.odd, s.order) == (EARLIER, 2, 3, (2,), (2, 0, 1))
    text = summary_text(s, "it", rows)
    assert text.startswith("In 2 of 3 sentences, “it” looks most at a token further back.")
    assert "Sentence 3: at “it”, the token itself." in text


def test_a_missing_word_is_said_and_not_counted():
    a = sentence(["the", "dog", "saw", "it"], [{4: 3}])
    b = sentence(["no", "such", "word"], [{}])
    rows = word_rows(class_of(a, b), 0, 0, "it")
    assert rows[1] is None
    s = summarise([r and r.kind for r in rows])
    assert (s.count, s.total, s.order) == (1, 1, (0, 1))
    assert summary_text(s, "it", rows).endswith("1 sentence does not hold “it”.")
    assert summary_text(summarise([None]), "it") == "None of the sentences holds “it”."


def test_sentence_kinds_without_a_word():
    prev = {q: q - 1 for q in range(2, 5)}
    a = sentence(["one", "two", "three", "four"], [prev])
    b = sentence(["five", "six", "seven", "eight"], [{q: 5 for q in range(1, 5)}])   # to [SEP]
    kinds = sentence_kinds(class_of(a, b), 0, 0)
    assert kinds == [PREVIOUS, END]
    assert summary_text(summarise(kinds)).startswith("In 1 of 2 sentences, this head looks mostly at")


def test_the_class_question_answer_is_the_head_that_follows_the_word_back_most():
    heads = lambda back: [{4: 2} if b else {4: 5} for b in back]   # noqa: E731 - per head: back, or to [SEP]
    ca = class_of(sentence(["the", "dog", "saw", "it"], heads([0, 1, 1, 0, 0])),
                  sentence(["a", "cat", "ate", "it"], heads([0, 1, 0, 1, 0])),
                  sentence(["my", "car", "hit", "it"], heads([0, 1, 1, 0, 0])))
    q = follow_question(ca, 0, "it")
    assert q.correct == "head 1" and len(q.options) == 4 and "head 1" in q.options
    assert q.prompt == "Which head of layer 0 will follow “it” back to an earlier token in most of our sentences?"
    assert q.reveal.startswith("head 1: 3 of 3 sentences")
    # no head ever follows it back, or every head as often: no question with a right answer
    flat = class_of(sentence(["the", "dog", "saw", "it"], heads([0, 0])))
    assert follow_question(flat, 0, "it") is None
    tied = class_of(sentence(["the", "dog", "saw", "it"], heads([1, 1])))
    assert follow_question(tied, 0, "it") is None


def test_padded_batch_pads_on_the_right_with_mask_zero():
    ids, mask = padded_batch([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


@pytest.mark.parametrize("n", [1, 2])
def test_one_sentence_reads_in_the_singular(n):
    a = sentence(["it", "is"], [{1: 1}])
    s = summarise(["self"] * n)
    assert ("sentence," if n == 1 else "sentences,") in summary_text(s, "it", word_rows(class_of(*[a] * n), 0, 0, "it"))
