"""Streamlit drawing of a predict-then-reveal :class:`explorer.labs.quiz.Question` (pages call this; nothing else).

Inside a classroom the same question becomes a class question, run as Peer Instruction: each student votes alone
(a new commit replaces the vote), nobody sees any count (the teacher's screen and the projector included) until
the teacher presses "Show answers"; the class may then discuss and vote again, and the reveal shows both rounds
side by side with the right answer. The rounds live in the store (``explorer.classroom.polls``).

A page asks its question before it draws what answers it (``ask_first``): those parts stay folded, not drawn, until
the student commits a prediction or presses "Show me without predicting" (in a class: until the teacher reveals).
"""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError, Progress
from explorer.classroom.polls import answer_text, counts_by_text, vote_of
from explorer.labs.quiz import TYPED_MAX, Question
from explorer.plots.classroom import answer_bars, answer_rounds
from explorer.ui.live import following, membership, replayed
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure
from explorer.words.i18n import N_, _, ngettext

OTHER = N_("Another word…")  # the choice that opens a text box, on questions that take typed answers


def _choices(question: Question) -> tuple[str, ...]:
    return question.options + ((_(OTHER),) if question.typed else ())


def _given(question: Question, key: str) -> str | None:
    """The answer the widgets hold: the option chosen, or the word typed (as the option it names, if any)."""
    answer = st.session_state.get(f"{key}_answer")
    return question.resolve(st.session_state.get(f"{key}_typed")) if answer == _(OTHER) else answer


def _answer_widgets(question: Question, key: str, disabled: bool) -> str | None:
    """The options as a radio, plus a text box when the student picks "Another word…"; -> the radio's value."""
    answer = st.radio(_("Your prediction"), _choices(question), index=None, key=f"{key}_answer", disabled=disabled)
    if answer == _(OTHER):
        st.text_input(_("Your word"), max_chars=TYPED_MAX, key=f"{key}_typed", disabled=disabled,
                      placeholder=_("type the token you expect, e.g. Paris"))
    return answer


def _nothing_typed(key: str) -> None:
    st.session_state[f"{key}_error"] = _("Type a word first (or pick one of the options).")


def _skip(key: str, question: Question) -> None:
    """Shown without a prediction: this and every later version of the question, until "Predict again"."""
    st.session_state[f"{key}_committed"] = (None, question.fingerprint)


def _commit(key: str, question: Question) -> None:
    given = _given(question, key)
    if given is None:
        return _nothing_typed(key)
    st.session_state[f"{key}_committed"] = (given, question.fingerprint)


def _retry(key: str) -> None:
    for part in ("committed", "answer", "typed"):
        st.session_state.pop(f"{key}_{part}", None)


def _said(question: Question, answer: str) -> str:
    """An answer for markdown: an option as it is, a typed word as literal text."""
    return literal(answer) if answer in question.options else f"“{literal(answer)}”"


def predict_then_reveal(question: Question, key: str) -> bool | None:
    """Ask ``question``; reveal the computed answer only after the student commits.

    Returns None before a commit, else whether the committed answer was right (False when the student chose to see
    it without predicting). An answer given to an earlier version of the question (the controls have moved since)
    is discarded.
    """
    return asked(question, key)[0]


def ask_first(question: Question, key: str, folded: str) -> bool:
    """Ask ``question`` (as :func:`predict_then_reveal`) before the parts of the page that answer it, and say whether
    they may be drawn now: True once the student has committed a prediction or chosen to see them without one (in a
    class: once the teacher has revealed the answer). Before that a line names what stays folded (``folded``, e.g.
    "The measured spread and its charts") and the page draws none of it: ``if ask_first(...): draw the answer``."""
    return asked(question, key)[1] or folded_line(folded)


def folded_line(folded: str, homework: bool = False) -> bool:
    """The line that stands in for what a question folds (``folded``, plural: "The measurements", translated) until
    what opens it: a homework vote sent (``homework``), else a commit here, or the teacher's reveal in a class;
    -> False. One whole sentence for each, for the translators."""
    if homework:
        line = _("{folded} stay folded until you send your answer.")
    elif membership.teacher_key():
        line = _("{folded} stay folded until you reveal the answer.")
    elif membership.code():
        line = _("{folded} stay folded until your teacher reveals the answer.")
    else:
        line = _("{folded} stay folded until you commit a prediction (or choose “Show me without predicting”).")
    st.caption(":material/visibility_off: " + line.format(folded=folded))
    return False


