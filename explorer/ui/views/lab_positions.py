"""The real models' parts of the positional-encodings lab: the encoder's learned table against the sinusoidal one;
RoPE as the real decoder uses it (its settings, a pair turning, the relative-position check and a
predict-then-reveal question). What a view draws is drawn once per server and replayed (``drawn_once``)."""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.labs import positions as P
from explorer.labs.quiz import Question, compare_option
from explorer.model.loading import LoadedModel
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.plots.concepts import matrix_heatmap
from explorer.plots.positions import dimension_curves, distance_bars, line, rope_pair, side_by_side
from explorer.serving.cache import remembered
from explorer.ui.drawn_once import drawn_once
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.pickers import option_picker
from explorer.ui.quiz import ask_first
from explorer.ui.widgets import attention_or_stop, show_figure, show_link_notes


def sinusoidal_lesson() -> None:
    """The 2017 paper's sinusoids: the table, a few dimensions, one position's similarity to all, and the one
    matrix that moves every position k steps along."""
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

    def enc():
        return P.sinusoidal_encoding(n_pos, d_model)

    show_figure(lambda: matrix_heatmap(enc(), title="Each row is one position's vector",   # short: fits a phone
                                       x_title="dimension", y_title="position", zmid=0, height=460), "enc",
                "sinusoidal", view=(n_pos, d_model))
    dims = st.multiselect("Dimensions to plot", list(range(d_model)), default=[0, 1, d_model // 4, d_model // 2])
    show_figure(lambda: dimension_curves(enc(), dims, "Early pairs wave fast (tell neighbours apart), late pairs "
                                         "slowly"), "dims", "dimensions", view=(n_pos, d_model, tuple(dims)))
    show_figure(lambda: line(np.arange(n_pos) - anchor, {"cosine": P.similarity_by_offset(enc(), anchor)}, vline=0,
                             title=f"Cosine similarity of position {anchor} with every position",
                             x_title="offset (position − anchor)", y_title="cosine similarity"), "cos", "cosine",
                view=(n_pos, d_model, anchor))
    offset = st.slider("Offset k for the linear-map check", 1, n_pos - 1, 5)
    check = P.check_offset_is_linear(n_pos, d_model, offset)
    st.latex(r"\begin{gathered}\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix} = R_k"
             r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix},\\ R_k = \begin{pmatrix}\cos k\omega & "
             r"\sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}\end{gathered}")   # two lines fit a phone
    st.markdown(f"One {d_model} × {d_model} matrix M (a rotation for each sin/cos pair, nothing depending on p) "
                f"moves **every** position {offset} steps along: over all {n_pos - offset} positions, "
                f"max |M·PE(p) − PE(p+{offset})| = **{check.max_error:.1e}**.")
    show_figure(lambda: matrix_heatmap(check.matrix[:8, :8], zmid=0, zmin=-1, zmax=1,
                                       title="The top-left corner of M: 2 × 2 rotation blocks"), "rot",
                "rotation-blocks", view=(n_pos, d_model, offset))


def real_heads() -> None:
    """How real heads' weights fall off with distance, on a model and text of the student's choosing."""
    name = st.radio("Model", [EMBEDDED_ENCODER, EMBEDDED_DECODER], horizontal=True)
    text = st.text_input("Text", "The animal didn't cross the street because it was too tired.", max_chars=300)
    res = attention_or_stop(name, text)
    dist, means = P.attention_by_distance(res.weights)  # means: [layer, head, distance]
    keep = dist >= 0 if res.facts.causal else slice(None)
    c1, c2 = st.columns(2)
    layer = c1.slider("Layer", 0, res.weights.shape[0] - 1, 0)
    head = c2.slider("Head", 0, res.weights.shape[1] - 1, 0)
    view = (name, text, layer, head)
    show_figure(lambda: distance_bars(dist[keep], means[layer, head][keep], title=f"Layer {layer}, head {head}: "
                                      "mean weight by distance"), "dist", "distance", view=view)
    show_figure(lambda: matrix_heatmap(means.mean(axis=1)[:, keep], col_labels=[str(d) for d in dist[keep]],
                                       title="Every layer, averaged over its heads", x_title="query − key",
                                       y_title="layer", colorscale="Blues", zmin=0), "layers", "distance-layers",
                view=view[:2])
    st.caption("Distance 1 = the token just before; 0 = itself. Heads that peak at a fixed distance are "
               "positional heads. The extreme distances average over one or two (query, key) pairs only: a tall bar "
               "there is usually attention parked on the first or last token.")


def learned_lesson(loaded: LoadedModel) -> None:
    """The learned position table of ``loaded`` (an encoder with one), beside sinusoids of the same width."""
    table = P.learned_position_table(loaded)
    n_show = st.slider("First positions to compare", 16, table.shape[0], 128)
    name = loaded.spec.name

    def sims():
        return P.cosine_similarity_matrix(table[:n_show])

    st.markdown(f"{name} simply learned one vector per position: a {table.shape[0]} × {table.shape[1]} table, "
                "added to each token's embedding. Nothing forced a pattern on it; here is the one training found, "
                "next to the sinusoidal one of the same width.")
    show_figure(lambda: side_by_side({"learned (real encoder)": (sims(), None), "sinusoidal": (
        P.cosine_similarity_matrix(P.sinusoidal_encoding(n_show, table.shape[1])), None)}, colorscale="RdBu",
        zmin=-1, zmax=1, title="Cosine similarity between positions", x_title="position", y_title="position"),
        "learned", "learned-positions", view=(name, n_show))

    def neighbours():
        offs, mean_sim = P.mean_by_offset(sims())
        st.markdown(f"Mean similarity of neighbours (1 apart): **{mean_sim[offs == 1][0]:.2f}**; 10 apart: "
                    f"**{mean_sim[offs == min(10, n_show - 1)][0]:.2f}**. It cannot say anything past position "
                    f"{table.shape[0] - 1}: there is no row for it.")
    drawn_once(("learned-neighbours", name, n_show), neighbours)


def rope_lesson(loaded: LoadedModel) -> None:
    """RoPE as ``loaded`` (a rotary decoder) uses it."""
    rope = P.rope_settings(loaded)
    st.markdown(f"{loaded.spec.name} adds nothing to the embeddings. In every layer it rotates each query and key, "
                f"pair by pair, by an angle proportional to its position: θ = {rope['theta']:,.0f}, head size "
                f"{rope['d_head']} ({rope['d_head'] // 2} pairs), {rope['n_heads']} query heads sharing "
                f"{rope['n_kv_heads']} key/value heads.")
    st.latex(r"q_m = R(m\,\omega_i)\,q,\quad k_n = R(n\,\omega_i)\,k,\qquad \omega_i = \theta^{-2i/d_{head}}")
    c1, c2, c3 = st.columns(3)
    pair = c1.slider("Pair i", 0, rope["d_head"] // 2 - 1, 0)
    m = c2.slider("Query position m", 0, 64, 5)
    n = c3.slider("Key position n", 0, 64, 2)
    w = P.rope_frequencies(rope["d_head"], rope["theta"])[pair]
    q2, k2 = np.array([1.0, 0.2]), np.array([0.6, 0.7])
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=rope["d_head"]), rng.normal(size=rope["d_head"])
    rel = _relative_check(q, k, rope["theta"])
    shift = st.slider("Then move both by", 1, 1000, 100)
    moved = P.rope_score(q, k, m + shift, n + shift, rope["theta"])
    before = float(rel.scores[m, n])
    if not ask_first(Question(
        prompt=f"With q at {m} and k at {n}, the score is {before:.4f}. Move both {shift} positions later "
               f"(q at {m + shift}, k at {n + shift}). Which of these three does the score become: larger, smaller "
               "or the same?",
        options=("larger", "smaller", "the same"), correct=compare_option(moved, before, "larger", "smaller",
                                                                         "the same", tol=1e-8),
        reveal=f"Computed: **{moved:.4f}** (difference {abs(moved - before):.1e}). Both vectors turned by the same "
               "angles, so the angle between them, and the dot product, did not change: only m − n counts."),
            "rope_shift", "The score's formula and the rotations drawn"):
        return
    st.latex(r"q_m\cdot k_n = q\cdot R(-m\,\omega_i)\,R(n\,\omega_i)\,k = q\cdot R\big((n-m)\,\omega_i\big)\,k")
    show_figure(lambda: rope_pair({"q": q2, f"q at {m}": P.rotate_pair(q2, m * w),
                                   f"k at {n}": P.rotate_pair(k2, n * w)},
                                  title=f"Pair {pair}: ω = {w:.3g} rad per position; the angle between q and k "
                                        f"changes only with m − n"), "rope_pair", "rope-pair",
                view=(loaded.spec.name, pair, m, n))
    show_figure(lambda: matrix_heatmap(rel.scores, title=f"q_m · k_n for one random q, k with the real θ: constant "
                                       f"along every diagonal (largest spread {rel.max_spread:.1e})",
                                       x_title="key position n", y_title="query position m", zmid=0, height=460),
                "rope_rel", "rope-relative", view=(loaded.spec.name,))


@remembered(2**20)
def _relative_check(q: np.ndarray, k: np.ndarray, theta: float):
    """``P.rope_relative_check`` over 65 positions, once per (q, k, θ) for the whole server."""
    return P.rope_relative_check(q, k, 65, theta)
