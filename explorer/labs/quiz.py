"""Predict-then-reveal questions, without Streamlit.

A lab builds a :class:`Question` from values it has just computed, so the right answer always follows the
current controls. ``explorer.ui.predict_first.predict_then_reveal`` draws it: the student commits to an option first,
and only then sees the computed value and whether the prediction was right.
"""
from __future__ import annotations

from dataclasses import dataclass

TYPED_MAX = 40  # longest answer a student may type


def _plain(text: str) -> str:
    """A label or a typed word as it reads: without the quotes around a token, with the marks that make spaces and
    line breaks visible turned back into them, trimmed and case-folded."""
    return text.strip().strip("“”\"").replace("␣", " ").replace("⏎", "\n").strip().casefold()


@dataclass(frozen=True)
class Question:
    """One multiple-choice prediction.

    ``prompt`` is asked before anything is revealed; ``options`` are the labels to choose from; ``correct`` is
    the label the computation supports; ``reveal`` (markdown) shows the computed value once an answer is committed.
    With ``typed`` a student may instead type an answer of their own (see :meth:`resolve`). ``also``: the other
    options the page itself treats as equal to ``correct`` (a near-tie: two heads that both meet the page's
    definition), each as right as ``correct``; ``correct`` stays the first one named.
    """

    prompt: str
    options: tuple[str, ...]
    correct: str
    reveal: str
    typed: bool = False
    also: tuple[str, ...] = ()

    def __post_init__(self):
        if self.correct not in self.options:
            raise ValueError(f"correct answer {self.correct!r} is not one of the options {self.options}")
        if any(a not in self.options or a == self.correct for a in self.also):
            raise ValueError(f"every other right answer {self.also} must be another of the options {self.options}")

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every right answer: ``correct`` first, then ``also``."""
        return (self.correct, *self.also)

    def resolve(self, typed: str | None) -> str | None:
        """A typed answer -> the option it names when it reads the same ("paris" names “␣Paris”), else the text
        itself, trimmed to TYPED_MAX characters; None when nothing is typed."""
        text = " ".join((typed or "").split())[:TYPED_MAX]
        if not _plain(text):
            return None
        return next((o for o in self.options if _plain(o) == _plain(text)), text)

    def check(self, answer: str | None) -> bool:
        """True when ``answer`` is the computed answer (or one the page treats as equal to it)."""
        return answer in self.accepted

    @property
    def fingerprint(self) -> str:
        """Changes whenever the question or its answer changes (e.g. a control moved), so old answers expire."""
        return repr((self.prompt, self.options, self.correct) + ((self.also,) if self.also else ()))


def nearest_option(value: float, options: dict[str, float]) -> str:
    """The label whose number is closest to ``value`` (ties go to the first listed)."""
    return min(options, key=lambda label: abs(options[label] - value))


def compare_option(value: float, reference: float, larger: str, smaller: str, same: str,
                   tol: float = 1e-9) -> str:
    """``larger``/``smaller``/``same`` according to how ``value`` compares with ``reference`` (within ``tol``)."""
    if abs(value - reference) <= tol:
        return same
    return larger if value > reference else smaller


def near_best(scores: dict[str, float], margin: float) -> tuple[str, tuple[str, ...]]:
    """(the label with the largest score, the other labels whose scores come within ``margin`` of it): the answers a
    page treats as equal when the best wins by less than its stated margin (ties go to the first listed)."""
    best = max(scores, key=lambda label: scores[label])
    return best, tuple(label for label in scores if label != best and scores[best] - scores[label] < margin)


def near_edges(value: float, edges: dict[float, tuple[str, str]], margin: float) -> tuple[str, ...]:
    """For a ``value`` that a page sorts into bands at ``edges`` (edge -> (the label below it, the label above)):
    both labels of every edge that ``value`` lies within ``margin`` of (none when it is clear of every edge)."""
    return tuple(dict.fromkeys(label for edge, pair in edges.items() if abs(value - edge) < margin for label in pair))
