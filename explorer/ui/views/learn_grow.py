"""Streamlit pieces of "Watch heads learn" for a run seen growing: "Watch it grow again" (a finished run, live or
ready-made, played back from its checkpoints at its recorded pace or faster, ``explorer.learning.playback``), the
sentence that says plainly which run is on screen, and what a lesson's question held open over the page folds.

A playback is the server's (one clock per server, as the live run): the teacher's press starts it, the teacher's view
carries ``tr_play`` (its pace), and every follower that opens that view shows the same playback at the same moment;
a follower on a replica without it starts one there, as with a live run. Train on settings whose run this server has
already finished plays that run back at its recorded pace, so the second class of the day sees its curves grow too.
"""
from __future__ import annotations

import streamlit as st

from explorer.jobs import training
from explorer.learning import config, runs
from explorer.learning import playback as pb
from explorer.ui import params
from explorer.ui import widgets as ui
from explorer.ui.live import membership, push, replayed
from explorer.ui.live import streamlit_internals as internals
from explorer.ui.views import learn
from explorer.words.i18n import N_, _
from explorer.words.numbers import integer, time_of_day

PACES = {1: N_("at its recorded pace"), 2: N_("twice as fast"), 5: N_("five times as fast")}   # shown through _()
PLAY = "_tr_play_pressed"   # "Watch it grow again" was pressed: the pace, kept until the playback has started


def _press(pace_key: str) -> None:
    st.session_state[PLAY] = int(st.session_state.get(pace_key) or 1)


def again(cfg: config.TrainConfig) -> None:
    """"Watch it grow again" and its pace (inside the controls a teacher drives; a follower's press would restart the
    class's playback, so it is off while following)."""
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        st.segmented_control(_("Pace"), pb.SPEEDS, key="tr_pace", default=1,
                             format_func=lambda s: _(PACES[s]), help=_("How fast a finished run plays back."))
        st.button(_("Watch it grow again"), key="tr_again", icon=":material/replay:", on_click=_press,
                  args=("tr_pace",), disabled=membership.is_following(),
                  help=_("Play the finished run of these settings back from its checkpoints: everyone who shows it "
                         "sees the same moment."))


def finished(cfg: config.TrainConfig):
    """(the finished run of ``cfg`` to play back, its source, when it was trained): this server's live run when it
    has one, else the ready-made run; (None, None, None) when there is neither."""
    job = training.trainer().peek(cfg)
    if job is not None and job.done.is_set() and job.error is None and job.run.checkpoints:
        return job.run, pb.LIVE, job.finished_at
    run = learn.ready_made(runs.shipped_for(cfg))
    return (run, pb.SHIPPED, None) if run is not None and run.checkpoints else (None, None, None)


def playing(cfg: config.TrainConfig) -> pb.Playback | None:
    """The playback of ``cfg`` on screen: one just asked for ("Watch it grow again", or Train on a run this server
    has finished), or the server's that the view (``tr_play``) names; a follower whose replica has none starts it
    (a teacher who changes the settings stops playing). Also keeps ``tr_play`` in the address."""
    plays = pb.playbacks()
    job = training.trainer().peek(cfg)
    speed = st.session_state.pop(PLAY, None)
    if speed is None and st.session_state.get(learn.PRESSED) and job is not None and job.done.is_set():
        speed = 1   # Train on a run this server already trained: watch it grow, at its own pace
    play = None
    if speed is not None:
        run, source, when = finished(cfg)
        play = plays.start(run, speed, source, when) if run is not None else None
    else:
        wanted = str(ui.from_url("tr_play", "0"))
        play = plays.peek(cfg) if wanted in {str(s) for s in pb.SPEEDS} else None
        if wanted != "0" and play is None and membership.is_following():   # a replica without the teacher's
            run, source, when = finished(cfg)
            if run is not None and wanted in {str(s) for s in pb.SPEEDS}:
                play = plays.start(run, int(wanted), source, when)
    st.session_state["tr_play"] = str(play.speed) if play is not None else "0"
    params.put("tr_play", st.session_state["tr_play"])
    return play


def which(shown: learn.Shown, play: pb.Playback | None) -> None:
    """One sentence: which run the page shows (trained live now, played back from a run trained at …, the
    ready-made run)."""
    if play is not None:
        pace = _(PACES[play.speed])
        if play.source == pb.LIVE and play.trained_at is not None:
            text = _("Played back from a run trained on this server at {time}, {pace}.").format(
                time=time_of_day(play.trained_at), pace=pace)
        else:
            text = _("Played back: the ready-made run of these settings, {pace}.").format(pace=pace)
        st.caption(":material/replay: " + text)
    elif shown.job is not None and not shown.job.done.is_set():
        st.caption(":material/model_training: " + _("Training now, live on this server."))
    elif shown.job is not None and shown.job.finished_at is not None:
        st.caption(":material/history: " + _("A run trained live on this server at {time}: press “Watch it grow "
                                             "again” to see it learn once more.").format(
            time=time_of_day(shown.job.finished_at)))


def status(cfg: config.TrainConfig) -> object:
    """What a page showing the playback of ``cfg`` redraws on: its start, every ``learn.REDRAW_EVERY`` checkpoints,
    its end (None once the server holds none): the same value for every session at one moment."""
    play = pb.playbacks().peek(cfg)
    if play is None:
        return None
    return (play.started, "done") if play.done() else (play.started, play.shown() // learn.REDRAW_EVERY)


def live(cfg: config.TrainConfig) -> None:
    """The playback growing, drawn by each session itself (also a follower whose page is replayed); the whole page
    runs again when it ends."""
    replayed.live(_growing, cfg, state=ended)


def ended(cfg: config.TrainConfig) -> bool:
    """Whether the playback of ``cfg`` has ended (or gone): what the page draws after the growing part depends on."""
    play = pb.playbacks().peek(cfg)
    return play is None or play.done()


def _growing(cfg: config.TrainConfig) -> None:
    play = pb.playbacks().peek(cfg)
    session = internals.session_id()
    if play is None or play.done():
        if session is not None:
            push.forget(session, "training")
        st.rerun()
    if session is not None:
        push.watch(session, cfg, status(cfg), status, slot="training")
    run = play.so_far()
    st.progress(len(run.checkpoints) / len(play.run.checkpoints), text=_("Playing back: step {step} of {steps}").format(
        step=integer(run.checkpoints[-1].step), steps=integer(play.run.checkpoints[-1].step)))
    learn.curves(run, None, source=f"playback-{play.source}")


def waiting_for_train() -> None:
    """A question held open over the page, and nothing growing yet: the ready-made run's curves would answer it."""
    st.info(_("Press Train (or “Watch it grow again”): the curves grow on every screen while the class answers, "
              "and the run is the answer."), icon=":material/model_training:")
