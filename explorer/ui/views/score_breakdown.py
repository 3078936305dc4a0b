"""The heatmap page's "one score taken apart" and "several queries at once" sections (every other page that draws
one head's heatmap links here: ``breakdown_link``).

A cell of the heatmap is chosen by a click (``open_cell``) or with the two select boxes (query and key, both
deep-linked: ``query`` and ``key`` in the URL); the breakdown reads only what the cached result holds.
"Where the score comes from" follows the model's family (``explorer.model.families``, ``positions``): the layer-0
split into token and position parts for learned positions, the score at every distance for rotary models, ALiBi's
slope × key position with its check, a relative bias as its own part, or the family's one sentence why not.
"""
from __future__ import annotations

import streamlit as st

from explorer.attention import breakdown as bd
from explorer.attention import matrices
from explorer.attention import score_origin as so
from explorer.attention.result import AttentionResult
from explorer.plots import breakdown as plots
from explorer.plots.attention import clicked_cell
from explorer.sitemap import table
from explorer.ui import cached, params, pickers
from explorer.ui import widgets as ui
from explorer.ui.predict_first import ask_first
from explorer.ui.views.breakdown_link import OPEN, strongest_key
from explorer.words import numbers
from explorer.words.i18n import _

CHART = "heatmap"   # the heatmap's chart key on the page
TOLERANCE = 1e-5    # parts and softmax against the model: to 1e-5 of the score's size (float32 rounding: ~1e-7)


def open_cell(view: matrices.MatrixView):
    """An ``on_select`` callback for the heatmap (clickable while the breakdown is open): the clicked cell becomes
    the query and key taken apart; "ignore" while it is closed (the heatmap is then drawn as it always was)."""
    if not st.session_state.get(OPEN):
        return "ignore"

    def callback():
        cell = clicked_cell(st.session_state.get(CHART))
        if cell is not None and cell[0] < len(view.query_positions) and cell[1] < len(view.key_positions):
            st.session_state["query"] = view.query_positions[cell[0]][0]
            st.session_state["key"] = view.key_positions[cell[1]][0]
            st.session_state[OPEN] = True
    return callback


def is_open() -> bool:
    """Whether the breakdown is open (its toggle, deep-linked as ``breakdown=1``). Only then does the heatmap get
    its click points: their hover text costs ~9.5 kB for 16 tokens, which a page that never takes a score apart
    should not send."""
    st.session_state[OPEN] = str(ui.from_url(OPEN, "0")) in {"1", "True", "true"}
    return st.session_state[OPEN]


def sections(model: str, raw: AttentionResult, part: str, view: matrices.MatrixView,
             where: tuple[int, int, int, int], name: str) -> None:
    """Under the heatmap: the breakdown of cell (row, column) of (layer, head) = ``where`` when its toggle is on
    (then a click on a cell chooses it), then several queries at once."""
    is_open()
    shown = st.toggle(_("Take a score apart: click a heatmap cell, or pick the key token above"), key=OPEN,
                      help=_("The query and key vectors, their products, the scale and the softmax behind one "
                             "weight."))
    params.put(OPEN, "1" if shown else "0")
    if shown:
        section(model, raw, part, view, *where)
    several_queries(view, name)


def key_picker(view: matrices.MatrixView, row: int, tokens: tuple[str, ...]) -> int:
    """The key column (deep-linked as a token position, ``key``); by default the one this row weights most."""
    strongest = strongest_key(view.matrix[row])
    default = view.key_positions[strongest][0]
    if not is_open():   # closed: no box and no link parameter (a follower's address stays the teacher's)
        return strongest
    return pickers.token_picker(_("Key token (for the breakdown)"), "key", view.key_positions, view.key_labels, default,
                           tokens=tokens)


