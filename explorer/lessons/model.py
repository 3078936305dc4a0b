"""A lesson: an ordered list of steps. A step opens one page with its URL parameters (the view a deep link
reopens), holds the teacher's private notes, an optional class question (written here, the page's own, or computed
on the model: ``explorer.lessons.computed``), the claims checked on the model, and a planned time."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from explorer.labs.quiz import Question

from .pages import STEP_PAGES

PAGE_QUESTION = "page"   # a step's `question = "page"`: the page's own predict-then-reveal question


@dataclass(frozen=True)
class StepQuestion:
    """A class question of the lesson's own: asked on top of the step's page, revealed by the teacher."""

    prompt: str
    options: tuple[str, ...]
    answer: str
    explain: str

    def question(self) -> Question:
        """As the pages' predict-then-reveal question (``explorer.ui.predict_first`` draws it)."""
        return Question(self.prompt, self.options, self.answer, self.explain)


@dataclass(frozen=True)
class Step:
    title: str
    page: str                                   # "pages/heatmaps.py": a key of explorer.lessons.pages.STEP_PAGES
    minutes: float                              # planned time
    notes: str = ""                             # the teacher's, never shown to the class
    params: dict[str, str] = field(default_factory=dict)
    question: StepQuestion | None = None
    page_question: bool = False                 # the question is the page's own (see PAGE_QUESTION)
    computed: str = ""                          # the question is computed on the model: a name of computed.COMPUTED
    checks: tuple[str, ...] = ()                # claims measured on the model: names of computed.CHECKS

    @property
    def page_title(self) -> str:
        return STEP_PAGES[self.page].title


@dataclass(frozen=True)
class Lesson:
    title: str
    steps: tuple[Step, ...]
    about: str = ""
    source: str = ""   # where it came from: "app:attention-20", "dir:mine", "own" (made or uploaded here)
    lang: str = "en"   # the language of its texts (a catalogue lesson: English, or the translation merged onto it)
    qids: tuple[str, ...] = ()   # a translation's: the English lesson's question ids, so every language votes alike

    @property
    def minutes(self) -> float:
        return sum(s.minutes for s in self.steps)

    def planned_until(self, index: int) -> float:
        """Minutes planned for steps 0..index (the time by which step ``index`` should be done)."""
        return sum(s.minutes for s in self.steps[: index + 1])

    def question_id(self, index: int) -> str:
        """The store's id of step ``index``'s class question: stable for the same lesson text, short; a translated
        lesson's are its English lesson's (one question, one id, whatever language each student reads it in)."""
        if self.qids:
            return self.qids[index]
        step = self.steps[index]
        asked = (self.title, index, step.question) + ((step.computed,) if step.computed else ())
        digest = hashlib.sha256(repr(asked).encode()).hexdigest()[:10]
        return f"lesson-{index + 1}-{digest}"
