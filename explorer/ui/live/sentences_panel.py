"""The Classroom page's "Your sentences": the teacher asks every student for one sentence, hides any, closes the
round and shows one head across all of them; each student writes (and may change) theirs and finds it by its number.

The teacher sees "n of m wrote one" and, off the projector, every sentence with its writer's nickname (nicknames
never reach the projector or a student). The figure, its summary and the numbered sentences are drawn once per view
(the model, layer, head, word and the sentences shown) and replayed to every follower (``drawn_once``); a student's
own line ("yours is sentence 7") is drawn in their own session, outside it. With a word, the class question "which
head follows it back" comes first, and the figure opens when the teacher reveals its answer."""
from __future__ import annotations

import hashlib

import streamlit as st

from explorer.classroom import ClassroomError
from explorer.classroom.sentences import SENTENCE_MAX, SHOWN, MySentence, SentenceRound, wrote_count
from explorer.model import embedded
from explorer.model.registry import EMBEDDED, EMBEDDED_ENCODER
from explorer.plots import sentences as plots
from explorer.sentences.batch import ClassAttention, class_attention
from explorer.sentences.head_in_words import follow_question
from explorer.ui import cached
from explorer.ui.drawn_once import drawn_once
from explorer.ui.live import membership, seat
from explorer.ui.predict_first import ask_first
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure
from explorer.words.i18n import N_, _

PROMPT, MINE, MODEL, LAYER, HEAD, WORD, ERROR = ("_sent_prompt", "_sent_mine", "_sent_model", "_sent_layer",
                                                 "_sent_head", "_sent_word", "_sent_error")
DEFAULT_PROMPT = N_("Write a sentence where “it” could mean two things.")
WORD_MAX = 40


def _call(method: str, *args) -> None:
    """A store call on a click; its ClassroomError is shown on the next run."""
    try:
        getattr(membership.store(), method)(membership.code(), *args)
    except ClassroomError as err:
        st.session_state[ERROR] = str(err)


def _error() -> None:
    error = st.session_state.pop(ERROR, None)
    if error:
        st.warning(literal(error), icon=":material/error:")


def _settings() -> dict:
    return {"model": st.session_state.get(MODEL, EMBEDDED_ENCODER), "layer": int(st.session_state.get(LAYER, 0)),
            "head": int(st.session_state.get(HEAD, 0)), "word": str(st.session_state.get(WORD, "")).strip()[:WORD_MAX]}


def _batch(model: str, layer: int, sentences: tuple[str, ...]) -> tuple[ClassAttention, int]:
    """(every sentence through the model in one batch that stops after ``layer``, the layer clamped to the
    model's), once per server for this model, layer and these sentences."""
    loaded = cached.get_model(model)
    layer = min(max(0, layer), loaded.model.config.num_hidden_layers - 1)
    return cached.kept(("class-sentences", model, layer, sentences),
                       lambda: class_attention(loaded, list(sentences), up_to=layer)), layer


def _shown(r: SentenceRound, visible: tuple[str, ...], mine: MySentence | None = None) -> None:
    """The class's figure: the class question first (with a word), then the figure, its summary and the numbered
    sentences, drawn once per view; a student's own number below."""
    settings = r.figure or {}
    model, word = str(settings.get("model", "")), str(settings.get("word", ""))[:WORD_MAX]
    if model not in EMBEDDED:
        st.warning(_("This figure's model is not offered here."))
        return
    if not visible:
        st.info(_("No sentence to show yet."))
        return
    ca, layer = _batch(model, int(settings.get("layer", 0)), visible)
    head = min(max(0, int(settings.get("head", 0))), ca.n_heads - 1)
    digest = hashlib.blake2b(repr(visible).encode(), digest_size=6).hexdigest()
    question = follow_question(ca, layer, word) if word else None
    if question is not None and not ask_first(question, f"sentences-{r.number}-{model}-{layer}-{digest}",
                                              _("The figure and its summary")):
        return
    view = (model, layer, head, word, visible)
    built = {}

    def figure():
        if "fig" not in built:
            built["fig"] = plots.head_across(ca, layer, head, word)
        return built["fig"]

    show_figure(figure, "_sent_figure", "class-sentences", view=view)

    def text() -> None:
        st.markdown("\n".join(f"{i}. {literal(t)}" for i, t in enumerate(visible, 1)))

    drawn_once(("class-sentences-list", view), text)
    if mine is not None and mine.number is not None:
        st.info(_("Yours is sentence {n}.").format(n=mine.number), icon=":material/person:")


