"""A homework's sentence (``explorer.classroom.homework``'s ``sentence_prompt``): the teacher asks for it when setting
the homework; each student writes theirs (and may change it) on any step of their run, under the lesson bar; the
teacher's homework panel lists them with the writers' nicknames and a Hide button, or, in projector view, only the
sentences not hidden, numbered, without a name."""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError, NoSuchRoom
from explorer.classroom.sentences import SENTENCE_MAX
from explorer.ui.live import membership
from explorer.ui.text import literal
from explorer.words.i18n import _, ngettext

BOX, ERROR = "_hw_sentence", "_hw_sentence_error"


# ---------------------------------------------------------------------------------------------- teacher

def _hide(code: str, key: str, student: str) -> None:
    try:
        membership.store().hide_sentence(code, key, student)
    except ClassroomError as err:
        membership.note(str(err))


def teacher(code: str, key: str) -> None:
    """The homework's sentences in its teacher panel (nothing when it asks for none)."""
    store = membership.store()
    try:
        r = store.sentence_round(code)
        rows = store.sentences(code, key) if r.number else []
        names = dict(store.roster(code, key)) if r.number else {}
    except ClassroomError:
        return
    if not r.number:
        return
    st.markdown(":material/edit_note: " + _("**Asked:** {prompt}").format(prompt=literal(r.prompt)))
    st.caption(ngettext("{n} sentence so far", "{n} sentences so far", len(rows)).format(n=len(rows)))
    if membership.projector():   # the class may see the sentences, never who wrote them
        shown = [s.text for s in rows if not s.hidden]
        if shown:
            st.markdown("\n".join(f"{i}. {literal(t)}" for i, t in enumerate(shown, 1)))
        return
    for i, s in enumerate(rows):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            line = literal(s.text) + " · *" + literal(names.get(s.student, "?")) + "*"
            st.markdown(("~~" + line + "~~ " + _("(hidden)")) if s.hidden else line)
            if not s.hidden:
                st.button(_("Hide"), key=f"_hw_hide_{code}_{i}", icon=":material/visibility_off:", type="tertiary",
                          on_click=_hide, args=(code, key, s.student))
    if rows:
        st.caption(_("Hidden sentences never reach the projector view or the report."))


# ---------------------------------------------------------------------------------------------- student

def _send(code: str, me: str, box: str) -> None:
    try:
        membership.store().write_sentence(code, me, st.session_state.get(box, ""))
    except NoSuchRoom:
        pass   # the homework ended: the lesson bar says so on this run
    except ClassroomError as err:
        st.session_state[ERROR] = str(err)


def student(code: str, me: str) -> None:
    """The student's sentence for their homework, open until they wrote one (nothing when it asks for none)."""
    store = membership.store()
    try:
        r = store.sentence_round(code)
        mine = store.my_sentence(code, me) if r.number else None
    except ClassroomError:
        return
    if not r.number:
        return
    with st.expander(_("Your sentence for your teacher"), icon=":material/edit_note:", expanded=mine is None):
        st.markdown(literal(r.prompt))
        error = st.session_state.pop(ERROR, None)
        if error:
            st.warning(literal(error), icon=":material/error:")
        if mine is not None and mine.hidden:
            st.warning(_("Your teacher has set your sentence aside for this round."))
            return
        box = f"{BOX}_{code}"
        if box not in st.session_state and mine is not None:
            st.session_state[box] = mine.text
        st.text_input(_("Your sentence"), key=box, max_chars=SENTENCE_MAX)
        st.button(_("Send my sentence"), key=f"{BOX}_send", icon=":material/send:", on_click=_send,
                  args=(code, me, box))
        if mine is not None:
            st.caption(_("Yours is in: {text} You can change it until your teacher ends the homework.").format(
                text=literal(mine.text)))
