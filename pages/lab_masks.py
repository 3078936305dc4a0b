"""Lab: masks — who may look at whom (encoder vs decoder), and why padding has to be masked."""
import numpy as np
import streamlit as st

from explorer import maths
from explorer.labs import blocks
from explorer.labs.quiz import Question
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.plots.positions import MASKED_COLOR, UNMASKED_COLOR, line, padding_change_bars, side_by_side
from explorer.ui import cached
from explorer.ui.quiz import predict_then_reveal
from explorer.ui.text import literal
from explorer.ui.widgets import attention_or_stop, show_figure, use_app_navigation

use_app_navigation()

st.title("Masks: who may look at whom")
st.markdown("A mask is a yes/no table over (query, key) pairs. Where it says no, the score is set to −∞ before "
            "the softmax, so that key gets weight exactly 0 and the row's weight is shared among the rest.")
st.latex(r"\mathrm{weights} = \mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + M\Big),\qquad "
         r"M_{ij} = \begin{cases} 0 & \text{key } j \text{ allowed} \\ -\infty & \text{blocked} \end{cases}")

st.header("1 · Encoder vs decoder")
text = st.text_input("Sentence", "The animal didn't cross the street because it was too tired.", max_chars=300)
enc, dec = attention_or_stop(EMBEDDED_ENCODER, text), attention_or_stop(EMBEDDED_DECODER, text)
n_e, n_d = len(enc.tokens), len(dec.tokens)
show_figure(lambda: side_by_side({
    f"encoder: all {n_e}² = {n_e * n_e} pairs": (np.ones((n_e, n_e)), enc.tokens),
    f"decoder: {n_d}·{n_d + 1}/2 = {maths.causal_mask(n_d).sum()} pairs":
        (maths.causal_mask(n_d).astype(float), dec.tokens)}, title="The masks (dark = may attend)"), "masks", "masks",
    view=(text,))
st.markdown(f"The encoder ({EMBEDDED_ENCODER}) reads the whole sentence at once, in both directions. The decoder "
            f"({EMBEDDED_DECODER}) is trained to guess the next token, so a token must not see what comes after "
            "it: the upper triangle is blocked. (The two models cut the sentence into different tokens.)")
c1, c2, c3, c4 = st.columns(4)
le = c1.slider("Encoder layer", 0, enc.weights.shape[0] - 1, 2)
he = c2.slider("Encoder head", 0, enc.weights.shape[1] - 1, 0)
ld = c3.slider("Decoder layer", 0, dec.weights.shape[0] - 1, 10)
hd = c4.slider("Decoder head", 0, dec.weights.shape[1] - 1, 0)
we, wd = enc.weights[le, he], dec.weights[ld, hd]
ahead_e = maths.weight_on_later_keys(we).mean()
ahead_d = maths.weight_on_later_keys(wd).max()
show_figure(lambda: side_by_side({f"encoder layer {le}, head {he}": (we, enc.tokens),
                                   f"decoder layer {ld}, head {hd}": (wd, dec.tokens)}, title="Real attention weights"),
            "real", "masks-real", view=(text, le, he, ld, hd))
st.markdown(f"Weight on later tokens: the encoder's tokens put **{ahead_e:.1%}** of their attention on later "
            f"tokens on average; the decoder's largest is **{ahead_d:g}**: exactly zero, by the mask.")

st.header("2 · The padding mask")
st.markdown("To run sentences as one batch they must have the same length, so short ones get [PAD] tokens. "
            "The `attention_mask` tells the model which positions are real. Forget it, and nothing crashes: "
            "the real tokens simply attend to padding too, and their vectors quietly change.")
c1, c2 = st.columns(2)
short = c1.text_input("Short sentence", blocks.PADDING_PAIR[0], max_chars=200)
long = c2.text_input("Long sentence", blocks.PADDING_PAIR[1], max_chars=400)
try:
    exp = cached.padding_experiment(short, long)
except ValueError as err:
    st.warning(literal(err))
    st.stop()
real = exp.tokens[:exp.n_real]
mean_off, mean_on = float(exp.change_unmasked.mean()), float(exp.change_masked.max())
options = ("not at all (under 0.01%)", "a little (under 5%)", "a lot (5% or more)")
answered = predict_then_reveal(Question(
    prompt=f"“{literal(short)}” ({exp.n_real} tokens) is padded with {exp.n_pad} [PAD] tokens and the batch is run "
           "through "
           f"{EMBEDDED_ENCODER} **without** the attention mask. Compared with running it alone, how far do its "
           "real tokens' final vectors move (relative distance, averaged over its tokens)?",
    options=options, correct=options[0 if mean_off < 1e-4 else 1 if mean_off < 0.05 else 2],
    reveal=f"Without the mask they move by **{mean_off:.1%}** on average (most: {exp.change_unmasked.max():.1%}, "
           f"at “{literal(real[int(exp.change_unmasked.argmax())])}”). With the mask the largest change is "
           f"**{mean_on:.1e}**: float rounding, the same vectors as running the sentence alone."), key="padding")
if answered is None:
    st.caption("Commit a prediction to see the measurements.")
    st.stop()
show_figure(lambda: padding_change_bars(real, exp.change_masked, exp.change_unmasked), "padding", "padding-change",
            view=(short, long))
show_figure(lambda: line(np.arange(len(exp.pad_weight_unmasked)), {
    "padding NOT masked": exp.pad_weight_unmasked, "padding masked": exp.pad_weight_masked},
    title="Share of the real tokens' attention that lands on [PAD] (mean over heads and tokens)", x_title="layer",
    y_title="weight on [PAD]", mode="lines+markers", colors=[UNMASKED_COLOR, MASKED_COLOR]), "pad_weight",
    "padding-weight", view=(short, long))
