"""Lab: why attention replaced recurrence (one step between any two positions) and what it costs (n × n)."""
import streamlit as st

from explorer import maths
from explorer.labs import real_model
from explorer.labs.quiz import Question, nearest_option
from explorer.plots.concepts import cost_figure, path_length_figure
from explorer.ui.quiz import ask_first
from explorer.ui.widgets import show_figure, use_app_navigation

use_app_navigation()

st.title("Why attention: one step between any two words")
st.markdown("A recurrent network reads one token per step and carries everything it knows in a single state "
            "vector. For a word to influence another word k places later, its information has to survive k "
            "updates of that state. Self-attention lets every position read every other position directly, "
            "in one step, and computes all positions at the same time instead of one after another.")
st.latex(r"\begin{gathered} \text{path}_{\text{recurrent}}(i, j) = |i - j| \\ "
         r"\text{path}_{\text{attention}}(i, j) = 1 \end{gathered}")   # two lines: one is wider than a phone

words = st.text_input("Sentence", "The keys that the old man left on the kitchen table last night were gone.").split()
if len(words) < 2:
    st.info("Type at least two words.")
    st.stop()
c = st.columns(2)
i = c[0].selectbox("From word", range(len(words)), index=min(1, len(words) - 1),
                   format_func=lambda p: f"{p + 1}. {words[p]}")
j = c[1].selectbox("To word", range(len(words)), index=min(13, len(words) - 1),
                   format_func=lambda p: f"{p + 1}. {words[p]}")
c = st.columns(2)
c[0].metric("recurrent model: steps", maths.path_length(i, j, "recurrent"))
c[1].metric("self-attention: steps", maths.path_length(i, j, "attention"))
n_show = min(len(words), 32)
show_figure(path_length_figure(maths.path_length_matrix(n_show, "recurrent"),
                                   maths.path_length_matrix(n_show, "attention"),
                                   pair=(i + 1, j + 1) if max(i, j) < n_show else None), "paths", "path-lengths")

st.subheader("The price: a table of weights for every head")
c = st.columns(2)
n = c[0].select_slider("Sequence length n", options=[2 ** p for p in range(4, 14)], value=512)
d = c[1].selectbox("Model width d (BERT-base: 768)", [384, 768, 1024], index=1)
t = maths.cost_table([n, 2 * n], d_model=d)
if ask_first(Question(
    prompt=f"Each head fills a table of weights: one for every query and key it compares. The input doubles from {n} "
           f"to {2 * n} tokens. Which of these three factors, 2×, 4× or 8×, does each head's table grow by?",
    options=("2× larger", "4× larger", "8× larger"),
    correct=nearest_option(t["score_entries"][1] / t["score_entries"][0], {"2× larger": 2, "4× larger": 4,
                                                                            "8× larger": 8}),
    reveal=f"{t['score_entries'][0]:,} entries become {t['score_entries'][1]:,}: ×"
           f"{t['score_entries'][1] / t['score_entries'][0]:g}. For 12 layers × 12 heads that is "
           f"{real_model.format_bytes(t['attention_memory_bytes'][0])} → "
           f"{real_model.format_bytes(t['attention_memory_bytes'][1])} per sequence."), "why",
        "The cost for every length and why BERT stops at 512 tokens"):
    st.markdown("Attention compares every position with every other, so each head in each layer fills an n × n "
                "table of weights, and training keeps them all for the backward pass. A recurrent model does "
                "n·d² work in n steps that must wait for each other; attention does n²·d work all at once, which is "
                "more arithmetic once n exceeds d, but arithmetic that a GPU can do in parallel.")
    st.latex(r"\begin{aligned}\text{attention: }& O(n^2 d)\ \text{work}, O(1)\ \text{steps}\\"   # fits a phone
             r"\text{recurrent: }& O(n d^2)\ \text{work}, O(n)\ \text{steps}\end{aligned}")
    ns = [2 ** p for p in range(4, 14)]
    show_figure(cost_figure(maths.cost_table(ns, d_model=d), d_model=d, selected_n=n), "cost", "cost")
    st.dataframe(real_model.cost_frame(ns, d_model=d), hide_index=True)
    st.subheader("Why 512 tokens")
    m512 = real_model.format_bytes(maths.cost_table([512])["attention_memory_bytes"][0])
    st.markdown(f"BERT-base has 12 layers × 12 heads. At 512 tokens its attention weights alone take {m512} per "
                f"sequence in 32-bit floats, and a training batch holds dozens of sequences next to every other "
                "activation, on the accelerators of 2018, typically with 16 GB of memory or less. Each doubling of the "
                "length multiplies "
                "that by four, so the original BERT spent most of its pre-training on 128-token inputs and only the "
                "last part on 512. Once trained, the limit is built in: the learned position table has 512 rows, so "
                "there is no position vector for token 513. Longer documents must be cut, split into chunks, or "
                "given to a model designed for long inputs.")
