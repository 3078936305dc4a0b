"""Streamlit pieces of "Watch heads learn": the run's settings from the link, the run shown (a live shared job or a
ready-made run), its growing curves, the step slider and every head's heatmap at that step, and the prediction.

A live run is the server's shared job for its config (``jobs.training.trainer``): thirty sessions pressing Train
with the same settings watch one run, a student leaving stops nothing, and a follower (on any replica) that opens
the teacher's view with ``tr_train=1`` joins or starts the same deterministic run. While it trains, a fragment
redraws the curves every second; when it ends, the whole page runs once more and shows what the trained model does
(``learn_circuits``). Figures are drawn once per view for the whole server (``show_figure(view=…)``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from explorer.jobs import training
from explorer.learning import config, runs
from explorer.learning.train import Run
from explorer.lessons import learning_claims as claims
from explorer.plots import learning as plots
from explorer.ui import cached, params, predict_first
from explorer.ui import widgets as ui
from explorer.ui.live import membership, push, replayed
from explorer.ui.live import streamlit_internals as internals
from explorer.words.i18n import _, ngettext
from explorer.words.numbers import integer, number

CHOICES = {"tr_layers": ("1", "2", "3"), "tr_heads": ("1", "2", "4"), "tr_task": config.TASKS}
REDRAW_EVERY = 4   # checkpoints (100 steps of the default run, about half a second)


def settings() -> config.TrainConfig:
    """The run's config from the widgets (deep-linked: a link's value out of range is refused in one sentence and
    the class's default run shown); the link keeps ``tr_steps`` only when it names one."""
    default = config.TrainConfig()
    defaults = {"tr_layers": str(default.n_layers), "tr_heads": str(default.n_heads), "tr_task": default.task,
                "tr_seed": default.seed}
    raw = {k: ui.from_url(k, v) for k, v in defaults.items()}
    if "tr_steps" in st.query_params or "tr_steps" in st.session_state:
        raw["tr_steps"] = ui.from_url("tr_steps", default.steps)
    try:
        cfg = claims.config_of({k: str(v) for k, v in raw.items()})   # 3 heads: d_model 32 does not split
    except config.ConfigError as err:
        ui.link_note(str(err))
        cfg = default
        for key in ("tr_steps", *defaults):
            st.session_state.pop(key, None)
            params.drop(key)
        raw.pop("tr_steps", None)
    st.session_state.update(tr_layers=str(cfg.n_layers), tr_heads=str(cfg.n_heads), tr_task=cfg.task,
                            tr_seed=int(cfg.seed))
    columns = st.columns([1, 1, 2, 1])
    with columns[0]:
        layers = st.radio(_("Layers"), CHOICES["tr_layers"], key="tr_layers", horizontal=True)
    with columns[1]:
        heads = st.radio(_("Heads a layer"), CHOICES["tr_heads"], key="tr_heads", horizontal=True)
    with columns[2]:
        task = st.radio(_("Task"), config.TASKS, key="tr_task", horizontal=True,
                        format_func=lambda t: _(claims.TASK_NAMES[t]),
                        help=_("A repeated segment: random tokens with one stretch written twice, starting anywhere. "
                               "No repeats: the same random tokens, nothing to copy."))
    with columns[3]:
        seed = st.number_input(_("Seed"), 0, config.LIMITS["seed"][1], step=1, key="tr_seed")
    chosen = {"tr_layers": layers, "tr_heads": heads, "tr_task": task, "tr_seed": str(seed)}
    if "tr_steps" in raw:
        chosen["tr_steps"] = str(cfg.steps)
    params.put_all(chosen)
    return claims.config_of(chosen)


@dataclass
class Shown:
    """The run on screen: ``job``'s (live, maybe still growing) or the ready-made one (``shipped``: its name)."""
    run: Run | None
    job: training.TrainingJob | None
    shipped: str | None
    reference: Run | None   # a finished run of this config (for the questions): the live one once done, else shipped


def ready_made(name: str | None) -> Run | None:
    """The ready-made run ``name`` (None: none, or its file is missing), read once per server."""
    if name is None:
        return None
    try:
        return cached.kept(("learning-shipped", name), lambda: runs.shipped(name))
    except OSError:
        return None


PRESSED = "_tr_pressed"   # Train was pressed: kept until the run it asks for has started (a rerun may come between)


def press() -> None:
    """Train's callback: remembered in the session (a button's value lasts one run, which a rerun can cut short)."""
    st.session_state[PRESSED] = True