def answered_here(key: str) -> bool:
    """Whether this session, outside a class, has committed a prediction to question ``key`` or chosen to see the
    answer without one (what unfolds an ``ask_first``)."""
    return st.session_state.get(f"{key}_committed") is not None


def asked(question: Question, key: str) -> tuple[bool | None, bool]:
    """Draw ``question`` -> (whether the answer given was right, None before one; whether what answers it may be
    drawn: committed or shown without a prediction, in a class revealed by the teacher)."""
    if membership.code():   # each student's own vote: drawn by each session, also in a replayed page
        return replayed.live(_class_question, question, key, state=_revealed)
    committed = st.session_state.get(f"{key}_committed")
    if committed is not None and committed[0] is not None and committed[1] != question.fingerprint:
        _retry(key)   # an answer to an earlier version; "without predicting" holds until the student predicts again
        committed = None
    with st.container(border=True):
        st.markdown(_("**Predict, then reveal.** {prompt}").format(prompt=question.prompt))
        if committed is not None and committed[0] is None:   # shown without a prediction: no options to grey out
            _unanswered(question)
            st.button(_("Predict again"), key=f"{key}_retry", on_click=_retry, args=(key,))
            return False, True
        answer = _answer_widgets(question, key, disabled=committed is not None)
        if committed is None:
            _show_error(key)
            with st.container(horizontal=True, gap="small"):
                st.button(_("Commit my answer"), key=f"{key}_commit", disabled=answer is None,
                          on_click=_commit, args=(key, question))
                st.button(_("Show me without predicting"), key=f"{key}_skip", type="tertiary",
                          on_click=_skip, args=(key, question))
            return None, False
        return _verdict(question, committed[0], retry=key), True


def _unanswered(question: Question) -> None:
    st.info(_("You did not predict. The answer is {answer}.").format(answer=question.correct))
    st.markdown(question.reveal)


def _verdict(question: Question, answer: str, retry: str | None = None) -> bool:
    right = question.check(answer)
    if right:
        st.success(_("Right: {answer}.").format(answer=question.correct))
    else:
        st.error(_("Not quite: you said {said}; the computation says {answer}.").format(
            said=_said(question, answer), answer=question.correct))
    st.markdown(question.reveal)
    if retry:
        st.button(_("Try again"), key=f"{retry}_retry", on_click=_retry, args=(retry,))
    return right


# ---------------------------------------------------------------------------------------------- class questions

def _show_error(key: str) -> None:
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(literal(error))


def _send(key: str, question: Question, widgets: str) -> None:
    given = _given(question, widgets)
    if given is None:
        return _nothing_typed(key)
    try:
        membership.store().answer(membership.code(), key, membership.student(), vote_of(question.options, given))
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _move(op: str, key: str, round_: int) -> None:
    """The teacher's click: show | again | reveal, for the round the teacher's screen showed."""
    try:
        getattr(membership.store(), op)(membership.code(), membership.teacher_key(), key, round=round_)
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _chart(question: Question, key: str, poll: Progress) -> None:
    """The counts of the rounds that are closed (never of an open one); the right answer only once revealed."""
    rounds = [counts_by_text(membership.store().counts(membership.code(), key, round=r), question.options)
              for r in poll.shown_rounds]   # votes are kept by option: each reads in this viewer's language
    right = question.correct if poll.revealed else None
    if len(rounds) == 1:
        n = sum(rounds[0].values())
        title = (ngettext("Class answers, round 1 ({n} student)", "Class answers, round 1 ({n} students)", n)
                 .format(n=n) if poll.round == 2 else "")
        figure = answer_bars(question.options, rounds[0], right, title=title, typed=question.typed)
    else:
        figure = answer_rounds(question.options, rounds, right, typed=question.typed)
    show_figure(figure, f"{key}_class_chart", f"class-answers-{key}")


def _ask(question: Question, key: str) -> None:
    """Store the question with the room as the teacher's page shows it (for the report), once per version."""
    asked = (membership.code(), question.fingerprint, question.typed)
    if st.session_state.get(f"{key}_asked") == asked:
        return
    try:
        membership.store().ask(membership.code(), membership.teacher_key(), key, question.prompt, question.options,
                               question.correct, question.typed)
    except ClassroomError:   # too long to keep (the report then names the question by its id), or the class ended
        return
    st.session_state[f"{key}_asked"] = asked


