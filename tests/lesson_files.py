"""Lesson files for the tests, written by the app's own writer (``explorer.lessons.dump``, which ``parse`` reads back
to the same lesson) rather than typed out as TOML in each test: a step on the heatmaps page of the embedded encoder,
and a lesson of steps as the text of its file. A test that breaks a file on purpose replaces a piece of that text
(the writer's: ``'"layer" = "5"'``, ``"minutes = 2.0"``)."""
from __future__ import annotations

from explorer.lessons import Lesson, Step, StepQuestion, dump

ENCODER = "all-MiniLM-L6-v2"


def heatmap_step(title: str, notes: str, layer: int, head: int, question: tuple | None = None,
                 minutes: float = 2) -> Step:
    """A step opening ``layer``, ``head`` of the embedded encoder's heatmaps; ``question``: (prompt, options,
    answer, explain) of the lesson's own class question, or None for none."""
    params = {"model": ENCODER, "layer": str(layer), "head": str(head)}
    return Step(title, "pages/heatmaps.py", float(minutes), notes, params,
                StepQuestion(question[0], tuple(question[1]), *question[2:]) if question else None)


def lesson_text(title: str, *steps: Step, about: str = "") -> str:
    """The TOML file of a lesson of ``steps``."""
    return dump(Lesson(title, steps, about))
