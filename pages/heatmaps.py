"""Attention heatmaps: one real model and text; one head, a layer's heads, every head, one query's bars."""
import streamlit as st

from explorer.attention import matrices, overview
from explorer.plots import attention, head_grids
from explorer.ui import pickers
from explorer.ui import widgets as ui
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views import atlas, value_roles
from explorer.ui.views import score_breakdown as breakdown
from explorer.ui.views.bertviz import show_bertviz
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("Attention heatmaps"))
st.caption(_("Each row is a query token; it shows how that token spreads its attention, summing to 1, over the keys."))
controls = teacher_driven("layer", "head")   # folded away while a student follows
with controls:
    top = st.columns([1, 1])
with top[0]:
    model = pickers.model_picker()
with top[1]:
    text = ui.text_box()
raw = ui.attention_or_stop(model, text)
with controls:
    result = value_roles.weighting(model, text, raw)
    part = pickers.part_picker(matrices.part_names()) if result.parts else "self"
    pick = st.columns([1, 1, 2])
    with st.container(horizontal=True, gap="medium"):   # each box as wide as its label, wrapping when narrow
        flags = {key: st.checkbox(_(label), key=f"opt_{key}", help=_(tip), width="content")
                 for key, (label, tip) in matrices.OPTIONS.items()}
res = matrices.part_of(result, part)
with pick[0]:
    layer = pickers.index_picker(_("Layer"), "layer", res.facts.n_layers)
with pick[1]:
    head = pickers.index_picker(_("Head"), "head", res.facts.n_heads)
options = matrices.Options(flags["hide"], flags["merge"], flags["mean"], flags["rollout"])
view = matrices.matrix_view(result, part, layer, head, options)
with pick[2]:
    row = pickers.token_picker(_("Query token (for the bars)"), "query", view.query_positions, view.query_labels,
                          matrices.default_query(result, part), tokens=tuple(res.tokens))
    column = breakdown.key_picker(view, row, tuple(res.tokens))
ui.show_link_notes(view.notes)

model_name = f"{model.split('/')[-1]}-{part}"
name = (layer_name := f"{model_name}-L{layer}") + (f"H{head}" if view.real_head else "")   # file names
left, right = st.columns([3, 2])
with left:
    ui.show_figure(attention.heatmap(view.matrix, view.query_labels, view.key_labels, masked=view.masked,
                                 title=view.title, zmax=1.0 if flags["shared"] else None,
                                 value_name=_(view.value_name), clickable=breakdown.is_open(),
                                 cell=(row, column) if breakdown.is_open() and view.real_head else None), "heatmap",
                   f"attention-{name}", on_select=breakdown.open_cell(view))
    if view.real_head:   # its fidelity, and the corpus's verdict on a name the app gives it
        atlas.fidelity_and_names(model, res, (layer, head))
    ui.download_lazy(_("This matrix as CSV"), lambda: matrices.csv_frame(view), f"attention-{name}.csv", "csv")
with right:
    bars = (view.matrix[row], tuple(view.key_labels), view.query_labels[row], tuple(view.key_positions),
            _(view.value_name))   # what the bars are made of: the key is their data itself
    ui.show_figure(lambda: attention.query_bars(*bars[:3], key_positions=[k[0] for k in bars[3]], value_name=bars[4]),
                   "bars", f"query-{name}-{view.query_positions[row][0]}", view=bars)

breakdown.sections(model, raw, part, view, (layer, head, row, column), name)

st.subheader(_("Layer {layer}: every head").format(layer=layer))
grid = matrices.layer_view(result, part, layer, options)
# the head is framed beside the grid and the overview, not in them: a new head redraws neither in the browser
ui.show_figure(head_grids.head_grid(grid.matrix, grid.query_labels, grid.key_labels, masked=grid.masked,
                               shared_scale=flags["shared"], layer=layer, frames=True), "grid", f"heads-{layer_name}",
               on_select=ui.open_head("grid"), frame=head)

st.subheader(_("Every layer × head"))
st.caption(overview.caption(options.hide_special, flags["shared"]))
tiles, masked = overview.tiles(result, part, options.hide_special)
ui.show_figure(head_grids.overview(tiles, masked, shared_scale=flags["shared"], stats=overview.stats(result, part),
                                   stats_hover=overview.hover(), frame_row=layer),
               "overview", f"overview-{model_name}", on_select=ui.open_head("overview"), frame=head)

if st.toggle(_("Show bertviz's head view and model view (built only while this is on)"), key="bertviz"):
    show_bertviz(result, part, layer)
