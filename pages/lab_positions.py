"""Lab: positional encodings — sinusoidal, learned (the embedded encoder), rotary (the embedded decoder), real heads."""
import numpy as np
import streamlit as st

from explorer.labs import positions as P
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.plots.concepts import matrix_heatmap
from explorer.plots.positions import dimension_curves, distance_bars, line, side_by_side
from explorer.ui.cached import get_model
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.views.lab_positions import rope_lesson
from explorer.ui.widgets import attention_or_stop, option_picker, show_figure, show_link_notes, use_app_navigation

use_app_navigation()

st.title("Where is each token? Positional encodings")
st.markdown("Attention compares every token with every other and never asks where they stand: shuffle the "
            "words and each output is just shuffled along. Order has to be put in. Three ways, and what real "
            "heads then do with it.")
sin_tab, learned_tab, rope_tab, real_tab = st.tabs(["Sinusoidal", "Learned table", "Rotary (RoPE)", "Real heads"])

with sin_tab:
    st.latex(r"\begin{gathered} PE_{pos,\,2i} = \sin(pos\,\omega_i) \\ PE_{pos,\,2i+1} = \cos(pos\,\omega_i) \\ "
             r"\omega_i = 10000^{-2i/d_{model}} \end{gathered}")   # one per line: one line is wider than a phone
    with teacher_driven(("positions", "pos_n"), ("d_model", "pos_d"), ("anchor", "pos_at"), text=None):
        c1, c2, c3 = st.columns(3)   # deep-linked: a class follows the teacher's
        with c1:
            n_pos = option_picker("Positions", "pos_n", list(range(16, 257)), 100)
        with c2:
            d_model = option_picker("d_model", "pos_d", [16, 32, 64, 128, 256, 512], 128)
        with c3:
            anchor = option_picker("Compare with position", "pos_at", list(range(n_pos)), n_pos // 2)
    show_link_notes()
    enc = P.sinusoidal_encoding(n_pos, d_model)
    show_figure(matrix_heatmap(enc, title="Each row is one position's vector",   # short: fits a phone
                               x_title="dimension", y_title="position", zmid=0, height=460), "enc", "sinusoidal")
    dims = st.multiselect("Dimensions to plot", list(range(d_model)), default=[0, 1, d_model // 4, d_model // 2])
    show_figure(dimension_curves(enc, dims, "Early pairs wave fast (tell neighbours apart), late pairs slowly"), "dims",
                "dimensions")
    show_figure(line(np.arange(n_pos) - anchor, {"cosine": P.similarity_by_offset(enc, anchor)}, vline=0,
                         title=f"Cosine similarity of position {anchor} with every position",
                         x_title="offset (position − anchor)", y_title="cosine similarity"), "cos", "cosine")
    offset = st.slider("Offset k for the linear-map check", 1, n_pos - 1, 5)
    check = P.check_offset_is_linear(n_pos, d_model, offset)
    st.latex(r"\begin{gathered}\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix} = R_k"
             r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix},\\ R_k = \begin{pmatrix}\cos k\omega & "
             r"\sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}\end{gathered}")   # two lines fit a phone
    st.markdown(f"One {d_model} × {d_model} matrix M (a rotation for each sin/cos pair, nothing depending on p) "
                f"moves **every** position {offset} steps along: over all {n_pos - offset} positions, "
                f"max |M·PE(p) − PE(p+{offset})| = **{check.max_error:.1e}**.")
    show_figure(matrix_heatmap(check.matrix[:8, :8], title="The top-left corner of M: 2 × 2 rotation blocks",
                                   zmid=0, zmin=-1, zmax=1), "rot", "rotation-blocks")

with learned_tab:
    table = P.learned_position_table(get_model(EMBEDDED_ENCODER))
    n_show = st.slider("First positions to compare", 16, table.shape[0], 128)
    sims = P.cosine_similarity_matrix(table[:n_show])
    st.markdown(f"{EMBEDDED_ENCODER} simply learned one vector per position: a {table.shape[0]} × {table.shape[1]} "
                "table, added to each token's embedding. Nothing forced a pattern on it; here is the one training "
                "found, next to the sinusoidal one of the same width.")
    show_figure(side_by_side({"learned (real encoder)": (sims, None), "sinusoidal": (
        P.cosine_similarity_matrix(P.sinusoidal_encoding(n_show, table.shape[1])), None)}, colorscale="RdBu",
        zmin=-1, zmax=1, title="Cosine similarity between positions", x_title="position", y_title="position"),
        "learned", "learned-positions")
    offs, mean_sim = P.mean_by_offset(sims)
    st.markdown(f"Mean similarity of neighbours (1 apart): **{mean_sim[offs == 1][0]:.2f}**; 10 apart: "
                f"**{mean_sim[offs == min(10, n_show - 1)][0]:.2f}**. It cannot say anything past position "
                f"{table.shape[0] - 1}: there is no row for it.")

with rope_tab:
    rope_lesson(get_model(EMBEDDED_DECODER))

with real_tab:
    name = st.radio("Model", [EMBEDDED_ENCODER, EMBEDDED_DECODER], horizontal=True)
    text = st.text_input("Text", "The animal didn't cross the street because it was too tired.", max_chars=300)
    res = attention_or_stop(name, text)
    dist, means = P.attention_by_distance(res.weights)  # means: [layer, head, distance]
    keep = dist >= 0 if res.facts.causal else slice(None)
    c1, c2 = st.columns(2)
    layer = c1.slider("Layer", 0, res.weights.shape[0] - 1, 0)
    head = c2.slider("Head", 0, res.weights.shape[1] - 1, 0)
    show_figure(distance_bars(dist[keep], means[layer, head][keep],
                                  title=f"Layer {layer}, head {head}: mean weight by distance"), "dist", "distance")
    show_figure(matrix_heatmap(means.mean(axis=1)[:, keep], col_labels=[str(d) for d in dist[keep]],
                                   title="Every layer, averaged over its heads", x_title="query − key",
                                   y_title="layer", colorscale="Blues", zmin=0), "layers", "distance-layers")
    st.caption("Distance 1 = the token just before; 0 = itself. Heads that peak at a fixed distance are "
               "positional heads. The extreme distances average over one or two (query, key) pairs only: a tall bar "
               "there is usually attention parked on the first or last token.")
