"""Lab: heads and the block — split d_model into heads, then build one transformer block in post- and pre-norm."""
import numpy as np
import pandas as pd
import streamlit as st

from explorer.labs import blocks
from explorer.plots.positions import head_split, heads_side_by_side, matrix_grid
from explorer.ui.predict_first import ask_first
from explorer.ui.widgets import show_figure, use_app_navigation
from explorer.ui.words import tip
from explorer.words import numbers
from explorer.words.i18n import _

use_app_navigation()

st.title(_("Heads and the block"))
st.markdown(_("Attention is one ingredient. A transformer layer runs several attention heads side by side, glues "
              "their answers back together, then passes every token through a small feed-forward network, with a "
              "shortcut (residual) and a normalisation around each part."))

st.header(_("1 · Many heads for the price of one"))
c1, c2, c3 = st.columns(3)
d_model = c1.select_slider(_("Model width d_model"), [8, 16, 64, 384, 512, 768], value=512, help=tip("d_model"))
n_heads = c2.select_slider(_("Heads h"), [h for h in (1, 2, 3, 4, 6, 8, 12, 16) if d_model % h == 0], value=8)
n_tokens = c3.slider(_("Tokens n"), 2, 10, 5)
cost = blocks.head_cost(n_tokens, d_model, n_heads)
st.markdown(_("Q, K and V are computed once at full width, then their {d} columns are cut into {h} slices of "
              "**d_head = {d} / {h} = {d_head}**. Each head attends inside its slice only.").format(
    d=d_model, h=n_heads, d_head=cost.d_head))
show_figure(head_split(d_model, n_heads, n_tokens), "split", "head-split")
st.latex(r"\text{%s}_i = \mathrm{softmax}\!\Big(\tfrac{Q_i K_i^\top}{\sqrt{d_{head}}}\Big) V_i,\qquad "
         r"\mathrm{MultiHead}(X) = \big[\text{%s}_1;\dots;\text{%s}_h\big]\,W^O" % ((_("head"),) * 3))
rng = np.random.default_rng(0)
x = rng.normal(size=(n_tokens, d_model))
w = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _unused in range(4)]
mh = blocks.multi_head_attention(x, *w[:3], n_heads, wo=w[3])
st.markdown(_("Random tokens and weights: every head finds its own pattern ({shown} of {h} shown). Concatenating the "
              "heads gives back a {rows} × {cols} matrix, and W^O ({d} × {d}) mixes the heads' answers into the "
              "output, also {out_rows} × {out_cols}.").format(
    shown=min(n_heads, 8), h=n_heads, rows=mh.concat.shape[0], cols=mh.concat.shape[1], d=d_model,
    out_rows=mh.output.shape[0], out_cols=mh.output.shape[1]))
show_figure(heads_side_by_side(mh.weights, [f"t{i + 1}" for i in range(n_tokens)]), "heads", "block-heads")
if ask_first(blocks.heads_cost_question(cost, n_tokens, d_model, n_heads),
        "heads", _("The count of multiplications")):
    st.dataframe(numbers.table(pd.DataFrame({_("multiplications"): [cost.per_head, cost.all_heads,
                                                                    cost.one_full_head, cost.projections]},
                              index=[_("one head (QKᵀ and weights·V, width {d_head})").format(d_head=cost.d_head),
                                     _("all {h} heads").format(h=n_heads),
                                     _("one head of full width {d}").format(d=d_model),
                                     _("projections W^Q, W^K, W^V, W^O")])))

st.header(_("2 · One block from scratch"))
norm = st.radio(_("Where the layer norm sits"), ["post", "pre"], horizontal=True, help=tip("layer norm"),
                format_func={"post": _("post-norm (2017 original)"), "pre": _("pre-norm (most current models)")}.get)
if norm == "post":
    st.latex(r"h = \mathrm{LN}\big(x + \mathrm{Attn}(x)\big),\qquad y = \mathrm{LN}\big(h + \mathrm{FFN}(h)\big)")
else:
    st.latex(r"h = x + \mathrm{Attn}\big(\mathrm{LN}(x)\big),\qquad y = \mathrm{LN}_{final}\big(h + "
             r"\mathrm{FFN}(\mathrm{LN}(h))\big)")
st.markdown(_("LN turns each row into mean 0, standard deviation 1: {formula}. FFN is ReLU between two linear maps, "
              "per token. Post-norm normalises the running sum after every addition; pre-norm leaves the residual "
              "stream untouched and normalises only what goes into each part (plus once at the very end).").format(
    formula=r"$\mathrm{LN}(x) = (x - \bar{x})/(\sigma + 10^{-5})$"))
trace = blocks.transformer_block(blocks.SEED_X, blocks.seeded_params(), norm)
steps = {_(name): m for name, m in trace.steps.items()}   # the step names, in the session's language
show_figure(matrix_grid(steps, cols=4, row_labels=[_("tok {n}").format(n=i) for i in (1, 2, 3)]), "steps",
            "block-steps")
stats = {name: blocks.row_stats(m)[:, 1] for name, m in steps.items()}
st.dataframe(numbers.table(pd.DataFrame(stats, index=[_("token {n} std").format(n=i) for i in (1, 2, 3)]).T))

st.header(_("3 · The seed's numpy block, rerun"))
st.markdown(_("Seed 42, d_model 4, d_ff 8; Wq, Wk, Wv, W1, W2 drawn in that order (× 0.1), zero biases, one head, "
              "no W^O, post-norm, on the three tokens above. Our block gives:"))
ours = blocks.seed_block().output
st.code(np.array2string(np.round(ours, 3)), language="text")
st.warning(blocks.seed_mismatch(ours))