def _teacher_side(question: Question, key: str, poll: Progress) -> None:
    """Before "Show answers" the teacher's own screen holds no count: "n of m answered", and only off the
    projector. The server reruns the page when that number moves (``following.watch``)."""
    _ask(question, key)
    following.watch(key, poll)
    if poll.shown_rounds:
        _chart(question, key, poll)
    if poll.revealed:
        st.success(_("Revealed to the class: the answer is {answer}.").format(answer=question.correct))
        st.markdown(question.reveal)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        if poll.open:
            if membership.projector():
                st.markdown(_("Voting is open. Nobody sees the answers until they are shown."))
            else:
                info = membership.store().room(membership.code())
                st.markdown(ngettext("**{answered} of {students} answered**", "**{answered} of {students} answered**",
                                     poll.answered).format(
                    answered=poll.answered, students=info.students if info else 0))
            st.button(_("Show answers"), key=f"{key}_show", icon=":material/visibility:", type="primary",
                      on_click=_move, args=("show", key, poll.round))
        else:
            st.button(_("Discuss and vote again"), key=f"{key}_again", icon=":material/sync:", type="primary",
                      on_click=_move, args=("again", key, poll.round))
            st.button(_("Reveal the answer"), key=f"{key}_reveal", icon=":material/check_circle:",
                      on_click=_move, args=("reveal", key, poll.round))
    if poll.open and poll.round == 1:
        st.caption(_("Students vote alone. After “Show answers” you may let them discuss and vote again."))
    elif poll.open:
        st.caption(_("Round 2: the class discussed and votes again. “Show answers” then shows both rounds and the "
                     "right answer."))
    else:
        st.caption(_("Round 1's answers are shown; the right answer is not. Let the class discuss and vote again, "
                     "or reveal the answer."))


def _revealed(question: Question, key: str) -> bool:
    """Whether the room has revealed ``key``'s answer (what a page draws after its question depends on it)."""
    try:
        return membership.store().progress(membership.code(), key).revealed
    except ClassroomError:
        return True


def _class_question(question: Question, key: str) -> tuple[bool | None, bool]:
    room, me = membership.code(), membership.student()
    try:
        poll = membership.store().progress(room, key)
        mine = {r: answer_text(v, question.options)   # kept by option: read in this student's language
                for r, v in membership.store().my_answers(room, me).get(key, {}).items()} if me else {}
    except ClassroomError as err:
        st.warning(literal(err))
        return None, True   # nothing to wait for: the page is not held back
    with st.container(border=True):
        st.markdown(":material/groups: " + (_("**Class question · round 2.** {prompt}") if poll.round == 2
                                            else _("**Class question.** {prompt}")).format(prompt=question.prompt))
        _show_error(key)
        if membership.teacher_key():
            try:
                _teacher_side(question, key, poll)
            except ClassroomError as err:
                st.warning(literal(err))
            return None, poll.revealed
        return _student_side(question, key, poll, mine), poll.revealed


def _student_side(question: Question, key: str, poll: Progress, mine: dict[int, str]) -> bool | None:
    widgets = key if poll.round == 1 else f"{key}_r2"   # round 2 is a fresh vote, with fresh widgets
    vote = mine.get(poll.round)
    if f"{widgets}_answer" not in st.session_state and vote in question.options:
        st.session_state[f"{widgets}_answer"] = vote
    elif f"{widgets}_answer" not in st.session_state and vote and question.typed:   # a word typed earlier
        st.session_state[f"{widgets}_answer"], st.session_state[f"{widgets}_typed"] = _(OTHER), vote
    if poll.round == 2 and 1 in mine:
        st.markdown(_("Your first answer: {said}.").format(said=_said(question, mine[1])))
    if poll.shown_rounds and not poll.revealed:
        _chart(question, key, poll)
    answer = _answer_widgets(question, widgets, disabled=not poll.open)
    if poll.revealed:
        last = mine.get(2, mine.get(1))
        right = _verdict(question, last) if last else None
        if not last:
            st.info(_("You did not answer. The answer is {answer}.").format(answer=question.correct))
            st.markdown(question.reveal)
        _chart(question, key, poll)
        return right
    if not poll.open:
        st.caption(_("Your teacher has shown the class's answers. Wait: you may discuss and vote again."))
        return None
    st.button(_("Commit my answer"), key=f"{key}_commit", disabled=answer is None, on_click=_send,
              args=(key, question, widgets))
    if vote:
        st.caption(_("Your answer is in: {said}. You can change it until the teacher shows the answers.").format(
            said=_said(question, vote)))
    elif poll.round == 2:
        st.caption(_("Discuss with your neighbours, then vote again. Nobody sees the answers until the teacher "
                     "shows them."))
    else:
        st.caption(_("Vote on your own: nobody sees the answers until the teacher shows them."))
    return None
