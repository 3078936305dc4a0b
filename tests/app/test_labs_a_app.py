"""AppTest of the worked-example, softmax, permutation and why-attention labs: move each lab's controls, answer
its question, and check the displayed numbers against the explorer functions (and the seeds)."""

import numpy as np
import pytest
from labs_helpers import answer as _answer
from labs_helpers import run_page as _run
from pagetest import click, unfolded
from streamlit.testing.v1 import AppTest

from explorer import maths
from explorer.attention.result import extract
from explorer.labs import real_model
from explorer.labs.notation import latex_matrix


def _latex(at: AppTest) -> str:
    return "\n".join(x.value for x in at.latex)


def _texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
                     + [str(s.value) for s in at.success] + [str(e.value) for e in at.error])


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


# ------------------------------------------------------------------------------------------ worked example

def test_worked_example_shows_the_seeds_numbers():
    at = _run("pages/lab_worked_example.py")
    text = _latex(at)
    assert r"\begin{bmatrix}1 & 0 & 1 \\ 0 & 1 & 1 \\ 1 & 1 & 2\end{bmatrix}" in text  # QK^T
    assert (r"\frac{QK^\top}{1.414} = \begin{bmatrix}0.707 & 0 & 0.707 \\ 0 & 0.707 & 0.707 \\ "
            r"0.707 & 0.707 & 1.414") in text
    assert r"0.401 & 0.198 & 0.401" in text
    assert r"e^{\text{scores}} = \begin{bmatrix}2.028 & 1 & 2.028\end{bmatrix}" in text
    assert r"\sum e^{\text{scores}} = 5.056" in text
    assert r"= \begin{bmatrix}0.802 & 0.797\end{bmatrix}" in text
    at.selectbox[0].set_value(3).run()
    assert r"\text{weights} = \begin{bmatrix}0.248 & 0.248 & 0.503\end{bmatrix}" in _latex(at)


def test_worked_example_recomputes_after_an_edit_and_resets():
    at = _run("pages/lab_worked_example.py")
    at.number_input(key="Q00").set_value(3.0).run()
    at.number_input(key="V11").set_value(-1.0).run()
    q, v = maths.WORKED_Q.copy(), maths.WORKED_V.copy()
    q[0, 0], v[1, 1] = 3.0, -1.0
    steps = maths.attention_steps(q, maths.WORKED_K, v)
    text = _latex(at)
    assert latex_matrix(steps["weights"]) in text and latex_matrix(steps["output"]) in text
    assert "0.802 & 0.797" not in text
    next(b for b in at.button if b.label == "Reset to the worked example").click().run()
    assert at.number_input(key="Q00").value == 1.0 and at.number_input(key="V11").value == 2.0
    assert "0.802 & 0.797" in _latex(at)


def test_worked_example_question():
    at = _answer(_run("pages/lab_worked_example.py"), "larger")
    assert at.error and "smaller" in at.error[0].value
    assert "[0.422, 0.155, 0.422]" in _texts(at) and "**0.155** instead of **0.198**" in _texts(at)
    next(b for b in at.button if b.label == "Try again").click().run()
    at = _answer(at, "smaller")
    assert at.success and not at.error
    # editing the matrices changes the question, so the old answer is withdrawn
    at.number_input(key="K10").set_value(2.0).run()
    assert not at.success and any(b.label == "Commit my answer" for b in at.button)


# ---------------------------------------------------------------------------------------------- softmax

def test_softmax_lab_d_k_slider_matches_the_measurements():
    at = unfolded(_run("pages/lab_softmax.py"))   # the spread for every d_k is folded under the question
    for d_k in (1, 1024):
        next(s for s in at.select_slider if s.label.startswith("d_k")).set_value(d_k).run()
        stats, m = maths.saturation_stats(d_k), _metrics(at)
        assert m["measured sd of q·k"] == f"{stats['score_std']:.2f}"
        assert m["√d_k"] == f"{np.sqrt(d_k):.2f}"
        assert m["largest weight, raw"] == f"{stats['max_weight_raw']:.3f}"
        assert m["largest weight, ÷√d_k"] == f"{stats['max_weight_scaled']:.3f}"
    assert float(m["largest weight, raw"]) > 0.9 > 0.5 > float(m["largest weight, ÷√d_k"])
    assert abs(float(m["measured sd of q·k"]) - 32) < 2


def test_softmax_lab_shows_the_seeds_rows():
    at = _run("pages/lab_softmax.py")
    frame = at.dataframe[0].value
    assert list(frame["softmax"]) == ["[0.090, 0.245, 0.665]", "[0.0000001, 0.0003, 0.9997]"]
    assert "[0.090, 0.245, 0.665]" in _texts(at) and "[0.0000001, 0.0003, 0.9997]" in _texts(at)


