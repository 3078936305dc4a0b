"""Lessons: ordered steps over the app's pages, read from TOML files and checked before anything runs
(no Streamlit here). ``files`` reads and writes them, ``pages`` checks what a step sets on its page, ``handout``
prints one, ``run`` is the lesson's place in a room; ``computed`` asks a step's question of its model and checks the
claims a step makes about it (``claims`` measures them; ``induction_claims`` and ``score_claims`` measure lessons 4
and 5's)."""
from .files import APP_DIR, ENV_DIR, MAX_BYTES, MAX_STEPS, LessonError, catalogue, dump, find, parse
from .model import PAGE_QUESTION, Lesson, Step, StepQuestion
from .pages import STEP_PAGES

__all__ = ["APP_DIR", "ENV_DIR", "MAX_BYTES", "MAX_STEPS", "PAGE_QUESTION", "STEP_PAGES", "Lesson", "LessonError",
           "Step", "StepQuestion", "catalogue", "dump", "find", "parse"]
