"""Lessons: ordered steps over the app's pages, read from TOML files and checked before anything runs
(no Streamlit here). ``files`` reads and writes them, ``pages`` says what each page takes, ``handout`` prints one,
``run`` is the lesson's place in a room; ``computed`` asks a step's question of its model and checks the claims a
step makes about it (``claims`` measures them)."""
from .files import APP_DIR, ENV_DIR, MAX_BYTES, MAX_STEPS, LessonError, catalogue, dump, find, parse
from .model import PAGE_QUESTION, Lesson, Step, StepQuestion
from .pages import PAGES

__all__ = ["APP_DIR", "ENV_DIR", "MAX_BYTES", "MAX_STEPS", "PAGES", "PAGE_QUESTION", "Lesson", "LessonError", "Step",
           "StepQuestion", "catalogue", "dump", "find", "parse"]
