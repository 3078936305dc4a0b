"""Lab: masks — who may look at whom (encoder vs decoder), and why padding has to be masked."""
import numpy as np
import streamlit as st

from explorer import maths
from explorer.labs import blocks
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.plots.positions import MASKED_COLOR, UNMASKED_COLOR, line, padding_change_bars, side_by_side
from explorer.ui import cached
from explorer.ui.labs import english_only
from explorer.ui.predict_first import ask_first
from explorer.ui.text import literal
from explorer.ui.widgets import attention_or_stop, show_figure, use_app_navigation
from explorer.words import numbers
from explorer.words.i18n import _

use_app_navigation()

st.title(_("Masks: who may look at whom"))
st.markdown(_("A mask is a yes/no table over (query, key) pairs. Where it says no, the score is set to −∞ before "
              "the softmax, so that key gets weight exactly 0 and the row's weight is shared among the rest."))
st.latex(r"\text{%s} = \mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + M\Big),\qquad "
         r"M_{ij} = \begin{cases} 0 & \text{%s} \\ -\infty & \text{%s} \end{cases}"
         % (_("weights"), _("key j allowed"), _("blocked")))

st.header(_("1 · Encoder vs decoder"))
text = st.text_input(_("Sentence"), "The animal didn't cross the street because it was too tired.", max_chars=300,
                     help=english_only(EMBEDDED_ENCODER))
enc, dec = attention_or_stop(EMBEDDED_ENCODER, text), attention_or_stop(EMBEDDED_DECODER, text)
n_e, n_d = len(enc.tokens), len(dec.tokens)
show_figure(lambda: side_by_side({
    _("encoder: all {n}² = {pairs} pairs").format(n=n_e, pairs=n_e * n_e): (np.ones((n_e, n_e)), enc.tokens),
    _("decoder: {n}·{n1}/2 = {pairs} pairs").format(n=n_d, n1=n_d + 1, pairs=maths.causal_mask(n_d).sum()):
        (maths.causal_mask(n_d).astype(float), dec.tokens)}, title=_("The masks (dark = may attend)")), "masks",
    "masks", view=(text,))
st.markdown(_("The encoder ({encoder}) reads the whole sentence at once, in both directions. The decoder ({decoder}) "
              "is trained to guess the next token, so a token must not see what comes after it: the upper triangle "
              "is blocked. (The two models cut the sentence into different tokens.)").format(
    encoder=EMBEDDED_ENCODER, decoder=EMBEDDED_DECODER))
c1, c2, c3, c4 = st.columns(4)
le = c1.slider(_("Encoder layer"), 0, enc.weights.shape[0] - 1, 2)
he = c2.slider(_("Encoder head"), 0, enc.weights.shape[1] - 1, 0)
ld = c3.slider(_("Decoder layer"), 0, dec.weights.shape[0] - 1, 10)
hd = c4.slider(_("Decoder head"), 0, dec.weights.shape[1] - 1, 0)
we, wd = enc.weights[le, he], dec.weights[ld, hd]
ahead_e = maths.weight_on_later_keys(we).mean()
ahead_d = maths.weight_on_later_keys(wd).max()
show_figure(lambda: side_by_side({_("encoder layer {layer}, head {head}").format(layer=le, head=he): (we, enc.tokens),
                                   _("decoder layer {layer}, head {head}").format(layer=ld, head=hd): (wd, dec.tokens)},
                                  title=_("Real attention weights")),
            "real", "masks-real", view=(text, le, he, ld, hd))
st.markdown(_("Weight on later tokens: the encoder's tokens put **{ahead_e}** of their attention on later "
              "tokens on average; the decoder's largest is **{ahead_d}**: exactly zero, by the mask.").format(
    ahead_e=numbers.percent(ahead_e, 1), ahead_d=numbers.number(ahead_d)))

st.header(_("2 · The padding mask"))
st.markdown(_("To run sentences as one batch they must have the same length, so short ones get [PAD] tokens. "
              "The `attention_mask` tells the model which positions are real. Forget it, and nothing crashes: "
              "the real tokens simply attend to padding too, and their vectors quietly change."))
c1, c2 = st.columns(2)
short = c1.text_input(_("Short sentence"), blocks.PADDING_PAIR[0], max_chars=200)
long = c2.text_input(_("Long sentence"), blocks.PADDING_PAIR[1], max_chars=400)
try:
    exp = cached.padding_experiment(short, long)
except ValueError as err:   # a PaddingError says why in English and its fields: translated here
    st.warning(literal(_(err.message).format(**err.fields) if isinstance(err, blocks.PaddingError) else err))
    st.stop()
real = exp.tokens[:exp.n_real]
if not ask_first(blocks.padding_question(exp, EMBEDDED_ENCODER, shown=literal), "padding", _("The measurements")):
    st.stop()
show_figure(lambda: padding_change_bars(real, exp.change_masked, exp.change_unmasked), "padding", "padding-change",
            view=(short, long))
show_figure(lambda: line(np.arange(len(exp.pad_weight_unmasked)), {
    _("padding NOT masked"): exp.pad_weight_unmasked, _("padding masked"): exp.pad_weight_masked},
    title=_("Share of the real tokens' attention that lands on [PAD] (mean over heads and tokens)"),
    x_title=_("layer"), y_title=_("weight on [PAD]"), mode="lines+markers", colors=[UNMASKED_COLOR, MASKED_COLOR]),
    "pad_weight", "padding-weight", view=(short, long))
