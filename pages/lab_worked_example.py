"""Lab: scaled dot-product attention worked by hand on three tokens (d_k = 2)."""
import numpy as np
import streamlit as st

from explorer import maths
from explorer.labs import worked
from explorer.labs.notation import latex_matrix, latex_number, latex_weighted_sum
from explorer.plots.concepts import labelled_heatmap
from explorer.ui.predict_first import predict_then_reveal
from explorer.ui.widgets import show_figure, use_app_navigation
from explorer.words import numbers
from explorer.words.i18n import _

use_app_navigation()

SEED = {"Q": maths.WORKED_Q, "K": maths.WORKED_K, "V": maths.WORKED_V}


def reset():
    for name, m in SEED.items():
        for (r, c), v in np.ndenumerate(m):
            st.session_state[f"{name}{r}{c}"] = float(v)


st.title(_("Worked example: attention by hand"))
st.markdown(_("Three tokens, two dimensions each: small enough to check every number with a pencil. Each token "
              "asks a question (its row of **Q**), advertises what it contains (its row of **K**) and carries a "
              "payload (its row of **V**). Edit any entry and every step below is recomputed."))
st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V")

if "Q00" not in st.session_state:
    reset()
mats = {}
for col, name in zip(st.columns(3), SEED):
    with col:
        st.markdown(_("**{matrix}** (row = token)").format(matrix=name))
        rows = []
        for r in range(3):   # a row is one flex box: 3 messages to a follower, not the 5 of st.columns(2)
            with st.container(horizontal=True, gap="small"):
                rows.append([st.number_input(f"{name}[{r + 1},{c + 1}]", step=0.5, key=f"{name}{r}{c}",
                                             label_visibility="collapsed") for c in range(2)])
        mats[name] = np.array(rows)
st.button(_("Reset to the worked example"), on_click=reset)

s = maths.attention_steps(mats["Q"], mats["K"], mats["V"])
steps = st.columns(2) + st.columns(2)
steps[0].markdown(_("##### Step 1 · compare every query with every key"))
steps[0].latex(r"QK^\top = " + latex_matrix(mats["Q"]) + latex_matrix(mats["K"].T) + " = " + latex_matrix(s["raw"]))
steps[1].markdown(_("##### Step 2 · divide by √d_k = √2"))
steps[1].latex(r"\frac{QK^\top}{" + latex_number(s["sqrt_d_k"]) + "} = " + latex_matrix(s["scaled"]))
steps[2].markdown(_("##### Step 3 · softmax each row"))
steps[2].latex(r"\mathrm{softmax} = " + latex_matrix(s["weights"]))
steps[2].caption(_("Exponentiate, then divide by the row total: each row is positive and sums to 1."))
steps[3].markdown(_("##### Step 4 · blend the value vectors"))
scores, weights, output = _("scores"), _("weights"), _("output")   # the formulas' words, in the session's language
steps[3].latex(rf"\text{{{output}}} = \text{{{weights}}}\,V = " + latex_matrix(s["output"]))

left, right = st.columns([3, 2])
i = left.selectbox(_("Follow one query through all four steps"), [1, 2, 3],
                   format_func=lambda r: _("token {n}").format(n=r)) - 1
sep = numbers.list_separator().strip()   # "5{,}056;" where the decimal mark is a comma
left.latex(rf"\text{{{scores}}} = {latex_matrix(s['scaled'][i])}{sep}\quad "
           rf"e^{{\text{{{scores}}}}} = {latex_matrix(s['exp'][i])}")
left.latex(rf"\textstyle\sum e^{{\text{{{scores}}}}} = {latex_number(s['exp_sum'][i])}{sep}\quad"
           rf"\text{{{weights}}} = {latex_matrix(s['weights'][i])}")
left.latex(latex_weighted_sum(s["weights"][i], mats["V"]))
labels = [_("token {n}").format(n=r) for r in (1, 2, 3)]
show_figure(lambda: labelled_heatmap(s["weights"], labels, labels, title=_("Attention weights (rows sum to 1)")),
            "weights", "worked-weights", where=right, view=tuple(mats["Q"].ravel()) + tuple(mats["K"].ravel()))

predict_then_reveal(worked.scale_question(s), key="worked")
