"""The one table of what a server's shared jobs keep (explorer/jobs/keepers.py): each page's Jobs comes from it,
once, sized by its row or its setting, and /_explorer/stats lists every keeper with its bound and entries."""
from __future__ import annotations

import sys

from explorer.jobs import keepers, training
from explorer.learning.config import TrainConfig


def test_each_keeper_is_one_jobs_sized_by_its_row_or_its_setting(monkeypatch):
    assert keepers.jobs("maps") is keepers.jobs("maps") and keepers.jobs("maps").keep == 512
    assert keepers.keep_of("corpus-passes", {"EXPLORER_GEOMETRY_MODELS": "5"}) == 5
    assert keepers.keep_of("corpus-passes", {"EXPLORER_GEOMETRY_MODELS": "lots"}) == 2   # not a number: the row's


def test_the_pages_keepers_are_the_tables():
    from explorer.ui import cached, prefetch
    from explorer.ui.views import generation_run, geometry, heads_do, value_roles

    assert (geometry.PASSES, geometry.MAPS) == (keepers.jobs("corpus-passes"), keepers.jobs("maps"))
    assert (heads_do.MEASURES, heads_do.SWEEPS) == (keepers.jobs("measures"), keepers.jobs("sweeps"))
    assert value_roles.ROLES is keepers.jobs("roles") and generation_run.GENERATIONS is keepers.jobs("generations")
    assert prefetch.PREPARED is keepers.jobs("prepared") and cached.EXPLANATIONS is keepers.jobs("explanations")
    assert cached.WORKER._jobs is keepers.jobs("models")


def test_the_report_lists_every_keeper_with_its_bound_and_entries(monkeypatch):
    job = keepers.jobs("sweeps").run(("report test", 1), lambda progress: "swept", "a sweep")
    assert job.wait(30) == "swept"
    trainer = training.Trainer(child=[sys.executable, "-c", "import sys; sys.stdin.readline()"])
    monkeypatch.setattr(training, "_TRAINER", trainer)
    assert trainer.start(TrainConfig(steps=10)).done.wait(30)
    report = keepers.report()
    assert set(report) == {*keepers.KEEPERS, "training"}
    assert report["sweeps"]["keep"] == 16 and report["sweeps"]["finished"] >= 1
    assert report["training"] == {"what": keepers.TRAINING.what, "keep": 8, "setting": None, "region": None,
                                  "entries": 1, "finished": 1}
