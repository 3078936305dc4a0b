"""Compare heads: two to four heads side by side on one colour scale, and statistics for every head."""
import streamlit as st

from explorer.attention import analysis, heads
from explorer.plots import heads as head_plots
from explorer.sitemap.table import GEOMETRY
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import value_roles
from explorer.ui.views.compare import side_by_side
from explorer.words import numbers
from explorer.words.i18n import N_, _

ui.use_app_navigation()
st.title(_("Compare heads"))
st.caption(_("Heads of the same model on the same text, side by side on one colour scale. Pick heads by name, "
             "by clicking the map, or from the statistics table."))

STATS = {"previous_token": N_("previous token"), "sink": N_("sink"), "entropy": N_("entropy (nats)"),
         "max_weight": N_("max weight"), "mean_distance": N_("mean distance"), "self": N_("self"),
         "sink by value size": N_("sink by value size"), "induction": N_("induction")}
COLUMNS = {"layer": N_("layer"), "head": N_("head"), "sink by weight": N_("sink by weight"), "role": N_("role"),
           "duplicate": N_("duplicate"), "on real text": N_("on real text")}   # the table's other columns


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
result, facts = value_roles.weighting(model, text, raw), raw.facts
stats = value_roles.more_stats(model, text, raw, analysis.head_stats(result.weights, result.special))
shown = {c: _(name) for c, name in STATS.items() if c in stats}
with controls:
    chosen = pickers.heads_picker(_("Heads to compare (2–4)"), "heads", facts.n_layers, facts.n_heads,
                                  heads.preselect(stats))
ui.show_link_notes()
if len(chosen) < 2:
    st.info(_("Pick at least two heads to compare them."))
side_by_side(model, text, result, chosen)

st.subheader(_("Every head of the model"))
left, right = st.columns(2)
with left:
    stat = st.selectbox(_("Statistic on the map"), list(shown), format_func=shown.get, key="stat")
    grid = heads.grid(stats, stat, facts.n_layers, facts.n_heads)
    fig = head_plots.value_per_head(grid, value_name=shown[stat], title=shown[stat],
                                    selected=chosen[-1] if chosen else None)
    ui.show_figure(fig, "stat_map", f"{facts.name}-{stat}-map", on_select=lambda: add_head("stat_map"))
    st.caption(_("Click a cell to add that head to the comparison (it replaces the last one when there are four)."))
with right:
    table = stats.round(3)   # its English columns name the row's head; the one shown speaks the session's language
    named = table.rename(columns={c: _(name) for c, name in COLUMNS.items()} | shown)
    st.dataframe(numbers.table(named), key="stats", hide_index=True, height=420, selection_mode="single-row",
                 on_select=lambda: add_head("stats", table))
    st.caption(_("Sort by clicking a column header; select a row to add that head to the comparison."))
    ui.download_csv(named, f"{facts.name}-head-stats.csv", "stats_csv", _("Statistics as CSV"))
    if chosen:
        l, h = chosen[-1]
        ui.page_link(GEOMETRY.file, _("These heads over 200 sentences (head geometry)"),
                     icon=":material/scatter_plot:", query_params={"model": model, "layer": l, "head": h,
                                                                   "geo_heads": ",".join(map(heads.head_id, chosen))})

value_roles.similar_heads_section(model, chosen, on_select=lambda: add_head("similar"))

st.subheader(_("What the common patterns mean"))
st.caption(_("Each number is a mean over the text's query tokens. Thresholds are rules of thumb, not definitions."))
for pattern in heads.patterns(stats, len(result.tokens), special_sinks=bool(result.special.any())):
    found = numbers.joined(f"L{l}H{h} ({numbers.number(v, 2)})" for (l, h), v in zip(pattern.heads, pattern.values))
    st.markdown(_("**{name}** — {meaning}  \nHere: {heads}").format(name=pattern.title, meaning=pattern.meaning,
                                                                   heads=found))