def shown(cfg: config.TrainConfig) -> Shown:
    """The run to show for ``cfg``: Train, or a view with ``tr_train=1``, shows the shared live job; a teacher or a
    follower starts it if its replica has none; anyone else is told the live run is gone and may train again."""
    trainer = training.trainer()
    pressed = bool(st.session_state.get(PRESSED))
    wants = pressed or str(ui.from_url("tr_train", "0")) == "1"
    job = trainer.peek(cfg) if wants else None
    if wants and (pressed or (job is None and (membership.is_following() or membership.teacher_key()))):
        try:
            job = trainer.start(cfg)
        except training.Busy as err:
            st.warning(str(err), icon=":material/hourglass:")
        st.session_state.pop(PRESSED, None)
    elif wants and job is None:
        st.info(_("This view asks for a live run of these settings, which this server no longer holds (a restart "
                  "loses live runs; ready-made runs stay): press Train to train it again."), icon=":material/replay:")
    if job is not None and job.error is not None:
        st.warning(_("The training run broke off ({error}): press Train to try again.").format(
            error=str(job.error)[:200]), icon=":material/error:")
        job = None
    st.session_state["tr_train"] = "1" if job is not None else "0"
    params.put("tr_train", st.session_state["tr_train"])
    name = runs.shipped_for(cfg)
    shipped = ready_made(name)
    live_done = job is not None and job.done.is_set()
    run = job.run if job is not None else shipped
    return Shown(run, job, name if shipped is not None else None, job.run if live_done else shipped)


def how_it_ended(run: Run) -> None:
    """One sentence when the run stopped early: its loss became NaN, or it ran out of time."""
    if not run.checkpoints:
        return
    step = integer(run.checkpoints[-1].step)
    if run.stopped == "nan":
        st.warning(_("The loss became NaN (not a number) after step {step}, so the run stopped there: try another "
                     "seed or fewer heads.").format(step=step), icon=":material/error:")
    elif run.stopped == "time":
        st.info(_("The run reached the server's time limit after step {step} and stopped there.").format(step=step))


def agreement(shown_: Shown) -> None:
    """For a finished live run whose settings have a ready-made run: whether the two recorded the same numbers."""
    if shown_.job is None or not shown_.job.done.is_set() or shown_.shipped is None:
        return
    if runs.same_run(shown_.job.run, ready_made(shown_.shipped)):
        st.success(_("This live run recorded exactly the numbers of the ready-made run of the same settings: the same "
                     "seed trains the same model."), icon=":material/check_circle:")
    else:
        st.info(_("This live run differs from the ready-made run of the same settings (another machine's arithmetic "
                  "rounds differently, and small differences grow during training)."), icon=":material/info:")


def ask(shown_: Shown, growing: bool = False) -> bool:
    """The page's prediction on the finished run of these settings -> whether the parts it answers may be drawn.
    While a run trains or plays back (``growing``) they grow on screen (the question is about what comes next); a
    finished run stays folded until the prediction (in a class: until the teacher reveals)."""
    run, training_now = shown_.reference, growing or (shown_.job is not None and not shown_.job.done.is_set())
    if run is None or not run.checkpoints:
        st.caption(_("The prediction questions are asked on a finished run: train this one first."))
        return True
    default = "copy" if run.config.n_layers == 1 else "drop"
    kind = str(ui.from_url("tr_ask", default))
    if kind == "none":   # a lesson step asks its own question above the page
        return True
    kind = kind if kind in claims.QUESTIONS and not (kind == "head" and run.config.n_layers == 1) else default
    params.put("tr_ask", kind)
    question = claims.question(run, kind)
    if training_now:
        predict_first.predict_then_reveal(question, question_key(run.config, kind))
        return True
    return predict_first.ask_first(question, question_key(run.config, kind),
                          _("The curves, the heatmaps and the trained model"))


def question_key(cfg: config.TrainConfig, kind: str) -> str:
    """The question's key, one per question and run (a class's votes on one run never count for another)."""
    return f"learn_{kind}_{cfg.n_layers}x{cfg.n_heads}_{cfg.task}_{cfg.seed}_{cfg.steps}"


def waiting(job: training.TrainingJob) -> None:
    ahead = job.ahead()
    if ahead:
        st.info(ngettext("{n} run is ahead of yours in the server's queue.", "{n} runs are ahead of yours in the "
                         "server's queue.", ahead).format(n=integer(ahead)), icon=":material/hourglass:")
    st.progress(job.fraction(), text=_("Training: step {step} of {steps}").format(
        step=integer(job.run.checkpoints[-1].step if job.run.checkpoints else 0), steps=integer(job.config.steps)))


def status(cfg: config.TrainConfig) -> str:
    """Where the shared run of ``cfg`` stands on this server: "none", "training" (or queued) or "done"."""
    job = training.trainer().peek(cfg)
    return "none" if job is None else "done" if job.done.is_set() else "training"


def live(cfg: config.TrainConfig) -> None:
    """The growing run: its progress and curves, redrawn as it moves on; the whole page runs again when it ends. Each
    session draws it itself, also a follower whose page is replayed (``replayed.live``), and the run's status is
    part of what a replay is keyed by: a follower never gets a page recorded while the run trained once it is done."""
    replayed.live(_growing, cfg, state=status)


