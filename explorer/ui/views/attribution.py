"""Streamlit pieces for "Which words mattered?": one explanation per (model, text, query, candidates), computed
once in a shared job (``cached.explanation_job``) that every session asking for the same reads, its progress
shown."""
from __future__ import annotations

import streamlit as st

from explorer.attribution import lesson
from explorer.attribution.explain import LABELS, METHODS, RANDOM, Explanation
from explorer.plots import attribution as plots
from explorer.ui import cached
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure


def explanation(model: str, text: str, query: str, cands: list[str]) -> Explanation:
    """The explanation, from the shared job (started here if nobody has asked yet); bad input is a warning."""
    if not text.strip():
        st.warning("Type a text to explain.")
        st.stop()
    return cached.wait_or_stop(cached.explanation_job(model, text, query, cands))


def view_of(e: Explanation) -> tuple:
    """What an explanation is made of (its job's key): the view its charts are drawn once for."""
    return e.model, e.text, e.prompt, tuple(e.candidates)


def show_prediction(e: Explanation) -> None:
    st.metric(literal(e.score_name), f"{e.score:+.3f}")
    if e.kind == "next-token":
        st.caption(literal(f"The decoder reads the text followed by {e.prompt[len(e.text.rstrip()):]!r}; "
                           f"{e.score_name} = ln P({e.candidates[0]}) − ln P({e.candidates[1]}) for the next word. "
                           "The words of the question are read but not scored."))
    for note in e.notes:
        st.caption(literal(note))


def show_scores(e: Explanation) -> None:
    k = st.slider("Words marked per method", 1, min(5, len(e.words)), min(3, len(e.words)), key="ex_top") \
        if len(e.words) > 1 else 1
    tops = [e.top(m, k) for m in METHODS]
    show_figure(lambda: plots.method_rows(e.scores, e.words, e.short_labels, tops), "explain_rows",
                "which-words-mattered", view=(*view_of(e), k))
    st.caption(f"Each row is scaled to its own largest value; #1–#{k} outline that method's top {k} words (by size). "
               "Blue: the word raises the score (towards the first candidate), red: it lowers it (only the "
               "gradient rows have a sign). Value-weighted attention is the last layer's, like the first row.")
    st.caption(literal(lesson.ig_line(e)))


def show_agreement(e: Explanation) -> None:
    show_figure(lambda: plots.agreement_matrix(e.spearman, e.kendall, e.short_labels), "explain_agree",
                "method-agreement", view=view_of(e))
    st.markdown(literal(lesson.agreement_sentence(e)))


def show_faithfulness(e: Explanation) -> None:
    rows = [*e.short_labels, RANDOM]
    show_figure(lambda: plots.faithfulness_rows(e.moved, rows, e.ks, e.score_name), "explain_faith", "faithfulness",
                view=view_of(e))
    st.markdown(literal(lesson.faithfulness_summary(e)))
    how = "deleted from the text" if e.removal == "deleted" else "replaced by the mask token"
    st.caption(literal(f"Words are {how}; the random row is the mean over 4 seeded random orders. Computed in "
                       + ", ".join(f"{LABELS.get(k, k)} {v:.1f} s" for k, v in e.seconds.items()) + "."))
