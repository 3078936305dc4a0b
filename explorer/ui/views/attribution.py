"""Streamlit pieces for "Which words mattered?": one explanation per (model, text, query, candidates), computed
once in a shared job (``cached.explanation_job``) that every session asking for the same reads, its progress
shown."""
from __future__ import annotations

import streamlit as st

from explorer.attribution import lesson
from explorer.attribution.explain import METHODS, RANDOM, Explanation, label
from explorer.plots import attribution as plots
from explorer.ui import cached
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure
from explorer.words import numbers
from explorer.words.i18n import N_, _

STAGES = {"faithfulness": N_("the removal test")}   # timed stages that are no method


def explanation(model: str, text: str, query: str, cands: list[str]) -> Explanation:
    """The explanation, from the shared job (started here if nobody has asked yet); bad input is a warning."""
    if not text.strip():
        st.warning(_("Type a text to explain."))
        st.stop()
    return cached.wait_or_stop(cached.explanation_job(model, text, query, cands))


def view_of(e: Explanation) -> tuple:
    """What an explanation is made of (its job's key): the view its charts are drawn once for."""
    return e.model, e.text, e.prompt, tuple(e.candidates)


def show_prediction(e: Explanation) -> None:
    st.metric(literal(e.score_name), numbers.signed(e.score, 3))
    if e.kind == "next-token":
        st.caption(literal(_("The decoder reads the text followed by {question}; {score} = ln P({first}) − ln "
                             "P({second}) for the next word. The words of the question are read but not "
                             "scored.").format(question=repr(e.prompt[len(e.text.rstrip()):]), score=e.score_name,
                                               first=e.candidates[0], second=e.candidates[1])))
    for note in e.notes:   # str(): a Later note is made now, in this session's language
        st.caption(literal(str(note)))


def show_scores(e: Explanation) -> None:
    k = st.slider(_("Words marked per method"), 1, min(5, len(e.words)), min(3, len(e.words)), key="ex_top") \
        if len(e.words) > 1 else 1
    tops = [e.top(m, k) for m in METHODS]
    show_figure(lambda: plots.method_rows(e.scores, e.words, e.short_labels, tops,
                                          _("Which words mattered, by each method")), "explain_rows",
                "which-words-mattered", view=(*view_of(e), k))
    st.caption(_("Each row is scaled to its own largest value; #1–#{k} outline that method's top {k} words (by "
                 "size). Blue: the word raises the score (towards the first candidate), red: it lowers it (only the "
                 "gradient rows have a sign). Value-weighted attention is the last layer's, like the first "
                 "row.").format(k=k))
    st.caption(literal(lesson.ig_line(e)))


def show_agreement(e: Explanation) -> None:
    show_figure(lambda: plots.agreement_matrix(e.spearman, e.kendall, e.short_labels,
                                               _("Do they rank the words alike? (Spearman ρ)")), "explain_agree",
                "method-agreement", view=view_of(e))
    st.markdown(literal(lesson.agreement_sentence(e)))


def show_faithfulness(e: Explanation) -> None:
    rows = [*e.short_labels, _(RANDOM)]
    show_figure(lambda: plots.faithfulness_rows(e.moved, rows, e.ks, e.score_name,
                                                _("Top k words removed: how far the score moves")), "explain_faith",
                "faithfulness", view=view_of(e))
    st.markdown(literal(lesson.faithfulness_summary(e)))
    times = numbers.joined((label(k) if k in METHODS else _(STAGES.get(k, k))) + f" {numbers.number(v, 1)} s"
                           for k, v in e.seconds.items())
    if e.removal == "deleted":
        said = _("Words are deleted from the text; the random row is the mean over 4 seeded random orders. Computed "
                 "in {times}.")
    else:
        said = _("Words are replaced by the mask token; the random row is the mean over 4 seeded random orders. "
                 "Computed in {times}.")
    st.caption(literal(said.format(times=times)))
