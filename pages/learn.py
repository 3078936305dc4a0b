"""Watch heads learn: a tiny attention-only transformer trained on a copying task, live or ready-made, or a finished
run played back; its curves, every head at any recorded step, and the trained model's induction circuit taken apart."""
import streamlit as st

from explorer.ui import predict_first
from explorer.ui import widgets as ui
from explorer.ui.live import step_question
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import learn
from explorer.ui.views import learn_circuits as parts
from explorer.ui.views import learn_grow as grow
from explorer.words.i18n import N_, _

ui.use_app_navigation()
st.title(_("Watch heads learn"))
st.caption(_("Every other page shows a model trained elsewhere. Here a tiny model (attention only, no MLP) learns "
             "on sequences of random tokens in which one stretch is written twice: watch how its heads come to "
             "look where they look, then take the trained model apart."))

controls = teacher_driven((N_("layers"), "tr_layers"), (N_("heads"), "tr_heads"), (N_("seed"), "tr_seed"), text=None)
with controls:
    cfg = learn.settings()
    st.button(_("Train"), key="tr_press", icon=":material/model_training:", type="primary", on_click=learn.press,
              help=_("One run per server for these settings: everyone who presses it watches the same run."))
    grow.again(cfg)
ui.show_link_notes()
play = grow.playing(cfg)   # before shown(), which takes Train's press
shown = learn.shown(cfg)
held = step_question.still_open()   # a lesson's question the run answers: vote while it grows
grow.which(shown, play)
run = play.run if play is not None else shown.run
if run is None:
    st.info(_("These settings have no ready-made run: press Train to watch one learn."), icon=":material/school:")
    st.stop()
if shown.job is None and play is None and not held:
    st.caption(_("A ready-made run of these settings, trained on the server beforehand: press Train to watch it "
                 "learn live."))
training = shown.job is not None and not shown.job.done.is_set()
opened = learn.ask(shown, growing=play is not None and not play.done())
if training:
    learn.live(cfg)
    st.stop()
if play is not None and not play.done():
    grow.live(cfg)
    st.stop()
if held and shown.job is None and play is None:
    grow.waiting_for_train()
    st.stop()
learn.how_it_ended(run)
learn.agreement(shown)
if not opened or not run.checkpoints:
    st.stop()
source = "live" if (play.source == "live" if play is not None else shown.job is not None) else "shipped"

st.subheader(_("Loss and head scores, step by step"))
if held:   # the curves are the answer; the sentences and parts that say it wait for the reveal
    learn.curves(run, None, source=source, phase_said=False)
    predict_first.folded_line(_("The phase change in words, the step slider, the heatmaps and the trained model "
                                "taken apart"))
    st.stop()
step = learn.step_slider(run)
learn.curves(run, step, source=source)
learn.heatmaps(run, step, source=source)

st.subheader(_("The trained model taken apart"))
if not run.snapshots:
    st.stop()
ko = parts.knockout_section(run, source)
if cfg.n_layers < 2 or ko.partner is None:
    st.stop()
parts.composition_section(run, source)
head = parts.head_picker(run, ko.induction[0])
parts.circuits_section(run, source, head, ko.partner)
