"""Head geometry: every query and key of a head over a corpus of 200 sentences, in one 2-D map (AttentionViz)."""
import streamlit as st

from explorer.geometry.project import METHODS
from explorer.plots.geometry import COLOURS
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import geometry as geo
from explorer.words.i18n import N_, _

ui.use_app_navigation()
st.title(_("Head geometry"))
st.caption(_("A heatmap shows one head on one text. Here one head's queries and keys from 200 sentences share one "
             "map: a query lands near the keys it gives weight to, so what the head does shows as a shape — bands "
             "by position, clusters by word, or every query crowding one key."))

controls = teacher_driven("layer", "head", (N_("map"), "geo_method", {"pca": "PCA", "tsne": "t-SNE"}),
                          (N_("colour by"), "geo_colour", COLOURS))
with controls:   # folded away while a student follows
    top = st.columns([2, 1, 1])
    with top[0]:
        model = pickers.model_picker()
run = geo.corpus_pass(model)   # its progress shows outside the fold
facts = run.facts
with controls:
    with top[1]:
        layer = pickers.index_picker(_("Layer"), "layer", facts.n_layers)
    with top[2]:
        head = pickers.index_picker(_("Head"), "head", facts.n_heads)
    options = st.columns(2)
    with options[0]:
        method = pickers.choice_picker(_("Map"), "geo_method", {k: _(v) for k, v in METHODS.items()}, "pca",
                                       help=_("PCA keeps the two widest directions (exact, instant). t-SNE keeps "
                                              "neighbours together (distances between clusters mean little)."))
    with options[1]:
        colour = pickers.choice_picker(_("Colour by"), "geo_colour", {k: _(v) for k, v in COLOURS.items()},
                                       "position")
    text = ui.text_box(label=_("Your text (drawn among the corpus on a PCA map)"), with_examples=False)
ui.show_link_notes()
geo.head_section(model, run, layer, head, method, colour, text)

st.subheader(_("Heads side by side"))
st.caption(_("The same corpus in two to four heads' maps (a sample of the tokens each). Click a point to open that "
             "head above with that query."))
geo.compare_section(run, method, colour)

st.subheader(_("Layer {layer}: every head").format(layer=layer))
geo.grid_section(run, layer, head)

st.subheader(_("Which one looks back one token?"))
geo.quiz_section(run)
