"""Lab: why attention replaced recurrence (one step between any two positions) and what it costs (n × n)."""
import streamlit as st

from explorer import maths
from explorer.labs import real_model
from explorer.labs.quiz import Question, nearest_option
from explorer.plots.concepts import cost_figure, path_length_figure
from explorer.ui.predict_first import ask_first
from explorer.ui.widgets import show_figure, use_app_navigation
from explorer.words import numbers
from explorer.words.i18n import _

use_app_navigation()

st.title(_("Why attention: one step between any two words"))
st.markdown(_("A recurrent network reads one token per step and carries everything it knows in a single state "
              "vector. For a word to influence another word k places later, its information has to survive k "
              "updates of that state. Self-attention lets every position read every other position directly, "
              "in one step, and computes all positions at the same time instead of one after another."))
st.latex(r"\begin{gathered} \text{%s}_{\text{%s}}(i, j) = |i - j| \\ \text{%s}_{\text{%s}}(i, j) = 1 \end{gathered}"
         % (_("path"), _("recurrent"), _("path"), _("attention")))   # two lines: one is wider than a phone

example = _("The keys that the old man left on the kitchen table last night were gone.")   # no model reads it
words = st.text_input(_("Sentence"), example).split()
if len(words) < 2:
    st.info(_("Type at least two words."))
    st.stop()
c = st.columns(2)
i = c[0].selectbox(_("From word"), range(len(words)), index=min(1, len(words) - 1),
                   format_func=lambda p: f"{p + 1}. {words[p]}")
j = c[1].selectbox(_("To word"), range(len(words)), index=min(13, len(words) - 1),
                   format_func=lambda p: f"{p + 1}. {words[p]}")
c = st.columns(2)
c[0].metric(_("recurrent model: steps"), maths.path_length(i, j, "recurrent"))
c[1].metric(_("self-attention: steps"), maths.path_length(i, j, "attention"))
n_show = min(len(words), 32)
show_figure(path_length_figure(maths.path_length_matrix(n_show, "recurrent"),
                                   maths.path_length_matrix(n_show, "attention"),
                                   pair=(i + 1, j + 1) if max(i, j) < n_show else None), "paths", "path-lengths")

st.subheader(_("The price: a table of weights for every head"))
c = st.columns(2)
n = c[0].select_slider(_("Sequence length n"), options=[2 ** p for p in range(4, 14)], value=512)
d = c[1].selectbox(_("Model width d (BERT-base: 768)"), [384, 768, 1024], index=1)
t = maths.cost_table([n, 2 * n], d_model=d)
grow = {_("{k}× larger").format(k=k): k for k in (2, 4, 8)}
if ask_first(Question(
    prompt=_("Each head fills a table of weights: one for every query and key it compares. The input doubles from {n} "
             "to {n2} tokens. Which of these three factors, 2×, 4× or 8×, does each head's table grow by?").format(
        n=n, n2=2 * n),
    options=tuple(grow),
    correct=nearest_option(t["score_entries"][1] / t["score_entries"][0], grow),
    reveal=_("{before} entries become {after}: ×{factor}. For 12 layers × 12 heads that is {mem_before} → "
             "{mem_after} per sequence.").format(
        before=numbers.integer(t["score_entries"][0]), after=numbers.integer(t["score_entries"][1]),
        factor=numbers.number(t["score_entries"][1] / t["score_entries"][0]),
        mem_before=real_model.format_bytes(t["attention_memory_bytes"][0]),
        mem_after=real_model.format_bytes(t["attention_memory_bytes"][1]))),
        "why", _("The cost for every length and why BERT stops at 512 tokens")):
    st.markdown(_("Attention compares every position with every other, so each head in each layer fills an n × n "
                  "table of weights, and training keeps them all for the backward pass. A recurrent model does "
                  "n·d² work in n steps that must wait for each other; attention does n²·d work all at once, which "
                  "is more arithmetic once n exceeds d, but arithmetic that a GPU can do in parallel."))
    st.latex(r"\begin{aligned}\text{%s: }& O(n^2 d)\ \text{%s}, O(1)\ \text{%s}\\"   # fits a phone
             r"\text{%s: }& O(n d^2)\ \text{%s}, O(n)\ \text{%s}\end{aligned}"
             % (_("attention"), _("work"), _("steps"), _("recurrent"), _("work"), _("steps")))
    ns = [2 ** p for p in range(4, 14)]
    show_figure(cost_figure(maths.cost_table(ns, d_model=d), d_model=d, selected_n=n), "cost", "cost")
    st.dataframe(numbers.table(real_model.cost_frame(ns, d_model=d), 1), hide_index=True)
    st.subheader(_("Why 512 tokens"))
    m512 = real_model.format_bytes(maths.cost_table([512])["attention_memory_bytes"][0])
    st.markdown(_("BERT-base has 12 layers × 12 heads. At 512 tokens its attention weights alone take {memory} per "
                  "sequence in 32-bit floats, and a training batch holds dozens of sequences next to every other "
                  "activation, on the accelerators of 2018, typically with 16 GB of memory or less. Each doubling of "
                  "the length multiplies that by four, so the original BERT spent most of its pre-training on "
                  "128-token inputs and only the last part on 512. Once trained, the limit is built in: the learned "
                  "position table has 512 rows, so there is no position vector for token 513. Longer documents must "
                  "be cut, split into chunks, or given to a model designed for long inputs.").format(memory=m512))
