"""Lab: positional encodings — sinusoidal, learned (the embedded encoder), rotary (the embedded decoder), real heads."""
import streamlit as st

from explorer.labs.positions import TABS
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.ui.cached import get_model
from explorer.ui.labs import tabs_by_id
from explorer.ui.views.lab_positions import learned_lesson, real_heads, rope_lesson, sinusoidal_lesson
from explorer.ui.widgets import use_app_navigation
from explorer.words.i18n import _

use_app_navigation()

st.title(_("Where is each token? Positional encodings"))
st.markdown(_("Attention compares every token with every other and never asks where they stand: shuffle the "
              "words and each output is just shuffled along. Order has to be put in. Three ways, and what real "
              "heads then do with it."))
# in the link as an English id (a class follows its teacher's tab), and only the open tab is run and sent
tabs = tabs_by_id(TABS, "pos_tab")
for tab, draw in zip(tabs, (sinusoidal_lesson, lambda: learned_lesson(get_model(EMBEDDED_ENCODER)),
                            lambda: rope_lesson(get_model(EMBEDDED_DECODER)), real_heads)):
    if tab.open:
        with tab:
            draw()
