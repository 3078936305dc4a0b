"""Lab: heads and the block — split d_model into heads, then build one transformer block in post- and pre-norm."""
import numpy as np
import pandas as pd
import streamlit as st

from explorer.labs import blocks
from explorer.labs.quiz import Question
from explorer.plots.positions import head_split, heads_side_by_side, matrix_grid
from explorer.ui.quiz import ask_first
from explorer.ui.widgets import show_figure, use_app_navigation
from explorer.ui.words import tip

use_app_navigation()

st.title("Heads and the block")
st.markdown("Attention is one ingredient. A transformer layer runs several attention heads side by side, glues "
            "their answers back together, then passes every token through a small feed-forward network, with a "
            "shortcut (residual) and a normalisation around each part.")

st.header("1 · Many heads for the price of one")
c1, c2, c3 = st.columns(3)
d_model = c1.select_slider("Model width d_model", [8, 16, 64, 384, 512, 768], value=512, help=tip("d_model"))
n_heads = c2.select_slider("Heads h", [h for h in (1, 2, 3, 4, 6, 8, 12, 16) if d_model % h == 0], value=8)
n_tokens = c3.slider("Tokens n", 2, 10, 5)
cost = blocks.head_cost(n_tokens, d_model, n_heads)
st.markdown(f"Q, K and V are computed once at full width, then their {d_model} columns are cut into {n_heads} "
            f"slices of **d_head = {d_model} / {n_heads} = {cost.d_head}**. Each head attends inside its slice only.")
show_figure(head_split(d_model, n_heads, n_tokens), "split", "head-split")
st.latex(r"\text{head}_i = \mathrm{softmax}\!\Big(\tfrac{Q_i K_i^\top}{\sqrt{d_{head}}}\Big) V_i,\qquad "
         r"\mathrm{MultiHead}(X) = \big[\text{head}_1;\dots;\text{head}_h\big]\,W^O")
rng = np.random.default_rng(0)
x = rng.normal(size=(n_tokens, d_model))
w = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
mh = blocks.multi_head_attention(x, *w[:3], n_heads, wo=w[3])
st.markdown(f"Random tokens and weights: every head finds its own pattern ({min(n_heads, 8)} of {n_heads} shown). "
            f"Concatenating the heads gives back a {mh.concat.shape[0]} × {mh.concat.shape[1]} matrix, and "
            f"W^O ({d_model} × {d_model}) mixes the heads' answers into the output, also "
            f"{mh.output.shape[0]} × {mh.output.shape[1]}.")
show_figure(heads_side_by_side(mh.weights, [f"t{i + 1}" for i in range(n_tokens)]), "heads", "block-heads")
if ask_first(Question(
    prompt=f"One head {d_model} wide needs {cost.one_full_head:,} multiplications for QKᵀ and weights·V on "
           f"{n_tokens} tokens. Split into {n_heads} heads {cost.d_head} wide, do all heads together need more, the "
           "same or less? Which of these three?",
    options=("more: every head pays for all n² pairs", "the same", "less: each head is narrower"),
    correct="the same",
    reveal=f"{n_heads} × 2 · {n_tokens}² · {cost.d_head} = **{cost.all_heads:,}** = 2 · {n_tokens}² · {d_model}. "
           "Each head does n² comparisons, but in a slice 1/h as wide: the h relationship types come free."),
        "heads", "The count of multiplications"):
    st.dataframe(pd.DataFrame({"multiplications": [cost.per_head, cost.all_heads, cost.one_full_head,
                                                   cost.projections]},
                              index=[f"one head (QKᵀ and weights·V, width {cost.d_head})", f"all {n_heads} heads",
                                     f"one head of full width {d_model}", "projections W^Q, W^K, W^V, W^O"]))

st.header("2 · One block from scratch")
norm = st.radio("Where the layer norm sits", ["post", "pre"], horizontal=True, help=tip("layer norm"),
                format_func={"post": "post-norm (2017 original)", "pre": "pre-norm (most current models)"}.get)
if norm == "post":
    st.latex(r"h = \mathrm{LN}\big(x + \mathrm{Attn}(x)\big),\qquad y = \mathrm{LN}\big(h + \mathrm{FFN}(h)\big)")
else:
    st.latex(r"h = x + \mathrm{Attn}\big(\mathrm{LN}(x)\big),\qquad y = \mathrm{LN}_{final}\big(h + "
             r"\mathrm{FFN}(\mathrm{LN}(h))\big)")
st.markdown("LN turns each row into mean 0, standard deviation 1: "
            r"$\mathrm{LN}(x) = (x - \bar{x})/(\sigma + 10^{-5})$. FFN is ReLU between two linear maps, per token. "
            "Post-norm normalises the running sum after every addition; pre-norm leaves the residual stream "
            "untouched and normalises only what goes into each part (plus once at the very end).")
trace = blocks.transformer_block(blocks.SEED_X, blocks.seeded_params(), norm)
show_figure(matrix_grid(trace.steps, cols=4, row_labels=["tok 1", "tok 2", "tok 3"]), "steps", "block-steps")
stats = {name: blocks.row_stats(m)[:, 1] for name, m in trace.steps.items()}
st.dataframe(pd.DataFrame(stats, index=["token 1 std", "token 2 std", "token 3 std"]).T.round(3))

st.header("3 · The seed's numpy block, rerun")
st.markdown("Seed 42, d_model 4, d_ff 8; Wq, Wk, Wv, W1, W2 drawn in that order (× 0.1), zero biases, one head, "
            "no W^O, post-norm, on the three tokens above. Our block gives:")
ours = blocks.seed_block().output
st.code(np.array2string(np.round(ours, 3)), language="text")
printed = blocks.row_stats(blocks.SEED_PRINTED)[:, 1]
st.warning("The seed prints a different matrix, " + np.array2string(blocks.SEED_PRINTED) + ". Its rows have "
           f"standard deviation {', '.join(f'{s:.3f}' for s in printed)}, yet a row straight out of this layer "
           "norm always has standard deviation 1.000 (ours: " + ", ".join(f"{s:.3f}" for s in
                                                                         blocks.row_stats(ours)[:, 1]) +
           "). So no weights can make that code print those numbers: we show what the code really computes.")
