"""Antecedent flip: two sentences that differ in one word; which heads move the query's attention?"""
import streamlit as st

from explorer import analysis, heads
from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE, FLIP_PAIRS
from explorer.plots import attention as plots
from explorer.plots import heads as head_plots
from explorer.ui import effects as fx
from explorer.ui import pickers
from explorer.ui import widgets as ui

ui.use_app_navigation()
st.title("Antecedent flip")
st.caption("Change one word and some heads change their mind: in A, *it* should point at the animal; in B, at "
           "the street. Each head's flip = (lean to the first candidate in A) − (lean in B).")


def use_pair(name: str) -> None:
    a, b, query, candidates = FLIP_PAIRS[name]
    st.session_state.update(text=a, text_b=b, query=query, cands=list(candidates))
    for key in ("layer", "head"):  # show the new pair's strongest head
        st.session_state.pop(key, None)
        if key in st.query_params:
            del st.query_params[key]


model = ui.model_picker()
left, right = st.columns(2)
with left:
    text_a = ui.text_box("text", ANIMAL_TIRED, "Sentence A", with_examples=False)
with right:
    text_b = ui.text_box("text_b", ANIMAL_WIDE, "Sentence B", with_examples=False)
for column, name in zip(st.columns(len(FLIP_PAIRS)), FLIP_PAIRS):
    column.button(f"Use the pair: {name}", on_click=use_pair, args=(name,), key=f"pair_{name}")
a, b = ui.attention_or_stop(model, text_a), ui.attention_or_stop(model, text_b)
facts, options = a.facts, heads.word_options(a.words)
left, right = st.columns([1, 2])
with left:
    query = pickers.word_picker("Query word", "query", options, "it",
                                   [a.words[w] if w >= 0 else "" for w in a.word_ids])
with right:
    candidates = pickers.words_picker("Candidate antecedents (two)", "cands", options, ["animal", "street"])
try:
    result = analysis.flip(a, b, query, candidates)
except ValueError as err:
    ui.show_link_notes()
    st.warning(ui.literal(err))
    st.stop()

best = heads.best_head(result.table)
left, right = st.columns(2)
with left:
    layer = ui.index_picker("Layer", "layer", facts.n_layers, default=best[0])
with right:
    head = ui.index_picker("Head", "head", facts.n_heads, default=best[1])
ui.show_link_notes()
if result.query_sees_change:
    (st.success if result.table["flips"].any() else st.info)(ui.literal(result.message))
    if note := heads.small_flip_note(result.table):
        st.caption(note)
    left, right = st.columns(2)
    with left:
        fig = head_plots.flip_map(result.table, facts.n_layers, facts.n_heads, selected=(layer, head))
        ui.show_figure(fig, "flip_map", "flip-map", on_select=ui.open_head("flip_map"))
        st.caption("Blue: leans to the first candidate in A more than in B. ● the head flips. Click a cell to open it.")
    with right:
        ranked, flipping = heads.ranked_flips(result.table)
        st.markdown("**Heads that flip**, largest first" if flipping else "**No head flips**; the largest changes:")
        st.dataframe(ranked, key="ranked", hide_index=True, on_select=ui.open_head("ranked", ranked),
                     selection_mode="single-row")
        st.caption("Select a row to open that head below. Sort by clicking a column header.")
        ui.download_csv(result.table, "flip-all-heads.csv", "flip_csv", "⬇️ All heads as CSV")
else:
    st.warning(ui.literal(result.message))
    later = heads.words_after(a.words, a.word_ids, result.first_difference)
    st.markdown("Query words after the change, which can see it: " + (", ".join(f"*{ui.literal(w)}*" for w in later) or
                "none yet; add words after it, or use the pair below."))
    decoder_pair = next(n for n in FLIP_PAIRS if "decoder" in n)
    st.button(f"Switch to the pair written for decoders: {decoder_pair}", on_click=use_pair, args=(decoder_pair,),
              type="primary")

rows = {s: analysis.word_positions(r, analysis.find_word(r, query, last=True)) for s, r in (("A", a), ("B", b))}
same = heads.max_row_difference(a.weights[layer, head], b.weights[layer, head], rows["A"])
label = "" if result.query_sees_change else f"identical in A and B (max diff {same:.0e})"
st.subheader(f"Layer {layer} · head {head}")
figs, bars = {}, {}
for side, res in (("A", a), ("B", b)):
    figs[side] = head_plots.flip_heatmap(res.weights[layer, head], res.tokens, res.keys, query_rows=rows[side],
                                          changed=result.first_difference, causal=facts.causal, row_label=label,
                                          title=f"Sentence {side} · layer {layer} · head {head}")
    bars[side] = plots.query_bars(res.weights[layer, head, rows[side]].mean(0), res.keys, f"{query} ({side})")
head_plots.same_x_range(*bars.values())
for column, (side, res) in zip(st.columns(2), (("A", a), ("B", b))):
    with column:
        ui.show_figure(figs[side], f"heat_{side}", f"flip-{side}-L{layer}H{head}")
        ui.fidelity_badge(res, layer, head)
        ui.download_csv(heads.matrix_frame(res.weights[layer, head], res.tokens, res.keys),
                        f"flip-{side}-L{layer}H{head}.csv", f"csv_{side}")
        ui.show_figure(bars[side], f"bars_{side}", f"flip-{side}-bars-L{layer}H{head}")
if not result.query_sees_change and a.weights.shape == b.weights.shape:
    fig = head_plots.difference_heatmap(a.weights[layer, head], b.weights[layer, head], a.tokens, a.keys)
    ui.show_figure(fig, "diff", f"flip-difference-L{layer}H{head}")
fx.knock_these(model, text_a, text_b, query, candidates, result)