def progress(cfg: config.TrainConfig) -> object:
    """What a page showing the growing run of ``cfg`` redraws on: every ``REDRAW_EVERY`` checkpoints, a change of
    place in the queue, the end (None once this server holds no such run)."""
    job = training.trainer().peek(cfg)
    if job is None:
        return None
    return "done" if job.done.is_set() else (len(job.run.checkpoints) // REDRAW_EVERY, job.ahead())


def _growing(cfg: config.TrainConfig) -> None:
    """Draw the run as it stands, and have the server rerun this session when it moves on (``push``: no timer in
    the browser, whose ticks could cross a teacher's click)."""
    job = training.trainer().peek(cfg)
    session = internals.session_id()
    if job is None or job.done.is_set():
        if session is not None:
            push.forget(session, "training")
        st.rerun()
    if session is not None:
        push.watch(session, cfg, progress(cfg), progress, slot="training")
    waiting(job)
    if job.run.checkpoints:
        curves(job.run, None, source="growing")


def curves(run: Run, now: int | None, source: str, phase_said: bool = True) -> None:
    """The losses and every head's prefix-matching and previous-token scores over the steps so far, the phase
    change marked, each said in words (the phase change's sentence only with ``phase_said``: a question held open
    over the page asks for it)."""
    steps, n, cfg = run.steps, len(run.checkpoints), run.config
    phase = run.phase_change()
    marks = dict(phase=phase, now=now, last_step=cfg.steps)
    view = (cfg.key(), n, now, source)
    loss, first, second = (run.series(k) for k in ("loss", "loss_first", "loss_second"))
    ui.show_figure(lambda: plots.loss_curves(steps, loss, first, second, **marks), "tr_loss", "learning-loss",
                   view=view)
    st.caption(said_losses(run, phase, phase_said))
    left, right = st.columns(2)
    prefix, previous = run.series("prefix"), run.series("previous")
    ui.show_figure(lambda: plots.head_curves(steps, prefix, title=_("Prefix matching: each head"), **marks),
                   "tr_prefix", "learning-prefix", where=left, view=view)
    ui.show_figure(lambda: plots.head_curves(steps, previous, title=_("Previous token: each head"), **marks),
                   "tr_previous", "learning-previous", where=right, view=view)
    st.caption(said_heads(run, -1))


def said_losses(run: Run, phase: int | None, phase_said: bool = True) -> str:
    last = run.checkpoints[-1]
    text = _("At step {step} the loss is {loss} nats overall, {first} on the first copy and {second} on the "
             "second.").format(step=integer(last.step), loss=number(last.loss, 2), first=number(last.loss_first, 2),
                               second=number(last.loss_second, 2))
    if not phase_said:
        return text
    if phase is not None:
        text += " " + _("The phase change (dashed): at step {step} a later-layer head's prefix-matching score passed "
                        "{at} and the second copy's loss fell below half the first's.").format(
            step=integer(phase), at=number(0.5, 1))
    else:
        text += " " + _("No phase change so far: no later-layer head prefix-matches at {at} with the second copy at "
                        "half the first copy's loss.").format(at=number(0.5, 1))
    return text


def said_heads(run: Run, index: int) -> str:
    """Which head prefix-matches and which looks at the previous token most, at checkpoint ``index``."""
    c = run.checkpoints[index]
    best_prefix = np.unravel_index(int(np.argmax(c.prefix)), c.prefix.shape)
    best_previous = np.unravel_index(int(np.argmax(c.previous)), c.previous.shape)
    return _("At step {step}: the strongest prefix-matching head is {p} ({ps}); the strongest previous-token head is "
             "{q} ({qs}).").format(step=integer(c.step), p=plots.head_name(*best_prefix),
                                   ps=number(float(c.prefix[best_prefix]), 2), q=plots.head_name(*best_previous),
                                   qs=number(float(c.previous[best_previous]), 2))


def step_slider(run: Run) -> int:
    """The recorded step on screen (deep-linked ``tr_step``; a linked step not recorded: the nearest one)."""
    steps = [int(s) for s in run.steps]
    raw = ui.from_url("tr_step", steps[-1])
    try:
        step = min(steps, key=lambda s: abs(s - int(raw)))
    except (TypeError, ValueError):
        ui.link_note(_("Step {value} in the link is not a number; showing the last step.").format(
            value=repr(str(raw)[:40])))
        step = steps[-1]
    st.session_state["tr_step"] = step
    chosen = st.select_slider(_("Step"), steps, key="tr_step", help=_("Scrub through the recorded steps."))
    params.put("tr_step", str(chosen))
    return int(chosen)


def heatmaps(run: Run, step: int, source: str) -> None:
    """Every head's attention on the probe sequence at ``step``, and in words what the heads do there."""
    index = [int(s) for s in run.steps].index(step)
    probe = np.asarray(run.checkpoints[index].probe, dtype=np.float32)
    ui.show_figure(lambda: plots.probe_grid(probe, run.probe_tokens, title=_("Every head on the probe sequence at "
                                                                            "step {step}").format(step=integer(step))),
                   "tr_probe", f"learning-heads-step{step}",
                   view=(run.config.key(), len(run.checkpoints), step, source))
    st.caption(_("Rows: queries, columns: keys (token ids of the probe, which holds a repeated segment).") + " "
               + said_heads(run, index))
