"""Compare heads: two to four heads side by side on one colour scale, and statistics for every head."""
import streamlit as st

from explorer.attention import analysis, heads
from explorer.plots import heads as head_plots
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import heads_do as fx
from explorer.ui.views.compare import side_by_side

ui.use_app_navigation()
st.title("Compare heads")
st.caption("Heads of the same model on the same text, side by side on one colour scale. Pick heads by name, "
           "by clicking the map, or from the statistics table.")

STATS = {"previous_token": "previous token", "sink": "sink", "entropy": "entropy (nats)",
         "max_weight": "max weight", "mean_distance": "mean distance", "self": "self"}


def add_head(source: str, frame=None) -> None:
    """Callback: the head clicked in the map or selected in the table joins the comparison (replacing the last)."""
    head = ui.selected_head(source, frame)
    if head is not None:
        ids = [h for h in st.session_state.get("heads", []) if h != heads.head_id(head)]
        st.session_state["heads"] = [*ids[:3], heads.head_id(head)]


controls = teacher_driven("heads")   # folded away while a student follows
with controls:
    model = pickers.model_picker()
    text = ui.text_box()
raw = ui.attention_or_stop(model, text)
result, facts = fx.weighting(model, text, raw), raw.facts
stats = fx.more_stats(model, text, raw, analysis.head_stats(result.weights, result.special))
STATS.update({c: c for c in ("sink by value size", "induction") if c in stats})
with controls:
    chosen = pickers.heads_picker("Heads to compare (2–4)", "heads", facts.n_layers, facts.n_heads,
                                  heads.preselect(stats))
ui.show_link_notes()
if len(chosen) < 2:
    st.info("Pick at least two heads to compare them.")
side_by_side(model, text, result, chosen)

st.subheader("Every head of the model")
left, right = st.columns(2)
with left:
    stat = st.selectbox("Statistic on the map", list(STATS), format_func=STATS.get, key="stat")
    grid = heads.grid(stats, stat, facts.n_layers, facts.n_heads)
    fig = head_plots.value_per_head(grid, value_name=STATS[stat], title=STATS[stat],
                                    selected=chosen[-1] if chosen else None)
    ui.show_figure(fig, "stat_map", f"{facts.name}-{stat}-map", on_select=lambda: add_head("stat_map"))
    st.caption("Click a cell to add that head to the comparison (it replaces the last one when there are four).")
with right:
    table = stats.round(3)
    st.dataframe(table, key="stats", hide_index=True, height=420, selection_mode="single-row",
                 on_select=lambda: add_head("stats", table))
    st.caption("Sort by clicking a column header; select a row to add that head to the comparison.")
    ui.download_csv(table, f"{facts.name}-head-stats.csv", "stats_csv", "Statistics as CSV")
    if chosen:
        l, h = chosen[-1]
        ui.page_link("pages/geometry.py", "These heads over 200 sentences (head geometry)",
                     icon=":material/scatter_plot:", query_params={"model": model, "layer": l, "head": h,
                                                                   "geo_heads": ",".join(map(heads.head_id, chosen))})

fx.similar_heads_section(model, chosen, on_select=lambda: add_head("similar"))

st.subheader("What the common patterns mean")
st.caption("Each number is a mean over the text's query tokens. Thresholds are rules of thumb, not definitions.")
for pattern in heads.patterns(stats, len(result.tokens), special_sinks=bool(result.special.any())):
    found = ", ".join(f"L{l}H{h} ({v:.2f})" for (l, h), v in zip(pattern.heads, pattern.values))
    st.markdown(f"**{pattern.name.capitalize()}** — {pattern.meaning}  \nHere: {found}")
