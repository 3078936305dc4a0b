"""Which words mattered? Six explanations of one prediction, side by side: do they agree, and which is faithful?"""
import streamlit as st

from explorer.attribution import lesson
from explorer.examples import ANIMAL_TIRED
from explorer.model.registry import EMBEDDED_DECODER
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.predict_first import ask_first
from explorer.ui.views import attribution as ax
from explorer.ui.views import heads_do as fx
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("Which words mattered?"))
st.caption(_("One prediction, six ways of saying which input words it depended on: three read the attention "
             "weights, one weighs them by what each word sends, two ask the gradient. Do they agree? And if we "
             "remove the words each one calls important, does the prediction change?"))

with teacher_driven(("query", "ex_query")):   # folded away while a student follows
    model = pickers.model_picker(default=EMBEDDED_DECODER)
    text = ui.text_box(default=ANIMAL_TIRED)
    query, candidates = fx.measure_inputs(prefix="ex")
ui.show_link_notes()

e = ax.explanation(model, text, query, candidates)
st.subheader(_("The prediction"))
ax.show_prediction(e)
if not ask_first(lesson.top_word_question(e), "explain_top_word", _("The six explanations and what they say")):
    st.stop()

st.subheader(_("Six explanations"))
ax.show_scores(e)

st.subheader(_("Do they agree?"))
ax.show_agreement(e)

st.subheader(_("Which one is faithful?"))
st.caption(_("ERASER's comprehensiveness test: take away a method's top k words and run the model again. If the "
             "words really were what the prediction used, the score should move more than for words picked at "
             "random."))
ax.show_faithfulness(e)
