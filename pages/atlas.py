"""Head atlas: every head of a model across a corpus of real text (HeadVis), one point each; a head's card."""
import streamlit as st

from explorer.atlas import cards
from explorer.atlas.labels import ROLE_HEADS
from explorer.atlas.question import ROLES
from explorer.model.registry import EMBEDDED_DECODER
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import atlas as view
from explorer.words.i18n import N_, _

ui.use_app_navigation()
st.title(_("Head atlas"))
st.caption(_("The other pages judge a head on one sentence. Here every head of the model has read the same corpus "
             "of real text: each is one point, placed by two measures averaged over every token. Click a point to "
             "open that head's card: its measures beside the other heads' and the tokens where it does its job "
             "most."))

controls = teacher_driven("layer", "head", text=None)   # the axes are named on the chart's own axes
with controls:
    model = pickers.model_picker(default=EMBEDDED_DECODER)
atlas = view.atlas_or_stop(model)
view.source_line(atlas)
with controls:
    axes = st.columns(2)
    with axes[0]:
        x = view.measure_picker(_("Horizontal axis"), "atlas_x", atlas, "top_first")
    with axes[1]:
        y = view.measure_picker(_("Vertical axis"), "atlas_y", atlas, "top_previous")
    picks = st.columns(2)
    with picks[0]:
        layer = pickers.index_picker(_("Layer"), "layer", atlas.n_layers)
    with picks[1]:
        head = pickers.index_picker(_("Head"), "head", atlas.n_heads)
    first, last = st.slider(_("Layers shown"), 0, atlas.n_layers - 1, (0, atlas.n_layers - 1), key="atlas_layers")
ui.show_link_notes()

table = cards.heads_table(atlas)
shown = ((table["layer"] >= first) & (table["layer"] <= last)).to_numpy().reshape(atlas.n_layers, atlas.n_heads)
view.scatter(atlas, x, y, (layer, head), None if shown.all() else shown)
with st.expander(_("Every head as a table (sort by any column)")):
    view.heads_table(table, y, (first, last))

view.card(atlas, (layer, head))
examples = ("first", "previous", "self", "duplicate", "induction", "punctuation")
with teacher_driven((N_("examples of"), "atlas_ex", cards.NAMES), text=None):   # beside the examples it picks
    measure = pickers.choice_picker(_("Examples of"), "atlas_ex", {m: _(cards.NAMES[m]) for m in examples},
                                    "previous")
view.top_examples(atlas, (layer, head), measure)

st.subheader(_("Which head is this?"))
role = pickers.choice_picker(_("Head to find"), "atlas_ask", {r: _(ROLE_HEADS[r]) for r in ROLES}, "previous")
view.which_head(atlas, role)