def score_line(b: bd.ScoreBreakdown) -> str:
    """The score written out: scale × Σ qᵢ·kᵢ, Gemma 2's soft cap, the position bias and what Falcon's mask adds."""
    core = f"{numbers.number(b.scale, 4)} × {numbers.signed(b.dot, 4)}"
    formula = _("scale") + " × Σ qᵢ·kᵢ"
    if b.softcap:
        cap = numbers.number(b.softcap)
        formula, core = f"{cap} × tanh({formula} / {cap})", f"{cap} × tanh({core} / {cap})"
    if b.bias:
        formula = formula + " + " + _("bias")
        core = core + " " + _("{bias} (position bias)").format(bias=numbers.signed(b.bias, 4))
    if b.mask_bias:
        formula = formula + " + " + _("mask")
        core = core + " " + _("{bias} (added by the model's mask)").format(bias=numbers.signed(b.mask_bias, 4))
    return (_("score = {formula} = {core} = **{score}**").format(formula=formula, core=core,
                                                                 score=numbers.signed(b.score, 4))
            + (" · " + _("hidden by the causal mask: weight 0") if b.masked else ""))


def _check(ok: bool, text: str) -> None:
    st.caption(f"{':material/check_circle:' if ok else ':material/warning:'} {text}")


def section(model: str, raw: AttentionResult, part: str, view: matrices.MatrixView, layer: int, head: int,
            row: int, column: int) -> None:
    """Take apart the score of the view's cell (``row``, ``column``) in (``layer``, ``head``)."""
    st.subheader(_("Why does this head look there? One score taken apart"))
    if not view.real_head:
        st.info(_("A mean of heads or a rollout is no single head's score: turn those options off to take one apart."),
                icon=":material/info:")
        return
    res = matrices.part_of(raw, part)
    query, key = view.query_positions[row][0], view.key_positions[column][0]
    try:
        b = bd.breakdown(res, layer, head, query, key)
    except ValueError as err:
        st.info(ui.literal(err), icon=":material/info:")
        return
    st.markdown(_("Query **{query}** (position {query_position}) → key **{key}** (position {key_position}), layer "
                  "{layer}, head {head}.").format(query=ui.literal(b.query_token), query_position=query,
                                                 key=ui.literal(b.key_token), key_position=key, layer=layer, head=head)
                + " " + bd.group_note(b))
    if view.value_name != "weight":
        st.caption(":material/info: " + _("The heatmap shows {what}; this is the model's own score and weight for "
                                          "these two tokens.").format(what=ui.literal(_(view.value_name))))
    elif len(view.query_positions[row]) > 1 or len(view.key_positions[column]) > 1 or view.matrix.shape != (
            len(res.tokens), len(res.keys)):
        st.caption(":material/info: " + _("The heatmap hides or merges tokens here; this is the model's own score "
                                          "and weight for these two tokens."))
    if b.masked:
        _parts(b, layer, head, query, key)
        st.caption(":material/info: " + _("This key comes after the query: the causal mask hides it, whatever its "
                                          "score."))
        return
    heatmap_score = float(res.head_scores(layer, head)[query, key])   # the model's vectors, our float32 recompute
    where = so.origin(cached.get_model(model).model, res, b)
    question = (so.distance_question(where.rotary, b) if where.rotary is not None and query > 0
                else bd.dimension_question(b))
    if not ask_first(question, "bd_question", _("The score written out, its parts and where it comes from")):
        return
    _parts(b, layer, head, query, key)
    _origin(b, where, heatmap_score, layer, head, query, key)


def _parts(b: bd.ScoreBreakdown, layer: int, head: int, query: int, key: int) -> None:
    """The score written out, the weight checked against the model's, the two vectors and their products."""
    st.markdown(score_line(b) + "  \n" + _("weight = softmax of the row at this key = **{weight}**").format(
        weight=numbers.number(b.weight, 4)))
    _check(b.gap < TOLERANCE, _("The model's own weight for this cell: {weight} (difference {gap}).").format(
        weight=numbers.number(b.model_weight, 4), gap=numbers.scientific(b.gap, 1)))
    ui.show_figure(plots.vectors(b), "bd_vectors", f"vectors-L{layer}H{head}-{query}-{key}")
    ui.show_figure(plots.products(b), "bd_products", f"products-L{layer}H{head}-{query}-{key}")


