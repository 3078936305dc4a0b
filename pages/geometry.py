"""Head geometry: every query and key of a head over a corpus of 200 sentences, in one 2-D map (AttentionViz)."""
import streamlit as st

from explorer.geometry.project import METHODS
from explorer.plots.geometry import COLOURS
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import geometry as geo

ui.use_app_navigation()
st.title("Head geometry")
st.caption("A heatmap shows one head on one text. Here one head's queries and keys from 200 sentences share one "
           "map: a query lands near the keys it gives weight to, so what the head does shows as a shape — bands by "
           "position, clusters by word, or every query crowding one key.")

controls = teacher_driven("layer", "head", ("map", "geo_method"), ("colour by", "geo_colour"))
with controls:   # folded away while a student follows
    top = st.columns([2, 1, 1])
    with top[0]:
        model = pickers.model_picker()
run = geo.corpus_pass(model)   # its progress shows outside the fold
facts = run.facts
with controls:
    with top[1]:
        layer = pickers.index_picker("Layer", "layer", facts.n_layers)
    with top[2]:
        head = pickers.index_picker("Head", "head", facts.n_heads)
    options = st.columns(2)
    with options[0]:
        method = pickers.choice_picker("Map", "geo_method", METHODS, "pca",
                                  help="PCA keeps the two widest directions (exact, instant). t-SNE keeps "
                                       "neighbours together (distances between clusters mean little).")
    with options[1]:
        colour = pickers.choice_picker("Colour by", "geo_colour", COLOURS, "position")
    text = ui.text_box(label="Your text (drawn among the corpus on a PCA map)", with_examples=False)
ui.show_link_notes()
geo.head_section(model, run, layer, head, method, colour, text)

st.subheader("Heads side by side")
st.caption("The same corpus in two to four heads' maps (a sample of the tokens each). Click a point to open that "
           "head above with that query.")
geo.compare_section(run, method, colour)

st.subheader(f"Layer {layer}: every head")
geo.grid_section(run, layer, head)

st.subheader("Which one looks back one token?")
geo.quiz_section(run)
