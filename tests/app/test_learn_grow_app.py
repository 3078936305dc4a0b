"""AppTest of lesson 6's training steps and "Watch it grow again": the step's question holds the page open (Train is
there, the ready-made run's curves are not), Train on a run this server has already finished plays it back at its
recorded pace and says so, the finished curves come while what says the answer in words stays folded until the
question is answered, and a follower shows the teacher's playback (one clock per server)."""
import time

import pytest
from pagetest import SHOW, classroom_page, click, figures, join, session, texts

from explorer.classroom import normalise_code
from explorer.jobs import training
from explorer.learning import config, runs
from explorer.learning import playback as pb
from explorer.lessons import catalogue

pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py
DEFAULT = config.TrainConfig()
PHASE_SAID = "The phase change (dashed)"


class Finished:
    """A server's trainer that trained the default run this morning (the ready-made run's numbers)."""

    def __init__(self):
        self.job = training.TrainingJob(DEFAULT, self)
        self.job.run, self.job.finished_at = runs.shipped("two-layers"), time.time() - 3600
        self.job.done.set()

    def peek(self, cfg):
        return self.job if cfg == DEFAULT else None

    def start(self, cfg):
        assert cfg == DEFAULT
        return self.job

    def ahead_of(self, job):
        return 0


@pytest.fixture
def morning(monkeypatch):
    monkeypatch.setattr(training, "_TRAINER", Finished())
    monkeypatch.setattr(pb, "_PLAYBACKS", pb.Playbacks())


def end_playback(cfg=DEFAULT):
    """The playback of ``cfg`` as it is once its recorded time has passed."""
    play = pb.playbacks().peek(cfg)
    pb.playbacks().start(play.run, play.speed, play.source, play.trained_at, now=time.time() - 3600)


def growing(at) -> str:
    """The progress bar's text ("Playing back: step 0 of 1,500"), or ""."""
    return " ".join(e.proto.text for e in at.get("progress"))


def loss_figures(at) -> list[str]:
    return [t for t in figures(at) if t.startswith("Loss (nats)")]


def lesson_6_step_2():
    lesson = next(x for x in catalogue({})[0] if x.title == "Watch a circuit grow")
    at = session()
    at.button(key=f"_home_{lesson.source.replace(':', '-')}_alone").click().run()
    click(at, SHOW)   # step 1's question
    click(at, "Next")
    assert "step **2 of 6**" in texts(at)
    return at


def test_step_2_holds_its_page_open_and_the_run_is_the_reveal(morning):
    at = lesson_6_step_2()
    assert "At which step will the loss on the second copy drop?" in texts(at)
    assert any(b.label == "Train" for b in at.button)        # the page runs: Train is there
    assert "Press Train" in texts(at) and loss_figures(at) == []   # the ready-made run's curves would answer it
    click(at, "Train")   # this server finished the run this morning: Train plays it back at its recorded pace
    play = pb.playbacks().peek(DEFAULT)
    assert play is not None and play.speed == 1 and play.source == pb.LIVE
    assert "Played back from a run trained on this server at" in texts(at) and "Playing back: step" in growing(at)
    end_playback()
    at.run()
    assert loss_figures(at) and "Playing back" not in growing(at)   # the finished curves: the answer, drawn
    assert PHASE_SAID not in texts(at) and not any(t.startswith("Every head") for t in figures(at))
    assert "stay folded until you commit a prediction" in texts(at)
    click(at, SHOW)   # the step's question answered: the page unfolds
    assert PHASE_SAID in texts(at) and any(t.startswith("Every head on the probe sequence") for t in figures(at))


def test_watch_it_grow_again_plays_the_ready_made_run_faster(monkeypatch):
    monkeypatch.setattr(pb, "_PLAYBACKS", pb.Playbacks())
    monkeypatch.setattr(training, "_TRAINER", training.Trainer())   # nothing trained on this server
    at = session(tr_ask="none")
    at.switch_page("pages/learn.py").run()
    at.segmented_control(key="tr_pace").set_value(5).run()
    click(at, "Watch it grow again")
    play = pb.playbacks().peek(DEFAULT)
    assert play.source == pb.SHIPPED and play.speed == 5 and play.duration == play.run.seconds / 5
    assert "Played back: the ready-made run of these settings, five times as fast." in texts(at)
    assert at.query_params["tr_play"] in ("5", ["5"])
    end_playback()
    at.run()
    assert "Playing back" not in growing(at) and any(t.startswith("Every head") for t in figures(at))


def test_a_follower_shows_the_teachers_playback(morning):
    teacher = click(classroom_page(), "Start a class")
    room = normalise_code(teacher.title[1].value)
    student = join(room, "ada")
    teacher.switch_page("pages/learn.py").run()
    click(teacher, "Watch it grow again")
    play = pb.playbacks().peek(DEFAULT)
    student.run()
    assert not student.exception and student.title[-1].value == "Watch heads learn"
    assert pb.playbacks().peek(DEFAULT) is play   # the follower joined the teacher's playback, it started none
    assert "Played back from a run trained on this server at" in texts(student)
    assert "Playing back: step" in growing(student)


def test_a_question_held_on_an_earlier_run_folds_nothing_later(morning):
    from explorer.ui.live import step_question

    at = session(tr_ask="none")
    at.session_state[step_question.HELD] = ("lesson-6-2", False)   # left by a lesson's step, which has ended
    at.switch_page("pages/learn.py").run()
    assert "Press Train" not in texts(at) and any(t.startswith("Every head") for t in figures(at))