def _origin(b: bd.ScoreBreakdown, where, heatmap_score: float, layer: int, head: int, query: int, key: int) -> None:
    """Where the score comes from, by the family's positions, each part checked against the heatmap's score."""
    st.markdown(_("**Where the score comes from.** {sentence}").format(sentence=where.sentence))
    if where.split is not None:
        gap = abs(where.split.total - heatmap_score)
        ui.show_figure(plots.split_parts(where.split), "bd_split", f"split-L{layer}H{head}-{query}-{key}")
        _check(gap <= TOLERANCE * b.size, _("The parts add up to {total}; the score is {score} (difference "
                                            "{gap}).").format(total=numbers.signed(where.split.total, 5),
                                                              score=numbers.signed(heatmap_score,
                                                                                   5), gap=numbers.scientific(gap, 1)))
    if where.alibi is not None:
        a = where.alibi
        _check(abs(a.bias - a.expected) <= TOLERANCE * b.size, _("The bias the model added is {bias}; slope × key "
                                                                 "position gives {expected}.").format(
            bias=numbers.signed(a.bias, 5), expected=numbers.signed(a.expected, 5)))
        if b.mask_bias:
            st.caption(":material/info: " + _("This model's code adds the same bias a second time through its "
                                              "attention mask ({bias}); the score and weight above include both, as "
                                              "the model computes.").format(bias=numbers.signed(b.mask_bias, 4)))
    if where.rotary is not None:
        r = where.rotary
        st.markdown(_("Before rotation the two vectors score **{before}**; rotated to positions {query} and {key} "
                      "they score **{after}**. The Positional encodings lab shows the rotation itself.").format(
            before=numbers.signed(r.before, 4), query=query, key=key, after=numbers.signed(r.after, 4)))
        ui.show_figure(plots.rotary_curve(r, within=query), "bd_curve", f"distance-L{layer}H{head}-{query}-{key}")
        _check(abs(r.at_own - heatmap_score) <= TOLERANCE * b.size,
               _("At their own distance {own} the curve gives {at_own}; the heatmap's score is {score}.").format(
                   own=r.own, at_own=numbers.signed(r.at_own, 5), score=numbers.signed(heatmap_score, 5)))
        ui.page_link(table.LAB_POSITIONS.file, _("Positional encodings lab: how RoPE turns each pair"),
                     icon=":material/school:")


def _chosen_queries(view: matrices.MatrixView) -> list[int]:
    """Rows of ``view`` chosen for "several queries" (deep-linked as token positions, ``queries``)."""
    firsts = [p[0] for p in view.query_positions]
    if "bd_queries" not in st.session_state:
        linked = str(st.query_params.get("queries", "")).split(",")
        st.session_state["bd_queries"] = [int(p) for p in linked if p.strip().isdigit() and int(p) in firsts]
    st.session_state["bd_queries"] = [p for p in st.session_state["bd_queries"] if p in firsts]
    chosen = st.multiselect(_("Query tokens to add up"), firsts, key="bd_queries", placeholder=_("Choose two or more…"),
                            format_func=lambda p: _("{token} · position {position}").format(
                                token=view.query_labels[firsts.index(p)], position=p))
    if chosen:   # an empty value would be written again on every rerun (and sent to every follower)
        params.put("queries", ",".join(str(p) for p in chosen))
    else:
        params.drop("queries")
    return [firsts.index(p) for p in chosen]


def several_queries(view: matrices.MatrixView, name: str) -> None:
    """Several query tokens' attention summed and averaged, with its CSV."""
    st.subheader(_("Several queries at once"))
    rows = _chosen_queries(view)
    if len(rows) < 2:
        st.caption(_("Choose two or more query tokens to see where they look together: their rows summed, and "
                     "averaged (a row that again sums to 1)."))
        return
    frame = matrices.several_queries(view, rows)
    ui.show_figure(plots.several_queries(frame), "bd_several", f"several-{name}")
    ui.download_lazy(_("These rows, their sum and mean as CSV"), lambda: frame, f"several-{name}.csv", "csv_several")
