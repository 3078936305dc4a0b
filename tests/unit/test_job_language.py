"""A job carries the language it was asked in and makes its text in it, in whichever thread runs it, with no
resolver registered (nothing reads a session there); without one it speaks English, as work shared by every
language must. The UI's resolver is registered by the app's start, never by importing a module."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from explorer.jobs.worker import Jobs
from explorer.serving.fairqueue import FairQueue
from explorer.words import i18n
from explorer.words.i18n import _

LAYER_DE, LAYER_ES = "Schicht", "Capa"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_resolver(monkeypatch):
    monkeypatch.setattr(i18n, "_resolver", None)


def _said(progress=None) -> tuple[str, str]:
    return _("Layer"), threading.current_thread().name


def test_a_job_started_in_german_speaks_german_in_its_own_thread():
    caller = threading.current_thread().name
    with i18n.language("de"):
        job = Jobs(4).run("k-de", _said, "words", lang=i18n.current())
    text, thread = job.wait(timeout=30)
    assert thread != caller
    assert text == LAYER_DE
    assert job.lang == "de"
    assert _("Layer") == "Layer"        # the asking thread is untouched once its block ends


def test_a_job_asked_without_a_language_speaks_english_even_from_a_german_thread():
    with i18n.language("es"):
        job = Jobs(4).run("k-none", _said, "words")
    assert job.wait(timeout=30)[0] == "Layer"


def test_the_fair_queue_runs_a_job_in_the_language_it_was_asked_in():
    queue = FairQueue(workers=1, name="test-lang")
    try:
        with i18n.language("de"):
            german = queue.submit("s1", None, _said, lang=i18n.current())
        spanish = queue.submit("s2", None, _said, lang="es")
        plain = queue.submit("s3", None, _said)
        assert german.result(timeout=30)[0] == LAYER_DE
        assert spanish.result(timeout=30)[0] == LAYER_ES
        assert plain.result(timeout=30)[0] == "Layer"
    finally:
        queue.shutdown()


def test_importing_the_ui_language_module_registers_nothing():
    script = ("from explorer.words import i18n\n"
              "from explorer.ui import cached, language, widgets\n"    # the modules every page imports
              "assert i18n._resolver is None, 'an import registered a resolver'\n"
              "language.register()\n"
              "assert i18n._resolver is not None\n"
              "assert i18n.current() == i18n.SOURCE\n")      # outside a session it names no language: English
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
