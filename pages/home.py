"""Home: what the explorer is, the lessons, every page in one line each, and one example to click."""
import streamlit as st

from explorer.examples import FLIP_PAIRS
from explorer.model import loading, registry
from explorer.sitemap import table
from explorer.ui import widgets as ui
from explorer.ui.views import lessons
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("Attention explorer"))
st.markdown(_(
    "Look inside the attention of real transformer models, one head at a time. Type a sentence, pick a layer "
    "and a head, and see which words each word attends to. Every weight shown comes from the model itself, "
    "and each head is checked against our own from-scratch recompute of softmax(QKᵀ/√d_k)."))
lessons.home_section()   # the lessons first, each one click from running with a class

a, b, query, candidates = FLIP_PAIRS[next(iter(FLIP_PAIRS))]
with st.container(border=True):
    st.markdown(_("**Try it:** in *“The animal didn't cross the street because it was too tired”*, what does *it* "
                  "refer to? Change *tired* to *wide* and the answer changes. Do the model's heads notice? (The "
                  "model reads English, so the sentences stay English.)"))
    ui.page_link(table.FLIP.file, _("Open the flip demo"), icon=":material/arrow_forward:",
                 query_params={"model": registry.EMBEDDED_ENCODER, "text": a, "text_b": b, "query": query,
                               "cands": ",".join(candidates)})

st.header(_("Every page"))
st.caption(_("What you do there, and the question it answers. New words are explained in the glossary and, on "
             "each page, under “Words on this page” in the sidebar."))
sections = table.on_home()
for row in (sections[:2], sections[2:]):   # two per row: a line stays readable beside its neighbour
    for column, (heading, pages) in zip(st.columns(2), row):
        with column:
            st.subheader(_(heading))
            for page in pages:
                ui.page_link(page.file, _(page.title), icon=page.icon)
                st.caption(_(page.does) + " *" + _(page.asks) + "*")

left, right = st.columns(2)
with left:
    st.subheader(_("Embedded models"))
    st.caption(_("Shipped with the app, so they work offline. Hub models load when the server allows it."))
    for spec in registry.EMBEDDED.values():
        st.markdown(f"- **{spec.name}** (" + _(spec.kind) + "): " + _(spec.about))
with right:
    st.subheader(_("Device"))
    st.markdown(_("Models run on **{device}**.").format(device=loading.device_label(loading.best_device())))
