"""Antecedent flip: two sentences that differ in one word; which heads move the query's attention?"""
import streamlit as st

from explorer.attention import heads
from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE, DECODER_PAIR, FLIP_PAIRS
from explorer.plots import heads as head_plots
from explorer.ui import cached, pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import heads_do as fx
from explorer.ui.views.flip import show_head_in_both
from explorer.words import numbers
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("Antecedent flip"))
st.caption(_("Change one word and some heads change their mind: in A, *it* should point at the animal; in B, at "
             "the street. Each head's flip = (lean to the first candidate in A) − (lean in B)."))

PAIRS = {name: dict(text=a, text_b=b, query=q, cands=list(c)) for name, (a, b, q, c) in FLIP_PAIRS.items()}
NEW_HEAD = ("layer", "head")   # a new pair opens on its own strongest head

controls = teacher_driven("query", "layer", "head", text="your teacher's sentences")   # folded while following
with controls:
    model = pickers.model_picker()
    text_a, text_b = ui.sentence_pair((ANIMAL_TIRED, ANIMAL_WIDE))
    for column, name in zip(st.columns(len(FLIP_PAIRS)), FLIP_PAIRS):
        column.button(_("Use the pair: {name}").format(name=_(name)), on_click=ui.set_values,   # the label: N_
                      args=(PAIRS[name], NEW_HEAD), key=f"pair_{name}")
a, b = ui.attention_or_stop(model, text_a), ui.attention_or_stop(model, text_b)
facts, options = a.facts, heads.word_options(a.words)
left, right = controls.columns([1, 2])
with left:
    query = pickers.word_picker(_("Query word"), "query", options, "it",
                                   [a.words[w] if w >= 0 else "" for w in a.word_ids])
with right:
    candidates = pickers.words_picker(_("Candidate antecedents (two)"), "cands", options, ["animal", "street"])
try:
    result = cached.flip(a, b, query, candidates)   # once per server for the class
except ValueError as err:
    ui.show_link_notes()
    st.warning(ui.literal(err))
    st.stop()

best, (left, right) = heads.best_head(result.table), controls.columns(2)
with left:
    layer = pickers.index_picker(_("Layer"), "layer", facts.n_layers, default=best[0])
with right:
    head = pickers.index_picker(_("Head"), "head", facts.n_heads, default=best[1])
ui.show_link_notes()
if result.query_sees_change:
    (st.success if result.table["flips"].any() else st.info)(ui.literal(result.message))
    if note := heads.small_flip_note(result.table):
        st.caption(note)
    left, right = st.columns(2)
    with left:
        ui.show_figure(lambda: head_plots.flip_map(result.table, facts.n_layers, facts.n_heads, selected=(layer, head)),
                       "flip_map", "flip-map", on_select=ui.open_head("flip_map"),
                       view=(model, text_a, text_b, query, tuple(candidates), layer, head))
        st.caption(_("Blue: leans to the first candidate in A more than in B. ● the head flips. Click a cell to open "
                     "it."))
    with right:
        ranked, flipping = heads.ranked_flips(result.table)
        st.markdown(_("**Heads that flip**, largest first") if flipping else
                    _("**No head flips**; the largest changes:"))
        st.dataframe(numbers.table(heads.readable(ranked)), key="ranked", hide_index=True,
                     on_select=ui.open_head("ranked", ranked), selection_mode="single-row")
        st.caption(_("Select a row to open that head below. Sort by clicking a column header."))
        ui.download_csv(result.table, "flip-all-heads.csv", "flip_csv", _("All heads as CSV"))
else:
    st.warning(ui.literal(result.message))
    later = heads.words_after(a.words, a.word_ids, result.first_difference)
    st.markdown(_("Query words after the change, which can see it: {words}").format(
        words=", ".join(f"*{ui.literal(w)}*" for w in later)) if later else
        _("Query words after the change, which can see it: none yet; add words after it, or use the pair below."))
    st.button(_("Switch to the pair written for decoders: {pair}").format(pair=_(DECODER_PAIR)), on_click=ui.set_values,
              args=(PAIRS[DECODER_PAIR], NEW_HEAD), type="primary")

show_head_in_both(model, a, b, result, layer, head)
fx.knock_these(model, text_a, text_b, query, candidates, result)
