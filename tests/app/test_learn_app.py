"""AppTest of Watch heads learn: a ready-made run shows at once behind its prediction, its curves and every head's
heatmap are the run's own numbers, the step slider scrubs (a linked step snaps to a recorded one), Train with a tiny
config trains the shared job and shows its knockouts and the pair, a live view the server no longer holds and bad
link values are each one sentence, and lesson 6 opens every step."""
from functools import partial

import numpy as np
import pytest
from pagetest import SHOW, array, classroom_page, click, figures, join, notes, open_page, session, texts, unfolded

from explorer.classroom import normalise_code
from explorer.jobs import training
from explorer.learning import circuits, config, runs
from explorer.lessons import catalogue
from explorer.ui.views import learn

run = partial(open_page, "pages/learn.py")
TINY = dict(tr_layers="2", tr_heads="2", tr_seed="11", tr_steps="50")


pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py


def linked(at, key: str) -> str:
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def shipped():
    return runs.shipped("two-layers")


def test_a_ready_made_run_shows_at_once_behind_its_prediction_and_says_its_numbers():
    at = run()
    assert "A ready-made run of these settings" in texts(at)
    assert figures(at) == {}   # folded until the prediction
    assert any(b.label == SHOW for b in at.button)
    click(at, SHOW)
    shown, ref = figures(at), shipped()
    loss = shown["Loss (nats): overall, first copy, second copy"]
    second = next(t for t in loss["data"] if t["name"] == "second copy")
    assert np.allclose(array(second["y"]), ref.series("loss_second"), atol=1e-6)
    last = ref.checkpoints[-1]
    assert f"{last.loss_second:.2f} on the second" in texts(at)
    assert f"Every head on the probe sequence at step {last.step:,}" in shown
    assert "Knockout: loss added on the second copy (nats)" in shown
    assert "The largest K-composition is" in texts(at)


def test_the_one_layer_control_shows_no_pair_and_says_what_it_learnt_instead():
    at = unfolded(run(tr_layers="1"))
    ref = runs.shipped("one-layer")
    seen = circuits.seen_tokens(ref.config, ref.final_weights())
    assert "With one layer there is no later head" in texts(at)
    assert f"it gives {seen.mass:.0%} of its probability" in texts(at)
    assert not any(t.startswith("K-composition") for t in figures(at))


