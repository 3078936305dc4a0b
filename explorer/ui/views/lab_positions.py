"""The rotary-position part of the positional-encodings lab: the real decoder's settings, a pair turning, the
relative-position check and a predict-then-reveal question."""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.labs import positions as P
from explorer.labs.quiz import Question, compare_option
from explorer.model.loading import LoadedModel
from explorer.plots.concepts import matrix_heatmap
from explorer.plots.positions import rope_pair
from explorer.ui.quiz import predict_then_reveal
from explorer.ui.widgets import show_figure


def rope_lesson(loaded: LoadedModel) -> None:
    """RoPE as ``loaded`` (a rotary decoder) uses it."""
    rope = P.rope_settings(loaded)
    st.markdown(f"{loaded.spec.name} adds nothing to the embeddings. In every layer it rotates each query and key, "
                f"pair by pair, by an angle proportional to its position: θ = {rope['theta']:,.0f}, head size "
                f"{rope['d_head']} ({rope['d_head'] // 2} pairs), {rope['n_heads']} query heads sharing "
                f"{rope['n_kv_heads']} key/value heads.")
    st.latex(r"q_m = R(m\,\omega_i)\,q,\quad k_n = R(n\,\omega_i)\,k,\qquad \omega_i = \theta^{-2i/d_{head}}")
    st.latex(r"q_m\cdot k_n = q\cdot R(-m\,\omega_i)\,R(n\,\omega_i)\,k = q\cdot R\big((n-m)\,\omega_i\big)\,k")
    c1, c2, c3 = st.columns(3)
    pair = c1.slider("Pair i", 0, rope["d_head"] // 2 - 1, 0)
    m = c2.slider("Query position m", 0, 64, 5)
    n = c3.slider("Key position n", 0, 64, 2)
    w = P.rope_frequencies(rope["d_head"], rope["theta"])[pair]
    q2, k2 = np.array([1.0, 0.2]), np.array([0.6, 0.7])
    show_figure(rope_pair({"q": q2, f"q at {m}": P.rotate_pair(q2, m * w), f"k at {n}": P.rotate_pair(k2, n * w)},
                              title=f"Pair {pair}: ω = {w:.3g} rad per position; the angle between q and k "
                                    f"changes only with m − n"), "rope_pair", "rope-pair")
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=rope["d_head"]), rng.normal(size=rope["d_head"])
    rel = P.rope_relative_check(q, k, 65, rope["theta"])
    show_figure(matrix_heatmap(rel.scores, title=f"q_m · k_n for one random q, k with the real θ: constant along "
                                   f"every diagonal (largest spread {rel.max_spread:.1e})", x_title="key position n",
                                   y_title="query position m", zmid=0, height=460), "rope_rel", "rope-relative")
    shift = st.slider("Then move both by", 1, 1000, 100)
    moved = P.rope_score(q, k, m + shift, n + shift, rope["theta"])
    before = float(rel.scores[m, n])
    predict_then_reveal(Question(
        prompt=f"With q at {m} and k at {n}, the score is {before:.4f}. Move both {shift} positions later "
               f"(q at {m + shift}, k at {n + shift}). The score becomes…",
        options=("larger", "smaller", "the same"), correct=compare_option(moved, before, "larger", "smaller",
                                                                         "the same", tol=1e-8),
        reveal=f"Computed: **{moved:.4f}** (difference {abs(moved - before):.1e}). Both vectors turned by the same "
               "angles, so the angle between them, and the dot product, did not change: only m − n counts."),
        key="rope_shift")