def test_softmax_lab_temperature_on_a_real_head(encoder):
    at = _run("pages/lab_softmax.py")
    text = at.text_input[0].value
    result = extract(encoder, text)
    next(s for s in at.selectbox if s.label == "Layer").set_value(4).run()
    next(s for s in at.selectbox if s.label == "Head").set_value(7).run()
    scores = real_model.head_scores(result, 4, 7)
    for t in (1.0, 0.05):
        next(s for s in at.select_slider if s.label == "Temperature T").set_value(t).run()
        view, m = real_model.temperature_view(scores, t), _metrics(at)
        assert m["mean largest weight"] == f"{view.mean_max_weight:.3f}"
        assert m["one-hot rows (max > 0.99)"] == f"{view.one_hot_rows} of {len(result.tokens)}"
    at_one = real_model.temperature_view(scores, 1.0).mean_max_weight
    assert f"{result.weights[4, 7].max(-1).mean():.3f}" == f"{at_one:.3f}"
    assert view.one_hot_rows >= len(result.tokens) - 2


def test_softmax_lab_question():
    at = _answer(_run("pages/lab_softmax.py"), "about 16")
    assert at.success and f"{maths.score_std(256):.2f}" in _texts(at)


# ------------------------------------------------------------------------------------------ permutation

def test_permutation_lab_default_and_shuffle_by_hand(encoder):
    at = unfolded(_run("pages/lab_permutation.py"))
    demo = real_model.permutation_demo(encoder, "dog bites man", [2, 1, 0])
    m = _metrics(at)
    assert m["no positions"] == f"{demo.gap_plain.max():.1e}" and float(m["no positions"]) < 1e-6
    assert float(m["with positions"]) > 0.1 and float(m["real model"]) > 0.1
    assert float(m["model, positions = 0"]) < 1e-5
    assert "**shuffled:** man bites dog" in _texts(at)
    at.multiselect[0].set_value(["2 · bites", "1 · dog", "3 · man"]).run()
    assert "**shuffled:** bites dog man" in _texts(at)
    at.multiselect[0].set_value(["2 · bites"]).run()
    assert "Pick every token once" in _texts(at)
    next(b for b in at.button if b.label == "Shuffle randomly").click().run()
    assert sorted(at.multiselect[0].value) == ["1 · dog", "2 · bites", "3 · man"]
    for _ in range(20):  # 3 tokens: a plain random draw would repeat the order on screen 1 time in 6
        before = list(at.multiselect[0].value)
        next(b for b in at.button if b.label == "Shuffle randomly").click().run()
        assert sorted(at.multiselect[0].value) == sorted(before) and at.multiselect[0].value != before
        assert at.multiselect[0].value != ["1 · dog", "2 · bites", "3 · man"]   # not the sentence as it was
    assert not at.exception


def test_permutation_lab_new_sentence_and_question():
    at = _run("pages/lab_permutation.py")
    at.text_input[0].set_value("the cat sat on the mat").run()
    assert at.multiselect[0].value[0] == "6 · mat" and len(at.multiselect[0].options) == 6
    assert not at.dataframe   # the outputs are folded until the prediction
    at = _answer(at, "no, a different vector")
    assert at.error and "yes, the same vector" in at.error[0].value
    assert list(at.dataframe[0].value["token"]) == ["mat", "the", "on", "sat", "cat", "the"]
    assert "float32 rounding" in _texts(at)


# --------------------------------------------------------------------------------------- why attention

def test_why_attention_path_lengths():
    at = _run("pages/lab_why_attention.py")
    assert _metrics(at) == {"recurrent model: steps": "12", "self-attention: steps": "1"}  # keys → were
    next(s for s in at.selectbox if s.label == "From word").set_value(0).run()
    assert _metrics(at)["recurrent model: steps"] == "13"
    at.text_input[0].set_value("one").run()
    assert "at least two words" in _texts(at)


def test_why_attention_cost_and_question():
    at = unfolded(_run("pages/lab_why_attention.py"))   # the cost table is folded under the question
    frame = at.dataframe[0].value
    assert frame.loc[frame["n"] == 512, "weights, 12×12 heads"].item() == "144 MiB"
    assert "144 MiB per sequence" in _texts(at)
    next(s for s in at.select_slider if s.label == "Sequence length n").set_value(1024).run()
    next(s for s in at.selectbox if s.label.startswith("Model width")).set_value(384).run()
    frame = at.dataframe[0].value
    assert frame.loc[frame["n"] == 1024, "work: attention ÷ recurrent"].item() == pytest.approx(1024 / 384)
    at = _answer(click(at, "Predict again"), "4× larger")
    assert at.success and "1,048,576 entries become 4,194,304" in _texts(at)
