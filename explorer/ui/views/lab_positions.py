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
from explorer.serving.regions import remembered
from explorer.ui.drawn_once import drawn_once
from explorer.ui.labs import english_only
from explorer.ui.live.teacher_controls import teacher_driven
from explorer.ui.pickers import option_picker
from explorer.ui.predict_first import ask_first
from explorer.ui.widgets import attention_or_stop, show_figure, show_link_notes
from explorer.words import numbers
from explorer.words.i18n import _, pgettext


def sinusoidal_lesson() -> None:
    """The 2017 paper's sinusoids: the table, a few dimensions, one position's similarity to all, and the one
    matrix that moves every position k steps along."""
    st.latex(r"\begin{gathered} PE_{pos,\,2i} = \sin(pos\,\omega_i) \\ PE_{pos,\,2i+1} = \cos(pos\,\omega_i) \\ "
             r"\omega_i = 10000^{-2i/d_{model}} \end{gathered}")   # one per line: one line is wider than a phone
    with teacher_driven((_("positions"), "pos_n"), ("d_model", "pos_d"), (_("anchor"), "pos_at"), text=None):
        c1, c2, c3 = st.columns(3)   # deep-linked: a class follows the teacher's
        with c1:
            n_pos = option_picker(_("Positions"), "pos_n", list(range(16, 257)), 100)
        with c2:
            d_model = option_picker("d_model", "pos_d", [16, 32, 64, 128, 256, 512], 128)
        with c3:
            anchor = option_picker(_("Compare with position"), "pos_at", list(range(n_pos)), n_pos // 2)
    show_link_notes()

    def enc():
        return P.sinusoidal_encoding(n_pos, d_model)

    show_figure(lambda: matrix_heatmap(enc(), title=_("Each row is one position's vector"),   # short: fits a phone
                                       x_title=_("dimension"), y_title=_("position"), zmid=0, height=460), "enc",
                "sinusoidal", view=(n_pos, d_model))
    dims = st.multiselect(_("Dimensions to plot"), list(range(d_model)), default=[0, 1, d_model // 4, d_model // 2])
    show_figure(lambda: dimension_curves(enc(), dims, _("Early pairs wave fast (tell neighbours apart), late pairs "
                                                        "slowly")), "dims", "dimensions",
                view=(n_pos, d_model, tuple(dims)))
    show_figure(lambda: line(np.arange(n_pos) - anchor, {_("cosine"): P.similarity_by_offset(enc(), anchor)}, vline=0,
                             title=_("Cosine similarity of position {anchor} with every position").format(
                                 anchor=anchor),
                             x_title=_("offset (position − anchor)"), y_title=_("cosine similarity")), "cos", "cosine",
                view=(n_pos, d_model, anchor))
    offset = st.slider(_("Offset k for the linear-map check"), 1, n_pos - 1, 5)
    check = P.check_offset_is_linear(n_pos, d_model, offset)
    st.latex(r"\begin{gathered}\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix} = R_k"
             r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix},\\ R_k = \begin{pmatrix}\cos k\omega & "
             r"\sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}\end{gathered}")   # two lines fit a phone
    st.markdown(_("One {d} × {d} matrix M (a rotation for each sin/cos pair, nothing depending on p) moves **every** "
                  "position {k} steps along: over all {n} positions, max |M·PE(p) − PE(p+{k})| = **{error}**.")
                .format(d=d_model, k=offset, n=n_pos - offset, error=numbers.scientific(check.max_error, 1)))
    show_figure(lambda: matrix_heatmap(check.matrix[:8, :8], zmid=0, zmin=-1, zmax=1,
                                       title=_("The top-left corner of M: 2 × 2 rotation blocks")), "rot",
                "rotation-blocks", view=(n_pos, d_model, offset))


def real_heads() -> None:
    """How real heads' weights fall off with distance, on a model and text of the student's choosing."""
    name = st.radio(_("Model"), [EMBEDDED_ENCODER, EMBEDDED_DECODER], horizontal=True)
    text = st.text_input(_("Text"), "The animal didn't cross the street because it was too tired.", max_chars=300,
                         help=english_only(name))
    res = attention_or_stop(name, text)
    dist, means = P.attention_by_distance(res.weights)  # means: [layer, head, distance]
    keep = dist >= 0 if res.facts.causal else slice(None)
    c1, c2 = st.columns(2)
    layer = c1.slider(_("Layer"), 0, res.weights.shape[0] - 1, 0)
    head = c2.slider(_("Head"), 0, res.weights.shape[1] - 1, 0)
    view = (name, text, layer, head)
    show_figure(lambda: distance_bars(dist[keep], means[layer, head][keep], title=_(
        "Layer {layer}, head {head}: mean weight by distance").format(layer=layer, head=head)), "dist", "distance",
        view=view)
    show_figure(lambda: matrix_heatmap(means.mean(axis=1)[:, keep], col_labels=[str(d) for d in dist[keep]],
                                       title=_("Every layer, averaged over its heads"), x_title=_("query − key"),
                                       y_title=_("layer"), colorscale="Blues", zmin=0), "layers", "distance-layers",
                view=view[:2])
    st.caption(_("Distance 1 = the token just before; 0 = itself. Heads that peak at a fixed distance are "
                 "positional heads. The extreme distances average over one or two (query, key) pairs only: a tall "
                 "bar there is usually attention parked on the first or last token."))


def learned_lesson(loaded: LoadedModel) -> None:
    """The learned position table of ``loaded`` (an encoder with one), beside sinusoids of the same width."""
    table = P.learned_position_table(loaded)
    n_show = st.slider(_("First positions to compare"), 16, table.shape[0], 128)
    name = loaded.spec.name

    def sims():
        return P.cosine_similarity_matrix(table[:n_show])

    st.markdown(_("{model} simply learned one vector per position: a {rows} × {cols} table, added to each token's "
                  "embedding. Nothing forced a pattern on it; here is the one training found, next to the sinusoidal "
                  "one of the same width.").format(model=name, rows=table.shape[0], cols=table.shape[1]))
    show_figure(lambda: side_by_side({_("learned (real encoder)"): (sims(), None), _("sinusoidal"): (
        P.cosine_similarity_matrix(P.sinusoidal_encoding(n_show, table.shape[1])), None)}, colorscale="RdBu",
        zmin=-1, zmax=1, title=_("Cosine similarity between positions"), x_title=_("position"),
        y_title=_("position")),
        "learned", "learned-positions", view=(name, n_show))

    def neighbours():
        offs, mean_sim = P.mean_by_offset(sims())
        st.markdown(_("Mean similarity of neighbours (1 apart): **{near}**; 10 apart: **{far}**. It cannot "
                      "say anything past position {last}: there is no row for it.").format(
            near=numbers.number(mean_sim[offs == 1][0], 2),
            far=numbers.number(mean_sim[offs == min(10, n_show - 1)][0], 2), last=table.shape[0] - 1))
    drawn_once(("learned-neighbours", name, n_show), neighbours)


def rope_lesson(loaded: LoadedModel) -> None:
    """RoPE as ``loaded`` (a rotary decoder) uses it."""
    rope = P.rope_settings(loaded)
    st.markdown(_("{model} adds nothing to the embeddings. In every layer it rotates each query and key, pair by "
                  "pair, by an angle proportional to its position: θ = {theta}, head size {d_head} ({pairs} "
                  "pairs), {n_heads} query heads sharing {n_kv} key/value heads.").format(
        model=loaded.spec.name, theta=numbers.number(rope["theta"], 0,
                                                     group=True), d_head=rope["d_head"], pairs=rope["d_head"] // 2,
        n_heads=rope["n_heads"], n_kv=rope["n_kv_heads"]))
    st.latex(r"q_m = R(m\,\omega_i)\,q,\quad k_n = R(n\,\omega_i)\,k,\qquad \omega_i = \theta^{-2i/d_{head}}")
    c1, c2, c3 = st.columns(3)
    pair = c1.slider(_("Pair i"), 0, rope["d_head"] // 2 - 1, 0)
    m = c2.slider(_("Query position m"), 0, 64, 5)
    n = c3.slider(_("Key position n"), 0, 64, 2)
    w = P.rope_frequencies(rope["d_head"], rope["theta"])[pair]
    q2, k2 = np.array([1.0, 0.2]), np.array([0.6, 0.7])
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=rope["d_head"]), rng.normal(size=rope["d_head"])
    rel = _relative_check(q, k, rope["theta"])
    shift = st.slider(_("Then move both by"), 1, 1000, 100)
    moved = P.rope_score(q, k, m + shift, n + shift, rope["theta"])
    before = float(rel.scores[m, n])
    options = (_("larger"), _("smaller"), pgettext("a score", "the same"))   # "the same" count elsewhere
    if not ask_first(Question(
        prompt=_("With q at {m} and k at {n}, the score is {before}. Move both {shift} positions later (q at "
                 "{m_later}, k at {n_later}). Which of these three does the score become: larger, smaller or the "
                 "same?").format(m=m, n=n, before=numbers.number(before, 4), shift=shift, m_later=m + shift,
                                 n_later=n + shift),
        options=options, correct=compare_option(moved, before, *options, tol=1e-8),
        reveal=_("Computed: **{moved}** (difference {gap}). Both vectors turned by the same angles, so the "
                 "angle between them, and the dot product, did not change: only m − n counts.").format(
            moved=numbers.number(moved, 4), gap=numbers.scientific(abs(moved - before), 1))),
            "rope_shift", _("The score's formula and the rotations drawn")):
        return
    st.latex(r"q_m\cdot k_n = q\cdot R(-m\,\omega_i)\,R(n\,\omega_i)\,k = q\cdot R\big((n-m)\,\omega_i\big)\,k")
    show_figure(lambda: rope_pair({"q": q2, _("q at {m}").format(m=m): P.rotate_pair(q2, m * w),
                                   _("k at {n}").format(n=n): P.rotate_pair(k2, n * w)},
                                  title=_("Pair {pair}: ω = {w} rad per position; the angle between q and k "
                                          "changes only with m − n").format(pair=pair, w=numbers.number(w, digits=3))),
                "rope_pair", "rope-pair",
                view=(loaded.spec.name, pair, m, n))
    show_figure(lambda: matrix_heatmap(rel.scores, title=_("q_m · k_n for one random q, k with the real θ: constant "
                                                           "along every diagonal (largest spread {spread})").format(
        spread=numbers.scientific(rel.max_spread,
                                  1)), x_title=_("key position n"), y_title=_("query position m"), zmid=0, height=460),
                "rope_rel", "rope-relative", view=(loaded.spec.name,))


@remembered(2**20)
def _relative_check(q: np.ndarray, k: np.ndarray, theta: float):
    """``P.rope_relative_check`` over 65 positions, once per (q, k, θ) for the whole server."""
    return P.rope_relative_check(q, k, 65, theta)
