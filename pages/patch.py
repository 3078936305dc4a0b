"""Patch activations: copy one activation from a text into its minimal pair and see how much of the answer
moves with it (activation, attribution and path patching)."""
import streamlit as st

from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import patching as work
from explorer.ui.views import patching_results as results
from explorer.words.i18n import N_, _

ui.use_app_navigation()
st.title(_("Patch activations"))
st.caption(_("Two texts that differ in one place (a minimal pair), and a number the model gives each. Run the "
             "corrupted text, copy in one activation from the clean run, and measure how much of the clean answer "
             "comes back: the activations that bring it back are where the difference travels. This is denoising; "
             "noising goes the other way, one corrupted activation in the clean run, and finds what the answer "
             "cannot do without."))

controls = teacher_driven((N_("pair"), "pair", work.PAIR_NAMES), text=N_("your teacher's pair"))
with controls:
    model, pair = work.pair_picker()
ui.show_link_notes()
contrast = work.contrast_or_stop(model, pair)
work.metric_line(pair, contrast)
with controls:
    settings = work.settings_picker(contrast.n_layers, contrast.n_heads, contrast.tokens["clean"])

st.subheader(_("Preview"))
results.preview(model, pair, contrast, settings)

st.subheader(_("Exact patching"))
exact = results.exact(model, pair, contrast, settings, ready=st.session_state.get("pair") != work.OWN)
if exact is not None and (not results.asking() or results.asked(exact, contrast, settings)):
    results.draw(model, pair, contrast, settings, exact)
    results.agreement(model, pair, contrast, settings, exact)
