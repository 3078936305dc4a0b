"""Lab: why scores are divided by √d_k before the softmax, and what temperature does to a real head."""
import streamlit as st

from explorer import maths
from explorer.labs import real_model
from explorer.model.registry import EMBEDDED_ENCODER
from explorer.plots.concepts import labelled_heatmap, saturation_figure, weights_bars
from explorer.ui import cached
from explorer.ui.labs import english_only, three_scores
from explorer.ui.predict_first import ask_first
from explorer.ui.widgets import attention_or_stop, show_figure, use_app_navigation
from explorer.ui.words import tip
from explorer.words import numbers
from explorer.words.i18n import _

use_app_navigation()

curves = cached.saturation_curves()

st.title(_("Softmax saturation: why divide by √d_k"))
st.markdown(_("A score is a dot product of a query and a key: a sum of d_k products, one per dimension. Softmax then "
              "turns the scores of a row into weights."))
std_256 = cached.score_std(256)   # 4000 random pairs: once per server
if ask_first(real_model.spread_question(std_256),
        "softmax", _("The explanation and the spread measured for every d_k")):
    st.markdown(_("If every component is random with variance 1, each product has variance 1 and the variances add "
                  "up, so scores spread like √d_k. Softmax turns large gaps between scores into near-certainty, and a "
                  "near-certain softmax barely responds when the scores change, so the layer stops learning. Dividing "
                  "by √d_k undoes the spread."))
    # two lines, so that the formula fits a phone
    st.latex(r"\begin{gathered}\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k\\"
             r"\Rightarrow\quad \operatorname{sd}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right)=1\end{gathered}")
    d_k = st.select_slider(_("d_k (dimensions per query and key)"), options=maths.LOG_DK,
                           value=real_model.SOFTMAX_D_K, help=tip("d_k"))
    stats = cached.saturation_stats(d_k)
    c = st.columns(4)
    c[0].metric(_("measured sd of q·k"), numbers.number(stats['score_std'], 2))
    c[1].metric("√d_k", numbers.number(stats['sqrt_d_k'], 2))
    c[2].metric(_("largest weight, raw"), numbers.number(stats['max_weight_raw'], 3))
    c[3].metric(_("largest weight, ÷√d_k"), numbers.number(stats['max_weight_scaled'], 3))
    q, k = maths.random_queries_keys(d_k, 1, 8, seed=0)
    raw = maths.attention_scores(q, k, scale=1.0)[0]
    left, right = st.columns([2, 3])
    show_figure(lambda: weights_bars([_("key {n}").format(n=i + 1) for i in range(8)], {
        "softmax(q·k)": maths.softmax(raw), "softmax(q·k / √d_k)": maths.softmax(raw / d_k ** 0.5)},
        title=_("One random query, 8 random keys, d_k = {d_k}").format(d_k=d_k)), "bars", "softmax-bars", where=left,
        view=(d_k,))
    show_figure(lambda: saturation_figure(curves, d_k), "saturation", "saturation", where=right, view=(d_k,))
    st.caption(_("Averages over 2000 random queries, 8 keys each. Gradient size is the Frobenius norm of the "
                 "softmax Jacobian: how much the weights move per unit change of the scores."))

three_scores()   # the same for everyone: drawn once per server

st.subheader(_("A real head at different temperatures"))
st.markdown(_("Pre-softmax scores of one head of {model} (already divided by its √d_k). Dividing them by a "
              "temperature T below 1 widens the gaps, just like a larger d_k without scaling; T = 1 is the "
              "model's own attention.").format(model=EMBEDDED_ENCODER))
left, right = st.columns([3, 2])
text = right.text_input(_("Sentence"), real_model.TEMPERATURE_TEXT, help=english_only(EMBEDDED_ENCODER))
if not text.strip():
    st.info(_("Type a sentence to see a real head."))
    st.stop()
result = attention_or_stop(EMBEDDED_ENCODER, text)  # says when the text was cut or the GPU fell back
c = right.columns(2)
layer = c[0].selectbox(_("Layer"), range(result.facts.n_layers), real_model.TEMPERATURE_HEAD[0],
                       lambda i: _("layer {n}").format(n=i + 1))
head = c[1].selectbox(_("Head"), range(result.facts.n_heads), real_model.TEMPERATURE_HEAD[1],
                      lambda i: _("head {n}").format(n=i + 1))
t = right.select_slider(_("Temperature T"), options=[0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0], value=1.0,
                        help=tip("temperature"))
view = real_model.temperature_view(cached.head_scores(result, layer, head), t)
right.metric(_("mean largest weight"), numbers.number(view.mean_max_weight, 3))
right.metric(_("mean entropy (nats)"), numbers.number(view.mean_entropy, 3))
right.metric(_("one-hot rows (max > 0.99)"), _("{n} of {total}").format(n=view.one_hot_rows, total=len(result.tokens)))
show_figure(lambda: labelled_heatmap(view.weights, result.tokens, result.tokens, annotate=False,
                                     title=_("softmax(scores / {t}), layer {layer}, head {head}").format(
                                         t=numbers.number(t), layer=layer + 1, head=head + 1)),
            "temperature", "temperature", where=left, view=(text, layer, head, t))
