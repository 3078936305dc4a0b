"""Lessons: ordered steps over the app's pages, read from TOML files and checked before anything runs
(no Streamlit here). ``files`` reads one with every check, ``translations`` gives its texts in another language,
``writing`` writes one back, ``folders`` reads the lesson folders (the catalogue); ``pages`` checks what a step sets
on its page, ``handout`` prints one, ``run`` is the lesson's place in a room; ``computed`` asks a step's question of
its model and checks the claims a step makes about it (``claims`` measures them; ``induction_claims`` and
``score_claims`` measure lessons 4 and 5's)."""
from .files import MAX_BYTES, MAX_STEPS, LessonError, parse
from .folders import APP_DIR, ENV_DIR, catalogue, find
from .model import PAGE_QUESTION, Lesson, Step, StepQuestion
from .pages import STEP_PAGES
from .writing import dump

__all__ = ["APP_DIR", "ENV_DIR", "MAX_BYTES", "MAX_STEPS", "PAGE_QUESTION", "STEP_PAGES", "Lesson", "LessonError",
           "Step", "StepQuestion", "catalogue", "dump", "find", "parse"]
