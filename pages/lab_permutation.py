"""Lab: self-attention without positions cannot tell "dog bites man" from "man bites dog"."""
import numpy as np
import streamlit as st

from explorer.labs import real_model
from explorer.model.registry import EMBEDDED_ENCODER
from explorer.plots.concepts import labelled_heatmap
from explorer.ui.cached import get_model, permutation_demo
from explorer.ui.labs import english_only
from explorer.ui.predict_first import ask_first
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure, use_app_navigation
from explorer.words import numbers
from explorer.words.i18n import _

use_app_navigation()

st.title(_("Permutation: does attention know word order?"))
st.markdown(_("Self-attention compares tokens by their vectors only. Below, attention is built from scratch on the "
              "real token vectors of {model}'s embedding table (random but fixed W_Q, W_K, W_V), without any "
              "position. Shuffle the words and predict what happens to each word's output.").format(
    model=EMBEDDED_ENCODER))

text = st.text_input(_("Sentence"), real_model.PERMUTATION_TEXT, help=english_only(EMBEDDED_ENCODER))
loaded = get_model(EMBEDDED_ENCODER)
ids = real_model.content_token_ids(loaded, text) if text.strip() else []
if not 2 <= len(ids) <= 16:
    st.info(_("Type a sentence of 2 to 16 tokens."))
    st.stop()
labels = [f"{i + 1} · {t}" for i, t in enumerate(loaded.tokenizer.convert_ids_to_tokens(ids))]
key = f"perm_order_{text}"


def shuffle():
    st.session_state[key] = real_model.new_order(labels, st.session_state.get(key, []))


if key not in st.session_state:
    st.session_state[key] = [labels[i] for i in real_model.first_order(len(labels))]
picked = st.multiselect(_("Shuffle by hand: pick the tokens in their new order"), labels, key=key)
st.button(_("Shuffle randomly"), on_click=shuffle)
if len(picked) != len(labels):
    st.info(_("Pick every token once to complete the new order."))
    st.stop()
order = [labels.index(p) for p in picked]
demo = permutation_demo(text, order)
st.markdown(_("**Original:** {original}  →  **shuffled:** {shuffled}").format(
    original=literal(" ".join(demo.tokens)), shuffled=literal(" ".join(demo.shuffled))))

if not ask_first(real_model.permutation_question(demo, shown=literal),
        "perm", _("The outputs in both orders and why")):
    st.stop()
st.markdown(_("Nothing in the scores says which token came first, so shuffling the input just shuffles the outputs: "
              "each token ends up with exactly the same vector, wherever it sits."))
st.latex(r"\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X)\quad\text{%s } P" % _("for every permutation matrix"))

for column, (label, value, about) in zip(st.columns(4), real_model.gap_metrics(demo)):
    column.metric(label, value, help=about)
st.caption(_("Largest difference between a token's output in the original and in the shuffled sentence."))
lim = float(np.abs(demo.out[:, :16]).max())
titles = (_("No positions, original order: outputs (16 of 64 dims)"),
          _("No positions, shuffled order: outputs (16 of 64 dims)"))
for col, rows, toks, name, title in zip(st.columns(2), (demo.out, demo.out_shuffled), (demo.tokens, demo.shuffled),
                                        ("original", "shuffled"), titles):
    show_figure(lambda rows=rows, toks=toks, title=title: labelled_heatmap(
        rows[:, :16], toks, [str(i + 1) for i in range(16)], colorscale="RdBu", annotate=False, fmt=".2f", title=title,
        x_title=_("output dimension"), y_title=_("token"),
        zmin=-lim, zmax=lim), f"out_{name}", f"outputs-{name}", where=col, view=(text, *order))
st.markdown(_("Same rows, new order. Now add the model's learned position vectors to the token vectors: a token "
              "that moves gets a different position vector, so its output changes. The real model does the same, "
              "and if every position id is set to 0 it becomes blind to order again."))
tiny = {c: lambda x: numbers.scientific(x, 1) for c in (_("no positions"), _("real model, positions = 0"))}
st.dataframe(numbers.table(real_model.permutation_table(demo), formats=tiny), hide_index=True)
