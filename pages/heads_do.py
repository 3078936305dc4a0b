"""What heads do: knock heads out and watch the model's answer on a minimal pair move; compare with where they look."""
import streamlit as st

from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import heads_do as fx
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("What heads do"))
st.caption(_("Attention maps show where a head looks. Here we remove heads and see what the model's answer loses: "
             "a head matters for the pair if, without it, the two sentences come out more alike."))

with teacher_driven(("query", "ko_query"), text="your teacher's sentences"):   # folded while following
    model = pickers.model_picker()
    text_a, text_b = ui.sentence_pair((ANIMAL_TIRED, ANIMAL_WIDE))
    query, candidates = fx.measure_inputs()
ui.show_link_notes()
fx.whole_pair_or_stop(model, text_a, text_b)

st.subheader(_("The intact model"))
pair = fx.pair_measure(model, text_a, text_b, query, candidates)
if pair.a.kind == "next-token":
    st.caption(_("The decoder reads each sentence followed by {prompt} and we read the probability of each candidate "
                 "as the next word; log-odds = ln P(candidate 1) − ln P(candidate 2).").format(
        prompt=repr(pair.a.prompt[len(text_a.rstrip()):])))
else:
    st.caption(_("This encoder has no word-prediction head here, so the measure is how similar the final state of "
                 "the query word is to each candidate's (cosine); the score is the first minus the second."))
fx.show_intact(pair)

flip, note = fx.attention_flip(model, text_a, text_b, query, candidates)
if note:
    st.caption(ui.literal(note))

st.subheader(_("Knock heads out"))
mode = fx.ablation_picker()
fx.knock_section(model, text_a, text_b, query, candidates, flip, mode)

st.subheader(_("Every head alone: a sweep"))
fx.sweep_section(model, text_a, text_b, query, candidates, flip, mode)