def test_the_step_slider_scrubs_every_heads_heatmap_and_a_linked_step_snaps_to_a_recorded_one():
    ref = shipped()
    middle = ref.checkpoints[len(ref.checkpoints) // 2]
    at = unfolded(run(tr_step=str(middle.step + 1)))   # not recorded: the nearest recorded step
    assert at.select_slider(key="tr_step").value == middle.step
    title = f"Every head on the probe sequence at step {middle.step:,}"
    grid = figures(at)[title]
    panels = [t for t in grid["data"] if t["type"] == "heatmap"]
    assert len(panels) == ref.config.n_layers * ref.config.n_heads
    assert np.allclose(array(panels[-1]["z"]).reshape(middle.probe.shape[-2:]), middle.probe[-1, -1], atol=1e-3)
    first = ref.checkpoints[0].step
    at.select_slider(key="tr_step").set_value(first).run()
    assert f"Every head on the probe sequence at step {first:,}" in figures(at)
    assert linked(at, "tr_step") == str(first)


@pytest.mark.parametrize("link, sentence", [
    (dict(tr_layers="9"), "The setting “Layers” must be between 1 and 3, not 9."),   # the page's label, not n_layers
    (dict(tr_seed="abc"), "The setting “Seed” must be a number, not abc."),
    (dict(tr_heads="3"), "The width d_model (32) must split evenly over the 3 heads."),
    (dict(tr_task="<script>"), "The task must be one of induction, no-repeat"),
])
def test_a_bad_link_value_is_refused_in_one_sentence_and_the_default_run_shown(link, sentence):
    at = run(**link)
    assert sentence in notes(at)
    assert at.radio(key="tr_layers").value == "2" and at.number_input(key="tr_seed").value == 0
    assert "A ready-made run of these settings" in texts(at)


def test_a_live_view_the_server_no_longer_holds_says_so_and_offers_train():
    at = run(tr_train="1", **{**TINY, "tr_seed": "12"})
    assert "which this server no longer holds" in texts(at)
    assert any(b.label == "Train" for b in at.button)
    assert linked(at, "tr_train") == "0"


def test_train_with_a_tiny_config_trains_the_shared_job_and_shows_the_pair():
    at = run(**TINY)
    assert "These settings have no ready-made run" in texts(at)
    click(at, "Train")
    cfg = config.TrainConfig(seed=11, steps=50)
    job = training.trainer().peek(cfg)
    assert job is not None and linked(at, "tr_train") == "1"
    assert training.trainer().start(cfg) is job   # a second Train joins the same run
    assert job.done.wait(120) and job.error is None
    at.run()
    unfolded(at)
    assert not at.exception
    assert [c.step for c in job.run.checkpoints][-1] == 50
    ko = circuits.knockouts(cfg, job.run.final_weights(), job.run.checkpoints[-1].prefix)
    bars = figures(at)["Knockout: loss added on the second copy (nats)"]["data"][0]
    names = list(bars["x"])
    pair = "+".join(f"L{l}H{h}" for l, h in ko.induction) + f"+L0H{ko.partner[1]}"
    assert names[-1] == pair
    assert np.isclose(array(bars["y"])[-1], ko.pair - ko.intact, atol=1e-4)
    assert f"the pair adds {ko.pair - ko.intact:.2f}" in texts(at)
    assert f"OV circuit of L{ko.induction[0][0]}H{ko.induction[0][1]}" in figures(at)


def test_lesson_6_opens_every_step():
    lesson = next(x for x in catalogue({})[0] if x.title == "Watch a circuit grow")
    at = session()
    at.button(key=f"_home_{lesson.source.replace(':', '-')}_alone").click().run()
    for n, step in enumerate(lesson.steps, 1):
        assert f"step **{n} of {len(lesson.steps)}**" in texts(at)
        assert "could not be computed" not in texts(at)
        unfolded(at)
        assert not at.exception
        if step.page == "pages/learn.py":
            assert at.title[-1].value == "Watch heads learn"
        if n < len(lesson.steps):
            click(at, "Next")


def test_the_question_keys_tell_runs_apart():
    ref = shipped()
    one = runs.shipped("one-layer")
    assert learn.question_key(ref.config, "drop") != learn.question_key(one.config, "drop")


def class_presses_train(seed: int, *nicknames: str):
    """A teacher starts a class, the students join, the teacher opens Watch heads learn with 40 steps and ``seed``
    and presses Train -> (teacher, students, the run's config, its shared job)."""
    teacher = click(classroom_page(), "Start a class")
    room = normalise_code(teacher.title[1].value)
    students = [join(room, nick) for nick in nicknames]
    teacher.session_state["tr_steps"] = "40"
    teacher.switch_page("pages/learn.py").run()
    teacher.number_input(key="tr_seed").set_value(seed).run()
    click(teacher, "Train")
    cfg = config.TrainConfig(seed=seed, steps=40)
    return teacher, students, cfg, training.trainer().peek(cfg)


def test_a_follower_watches_the_teachers_run_and_on_another_replica_trains_the_same_one(monkeypatch):
    teacher, (student,), cfg, job = class_presses_train(13, "ada")
    assert job is not None and job.done.wait(120) and job.error is None
    teacher.run()
    student.run()
    assert not student.exception and student.title[0].value == "Watch heads learn"
    assert linked(student, "tr_seed") == "13" and linked(student, "tr_train") == "1"
    assert training.trainer().peek(cfg) is job   # the follower joined the teacher's run, it started none
    prompt = "At which step will the loss on the second copy drop?"
    assert prompt in texts(teacher) and prompt in texts(student)   # the class question, on every screen
    # another replica: a trainer without the teacher's run, and a work region of its own (a process's own regions)
    monkeypatch.setattr(training, "_TRAINER", training.Trainer())
    student.run()
    assert not student.exception
    other = training.trainer().peek(cfg)
    assert other is not None and other is not job   # the follower started the same config there
    assert other.done.wait(120) and other.error is None
    assert runs.same_run(other.run, job.run)   # deterministic: the same numbers on every replica of this machine


def test_lesson_6_as_homework_asks_each_computed_question_once_and_answers_from_the_run():
    from test_homework_app import set_homework, step, student, vote
    from test_lessons_app import texts as bar

    def bar_texts(at):
        return bar(at).replace("\\", "")

    from explorer.lessons.learning_claims import copy_question, drop_question

    lesson = next(x for x in catalogue({})[0] if x.title == "Watch a circuit grow")
    _teacher, code, _key = set_homework(lesson)
    ann = student(code, "Ann")
    first = copy_question(runs.shipped("one-layer"))
    assert "step **1 of 6**" in bar_texts(ann) and first.prompt in bar_texts(ann)
    vote(ann, lesson, 0, first.correct)
    assert f"You said {first.correct}: right." in bar_texts(ann)
    assert ann.title[-1].value == "Watch heads learn"   # the step's page, once the question is answered
    step(ann, "Next")
    second = drop_question(runs.shipped("two-layers"))
    assert second.prompt in bar_texts(ann) and not any(t.startswith("Loss (nats)") for t in figures(ann))
    vote(ann, lesson, 1, second.options[0])
    assert second.correct in bar_texts(ann)


def test_a_live_run_of_a_ready_made_config_says_it_recorded_the_same_numbers():
    at = run(tr_layers="1")
    click(at, "Train")
    job = training.trainer().peek(config.TrainConfig(n_layers=1))
    assert job is not None and job.done.wait(180) and job.error is None
    at.run()
    agrees = runs.same_run(job.run, runs.shipped("one-layer"))
    said = "recorded exactly the numbers of the ready-made run" if agrees else "differs from the ready-made run"
    assert said in texts(at)


def test_a_run_whose_loss_became_nan_says_so(monkeypatch):
    broken = runs.shipped("two-layers")
    broken.stopped = "nan"
    monkeypatch.setattr(learn, "ready_made", lambda name: broken if name else None)
    at = run()
    assert f"NaN (not a number) after step {broken.checkpoints[-1].step:,}" in texts(at)


def test_a_queued_run_says_how_many_runs_are_ahead_of_it(monkeypatch):
    import threading

    from explorer.learning.train import Run

    class Queued:   # a job two runs behind in the server's queue (nothing trains in this test)
        def __init__(self, cfg):
            self.config, self.run, self.done, self.error = cfg, Run(cfg, probe_tokens=None), threading.Event(), None

        def ahead(self):
            return 2

        def fraction(self):
            return 0.0

    class Server:
        jobs = {}

        def peek(self, cfg):
            return self.jobs.get(cfg.key())

        def start(self, cfg):
            return self.jobs.setdefault(cfg.key(), Queued(cfg))

    monkeypatch.setattr(training, "trainer", lambda: Server())
    at = run(**TINY)
    click(at, "Train")
    assert "2 runs are ahead of yours in the server's queue." in texts(at)
    assert "The prediction questions are asked on a finished run" in texts(at)


def test_a_full_queue_is_one_sentence_and_the_page_goes_on(monkeypatch):
    class Full:
        def peek(self, cfg):
            return None

        def start(self, cfg):
            raise training.Busy(3)

    monkeypatch.setattr(training, "trainer", lambda: Full())
    at = run(**TINY)
    click(at, "Train")
    assert str(training.Busy(3)) in texts(at)
    assert "These settings have no ready-made run" in texts(at)


def test_a_training_process_that_stops_answering_is_one_sentence_and_train_trains_again(monkeypatch):
    import sys

    hangs = training.Trainer(child=[sys.executable, "-c", "import time; time.sleep(3600)"], deadline_s=1)
    monkeypatch.setattr(training, "_TRAINER", hangs)
    at = run(**TINY)
    click(at, "Train")
    job = hangs.peek(config.TrainConfig(seed=11, steps=50))
    assert job is not None and job.done.wait(60)
    at.run()
    assert ("The training run broke off (the training process stopped answering): press Train to try again."
            in texts(at))
    assert not at.exception and linked(at, "tr_train") == "0"
    hangs.child, hangs.deadline_s = list(training.COMMAND), 120.0
    click(at, "Train")
    again = hangs.peek(config.TrainConfig(seed=11, steps=50))
    assert again is not job and again.done.wait(120) and again.error is None


def test_a_replayed_follower_gets_the_finished_run_not_the_page_recorded_while_it_trained(monkeypatch):
    """Followers' pages are replays of the first follower's drawing; a page drawn while the run trained holds the
    growing part, which each session draws itself and whose status keys the replay: once the run is done, the next
    follower's run draws the finished page (the knockouts), never the recording made during training."""
    from explorer.ui.live import replayed

    release = __import__("threading").Event()
    real = training.train_in_child
    monkeypatch.setattr(training, "train_in_child", lambda job, trainer: (release.wait(60), real(job, trainer)))
    monkeypatch.setattr(training, "_TRAINER", None)
    teacher, (first, second), cfg, job = class_presses_train(17, "ada", "bo")
    assert job is not None and not job.done.is_set()
    first.run()
    before = replayed.COUNTS["replayed"]
    second.run()
    assert replayed.COUNTS["replayed"] == before + 1                    # the second follower's page was a replay
    during = texts(second)
    release.set()
    assert job.done.wait(120) and job.error is None
    second.run()
    assert not second.exception
    assert texts(second) != during and "Class question." in texts(second)   # the finished run's page, folded


@pytest.mark.parametrize("broken, said", [
    (lambda *a: (_ for _ in ()).throw(circuits.NoCircuits("This run uses LayerNorm on purpose.")), True),
    (lambda *a: (_ for _ in ()).throw(ValueError("a bug in the circuits")), False),
], ids=["the-refusal", "a-bug"])
def test_the_circuits_refusal_is_a_note_and_any_other_error_is_shown_as_one(monkeypatch, broken, said):
    from explorer.ui import cached

    monkeypatch.setattr(circuits, "circuits", broken)
    monkeypatch.setattr(cached, "kept", lambda key, work: work())   # computed here, not taken from the shared store
    at = run()
    [b for b in at.button if b.label == SHOW][0].click().run()   # unfolded, without pagetest's no-exception check
    assert ("This run uses LayerNorm on purpose." in texts(at)) is said
    assert bool(at.exception) is not said and ("a bug in the circuits" in str(at.exception)) is not said