def _figure_controls(r: SentenceRound, visible: int) -> None:
    """Model, layer, head and word for the figure, and the button that shows it (closing the round)."""
    if st.session_state.get(MODEL) not in EMBEDDED:
        st.session_state[MODEL] = EMBEDDED_ENCODER
    st.session_state.setdefault(WORD, "it")
    cols = st.columns([3, 1, 1, 2], vertical_alignment="bottom")
    model = cols[0].selectbox(_("Model"), list(EMBEDDED), key=MODEL, format_func=lambda n: _(EMBEDDED[n].label))
    layers, heads = embedded.layers_and_heads(model)
    for k, most in ((LAYER, layers), (HEAD, heads)):   # a middle layer first: the first ones mostly look at themselves
        if not 0 <= int(st.session_state.get(k, most // 2 if k == LAYER else 0)) < most:
            st.session_state[k] = 0
        st.session_state.setdefault(k, most // 2 if k == LAYER else 0)
    cols[1].number_input(_("Layer"), 0, layers - 1, key=LAYER)
    cols[2].number_input(_("Head"), 0, heads - 1, key=HEAD)
    cols[3].text_input(_("A word all sentences share (empty: whole sentences)"), key=WORD, max_chars=WORD_MAX)
    st.button(_("Show the class") if r.state != SHOWN else _("Show the class again with these settings"),
              key="_sent_show", icon=":material/co_present:", type="primary", disabled=not visible,
              on_click=lambda: _call("show_sentences", membership.teacher_key(), _settings()))


def teacher() -> None:
    """The teacher's side: ask, watch them come in (hide any), close, show."""
    room, key = membership.code(), membership.teacher_key()
    try:
        r = membership.store().sentence_round(room)
        rows = membership.store().sentences(room, key)
        names = dict(membership.store().roster(room, key))
        info = membership.store().room(room)
    except ClassroomError:   # the class ended meanwhile: the next run says so
        return
    seat.mine().sentences_shown = rows   # the server reruns the page when they change
    with st.container(border=True):
        st.subheader(":material/edit_note: " + _("Your sentences"), anchor=False)
        _error()
        if not r.open:
            st.session_state.setdefault(PROMPT, _(DEFAULT_PROMPT))
            st.text_input(_("What should each student write?"), key=PROMPT, max_chars=SENTENCE_MAX)
            st.button(_("Ask for sentences") if not r.number else _("Ask for new sentences"), key="_sent_open",
                      icon=":material/edit_note:", on_click=lambda: _call("open_sentences", key,
                                                                          st.session_state.get(PROMPT, "")))
        if not r.number:
            return
        st.markdown(_("**Asked:** {prompt}").format(prompt=literal(r.prompt)))
        m = info.students if info else 0
        st.markdown(wrote_count(len(rows), m))
        if r.open:
            st.button(_("Close the round"), key="_sent_close", icon=":material/lock:",
                      on_click=lambda: _call("close_sentences", key))
        if not membership.projector():   # the writers' nicknames: for the teacher only
            for i, s in enumerate(rows):
                with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                    line = literal(s.text) + " · *" + literal(names.get(s.student, "?")) + "*"
                    st.markdown(("~~" + line + "~~ " + _("(hidden)")) if s.hidden else line)
                    if not s.hidden:
                        st.button(_("Hide"), key=f"_sent_hide_{i}", icon=":material/visibility_off:",
                                  type="tertiary", on_click=lambda sid=s.student: _call("hide_sentence", key, sid))
            st.caption(_("Hidden sentences never reach the projector, the figure or the report."))
        visible = tuple(s.text for s in rows if not s.hidden)
        if not membership.projector():
            _figure_controls(r, len(visible))
        if r.state == SHOWN:
            _shown(r, visible)


def _write(box: str) -> None:
    _call("write_sentence", membership.student(), st.session_state.get(box, ""))


def student() -> None:
    """A student's side: the prompt, their sentence (sent, changed until the round closes) and the figure."""
    room, me = membership.code(), membership.student()
    try:
        r = membership.store().sentence_round(room)
        mine = membership.store().my_sentence(room, me)
        visible = tuple(membership.store().class_sentences(room)) if r.state == SHOWN else ()
    except ClassroomError:
        return
    if not r.number:
        return
    with st.container(border=True):
        st.subheader(":material/edit_note: " + _("Your sentence"), anchor=False)
        st.markdown(literal(r.prompt))
        _error()
        if mine is not None and mine.hidden:
            st.warning(_("Your teacher has set your sentence aside for this round."))
        elif r.open:
            box = f"{MINE}_{r.number}"   # a new round starts with an empty box
            if box not in st.session_state and mine is not None:
                st.session_state[box] = mine.text
            st.text_input(_("Your sentence"), key=box, max_chars=SENTENCE_MAX)
            st.button(_("Send my sentence"), key="_sent_send", icon=":material/send:", type="primary", on_click=_write,
                      args=(box,))
            if mine is not None:
                st.caption(_("Yours is in: {text} You can change it until your teacher closes the round.").format(
                    text=literal(mine.text)))
        elif mine is not None:
            st.markdown(_("Your sentence: {text}").format(text=literal(mine.text)))
        else:
            st.caption(_("Your teacher closed the round."))
        if r.state == SHOWN:
            _shown(r, visible, mine)
