"""A finished run played back (explorer.learning.playback): how far it has got at a moment of the server's clock,
at its recorded pace and faster, worked out by hand; one playback per config, a new start replacing the old."""
import pytest

from explorer.learning import playback as pb
from explorer.learning.config import TrainConfig
from explorer.learning.train import Checkpoint, Run


def run_of(steps, seconds: float, cfg=TrainConfig()) -> Run:
    import numpy as np
    z = np.zeros((cfg.n_layers, cfg.n_heads), dtype=np.float32)
    return Run(cfg, probe_tokens=np.zeros(4, dtype=np.int64), seconds=seconds,
               checkpoints=[Checkpoint(s, 1.0, 1.0, 1.0, z, z, np.zeros((1, 1, 1, 1))) for s in steps],
               snapshots={steps[-1]: {}})


def test_the_recorded_pace_shows_each_checkpoint_at_its_share_of_the_runs_time():
    run = run_of([0, 25, 50, 75, 100], seconds=8.0)          # a checkpoint every 2 s of the recorded 8 s
    play = pb.Playback(run, started=1000.0, speed=1, source=pb.LIVE)
    assert play.duration == 8.0
    assert play.shown(999.0) == 1                            # before its start: the first checkpoint
    assert play.shown(1000.0) == 1 and play.shown(1001.9) == 1
    assert play.shown(1002.0) == 2                           # 2 s: step 25 reached
    assert play.shown(1005.0) == 3                           # 5 s: step 62.5 -> 0, 25, 50
    assert play.shown(1008.0) == 5 and play.done(1008.0) and not play.done(1007.9)
    partial = play.so_far(1005.0)
    assert [c.step for c in partial.checkpoints] == [0, 25, 50] and partial.snapshots == {}
    assert len(run.checkpoints) == 5                         # the run itself is untouched


def test_faster_divides_the_time():
    play = pb.Playback(run_of([0, 25, 50, 75, 100], seconds=8.0), started=0.0, speed=2, source=pb.SHIPPED)
    assert play.duration == 4.0 and play.shown(2.0) == 3 and play.done(4.0)   # 2 s at 2x: half the run


def test_one_playback_per_config_and_a_new_start_replaces_it():
    plays = pb.Playbacks(keep=2)
    a, b, c = (run_of([0, 10], 1.0, TrainConfig(seed=s)) for s in (1, 2, 3))
    first = plays.start(a, 1, pb.LIVE, now=10.0)
    assert plays.peek(a.config) is first and plays.peek(b.config) is None
    again = plays.start(a, 5, pb.LIVE, now=20.0)
    assert plays.peek(a.config) is again and again.started == 20.0 and again.speed == 5
    plays.start(b, 1, pb.SHIPPED)
    plays.start(c, 1, pb.SHIPPED)
    assert plays.peek(a.config) is None                     # the oldest dropped past ``keep``
    with pytest.raises(ValueError):
        plays.start(a, 3, pb.LIVE)                           # a pace that is not offered
    with pytest.raises(ValueError):
        plays.start(run_of([0], 1.0).__class__(TrainConfig(), None), 1, pb.LIVE)   # nothing recorded
