"""Watch it write: a causal decoder generating one token at a time with its key/value cache."""
import streamlit as st

from explorer.model.registry import EMBEDDED_DECODER
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live import membership
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.predict_first import ask_first
from explorer.ui.views import generation_run as gx
from explorer.ui.views import generation_sections as views
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("Watch it write"))
st.caption(_("A decoder writes one token at a time. Each new token attends to every token before it, never after "
             "(the causal mask), and the keys and values of earlier tokens are kept in a cache instead of being "
             "computed again. Pick a step to see what the model looked at, what it considered, and why."))

controls = teacher_driven(("layer", "layer"), ("head", "head"), text=_("your teacher's prompt"))   # folded if following
with controls:
    top = st.columns([4, 3])
    with top[0]:
        model = pickers.model_picker("lm", EMBEDDED_DECODER)
    with top[1]:
        prompt = gx.prompt_box()
    settings = gx.settings_controls()
ui.show_link_notes()
key, gen = gx.generation_or_stop(model, prompt, settings)

hide = gx.flag(_("Predict first: hide this step's token and what follows until you commit a guess"), "predict")
step = views.step_picker(gen, hide)
with controls if membership.is_following() else st.container():   # below the step, unless folded with the rest
    pick = st.columns(2)
    with pick[0]:
        layer = pickers.index_picker(_("Layer"), "layer", gen.n_layers)
    with pick[1]:
        head = pickers.index_picker(_("Head"), "head", gen.n_heads)
ui.show_link_notes()

if hide:
    st.subheader(_("Predict the next token"))
    if not ask_first(views.predict_question(gen, step), "write_next", _("What the model did at this step")):
        st.stop()

st.subheader(_("Where the new token looks"))
views.attention_section(gen, step, layer, head)

st.subheader(_("What it considered"))
views.considered_section(gen, step)

lens, effect = gx.readout(model, key, gen, step)
st.subheader(_("Logit lens: the answer forming layer by layer"))
st.caption(_("The residual stream after each block, read through the final norm and the unembedding as if it were "
             "the last layer. The last row is the model's own output."))
views.lens_section(gen, step, lens)

st.subheader(_("Which heads wrote it: direct effects"))
st.caption(_("Each head's output, through its slice of the output projection W_O, the final norm (its scale at "
             "this position held fixed) and the picked token's unembedding row. Red raises the logit, blue lowers "
             "it. Only the direct path counts: what a head does through later layers is in theirs. Each layer's "
             "MLP (multilayer perceptron, the part after attention) is counted the same way."))
views.effect_section(gen, step, effect)

st.subheader(_("Why the cache makes it fast"))
views.cache_section(gen, step)
