"""Page-level choices for the heatmap page: which matrix to show, with which labels, and what to say about it.

Every view starts from a cached ``AttentionResult`` and only slices, averages or regroups it, so changing an
option never re-runs the model. A view remembers which token positions each of its rows and columns covers
(``query_positions`` / ``key_positions``), so a deep-linked query token survives hiding or merging.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from explorer.attention import analysis
from explorer.attention.result import AttentionResult
from explorer.maths import causal_mask
from explorer.serving import regions
from explorer.words import numbers
from explorer.words.i18n import N_, _

PARTS = {"encoder": N_("encoder self-attention"), "decoder": N_("decoder self-attention"),
         "cross": N_("cross attention (decoder → encoder)")}   # English; part_names() in the session's language
OPTIONS = {  # the heatmap page's check boxes, key: (label, help), marked here and translated where shown
    "hide": (N_("Hide special tokens"), N_("Drop [CLS], [SEP], <s>… and renormalise each row over the tokens left.")),
    "merge": (N_("Merge sub-tokens"), N_("One row and column per word: rows averaged over its tokens, columns "
                                         "summed.")),
    "mean": (N_("Mean of heads"), N_("The average of every head of this layer instead of one head.")),
    "rollout": (N_("Rollout"), N_("Attention rollout: heads averaged, residual mixed in, layers multiplied up to "
                                  "this one.")),
    "shared": (N_("Shared colour scale"), N_("Colour every figure from 0 to 1 instead of each to its own maximum.")),
}


def part_names() -> dict[str, str]:
    """``PARTS`` in the session's language (the part picker's labels)."""
    return {key: _(name) for key, name in PARTS.items()}
VALUE_NAMES = (N_("weight"), N_("weight × value size"), N_("rollout"))   # what a view shows: English, drawn _()
ROLLOUT_RESIDUAL = 0.5
MEMO_BYTES = 8 * 2**20   # per function (a 512-token rollout is 1 MB)


# a rollout (and the overview's tiles and statistics, explorer.attention.overview), kept while their (cached,
# read-only) AttentionResult lives: moving a slider reruns the page, and they need not be recomputed
per_result = regions.remembered(MEMO_BYTES, by_identity=(AttentionResult,))   # each function its own store


@dataclass(frozen=True)
class Options:
    hide_special: bool = False
    merge_words: bool = False
    mean_heads: bool = False
    rollout: bool = False


@dataclass
class MatrixView:
    """One ``[query, key]`` matrix ready to draw (``[head, query, key]`` for a layer's grid).

    ``masked``: bool ``[query, key]``, True where a causal model cannot look (None for bidirectional attention).
    ``query_positions[i]``: the token positions row i stands for (several when sub-tokens are merged).
    """
    matrix: np.ndarray
    query_labels: list[str]
    key_labels: list[str]
    query_positions: list[list[int]]
    key_positions: list[list[int]]
    masked: np.ndarray | None
    title: str
    value_name: str = "weight"
    notes: list[str] = field(default_factory=list)
    real_head: bool = True   # False for a mean of heads or a rollout: no single head of the model


def part_of(result: AttentionResult, part: str) -> AttentionResult:
    """The encoder, decoder or cross part of an encoder-decoder; the result itself for any other model."""
    return result.part_named(part) if result.parts else result


def key_side(result: AttentionResult, part: str) -> tuple[list[int], list[str]]:
    """Word index per key position and the words: the encoder's for cross attention, else the part's own."""
    source = part_of(result, "encoder") if result.parts and part == "cross" else part_of(result, part)
    return source.word_ids, source.words


# ---------------------------------------------------------------------------------------------- one matrix

def _groups(positions: list[list[int]], word_ids: list[int]) -> list[int]:
    return [word_ids[p[0]] for p in positions]


def _transform(base: np.ndarray, res: AttentionResult, key_words: tuple[list[int], list[str]],
               options: Options, causal: bool) -> tuple:
    """Apply hide-special and merge-words to ``base[..., query, key]``; return the pieces of a view."""
    n_q, n_k = base.shape[-2:]
    q_lab, k_lab = list(res.tokens), list(res.keys)
    q_pos, k_pos = [[i] for i in range(n_q)], [[j] for j in range(n_k)]
    visible = None if not causal else causal_mask(n_q, n_k)
    notes = []
    if options.hide_special:
        q_sp, k_sp = np.asarray(res.special, bool), np.asarray(res.keys_special, bool)
        if not (q_sp.any() or k_sp.any()):
            notes.append(_("This model adds no special tokens to this text: there is nothing to hide."))
        elif q_sp.all() or k_sp.all():
            notes.append(_("Every token here is a special token: nothing would be left, so none are hidden."))
        else:
            share = float(np.asarray(base)[..., ~q_sp, :][..., k_sp].sum(-1).mean())
            base, rows, cols = analysis.without_special(base, q_sp, k_sp)
            hidden = sorted({t for t, s in zip([*res.tokens, *res.keys], [*q_sp, *k_sp]) if s})
            notes.append(_("Special tokens hidden ({tokens}). They took {share} of an average row's attention; "
                           "each row is renormalised to sum to 1 over the tokens left.").format(
                tokens=", ".join(hidden), share=numbers.percent(share)))
            q_lab, k_lab = [q_lab[i] for i in rows], [k_lab[j] for j in cols]
            q_pos, k_pos = [q_pos[i] for i in rows], [k_pos[j] for j in cols]
            visible = None if visible is None else visible[np.ix_(rows, cols)]
    if options.merge_words:
        row_groups, col_groups = _groups(q_pos, res.word_ids), _groups(k_pos, key_words[0])
        multi = any(len({g for g in gs if g >= 0}) < sum(g >= 0 for g in gs) for gs in (row_groups, col_groups))
        if not multi:
            notes.append(_("Every word here is a single token: merging sub-tokens changes nothing."))
        base = analysis.group_matrix(base, row_groups, col_groups)
        if visible is not None:
            visible = analysis.group_matrix(visible.astype(float), row_groups, col_groups) > 0
        q_pos, k_pos = _merge_positions(q_pos, row_groups), _merge_positions(k_pos, col_groups)
        q_lab = analysis.group_labels(q_lab, row_groups, res.words)
        k_lab = analysis.group_labels(k_lab, col_groups, key_words[1])
        if multi:
            notes.append(_("Sub-tokens merged into words: a word's row is the mean of its tokens' rows and its "
                           "column the sum of its tokens' columns, so every row still sums to 1."))
    masked = None if visible is None else ~visible
    return np.asarray(base, dtype=np.float32), q_lab, k_lab, q_pos, k_pos, masked, notes


def _merge_positions(positions: list[list[int]], groups: list[int]) -> list[list[int]]:
    out, index = [], {}
    for pos, g in zip(positions, groups):
        if g < 0:
            out.append(list(pos))
        elif g in index:
            out[index[g]].extend(pos)
        else:
            index[g] = len(out)
            out.append(list(pos))
    return out


def matrix_view(result: AttentionResult, part: str, layer: int, head: int, options: Options) -> MatrixView:
    """The matrix the heatmap shows for these options: one head, the mean of a layer's heads, or the rollout
    up to ``layer``; then special tokens hidden and/or sub-tokens merged."""
    res = part_of(result, part)
    facts = res.facts
    part_name = _(PARTS[res.part]) if res.part in PARTS else res.part
    name = facts.name + (f" · {part_name}" if result.parts else "")
    notes, value_name, real = [], res.measure, True
    rollout = options.rollout
    if rollout and res.part == "cross":
        notes.append(_("Rollout follows one stack of self-attention layers; cross attention is shown as it is."))
        rollout = False
    if rollout:
        base = _rollout(res, layer)
        title = _("{name} · rollout through layers 0–{layer}").format(name=name, layer=layer)
        value_name, real = N_("rollout"), False   # value names stay English here; translated where drawn
        mix = f"{numbers.number(ROLLOUT_RESIDUAL)}·I + {numbers.number(1 - ROLLOUT_RESIDUAL)}·A"
        notes.append(_("Attention rollout: each layer's heads averaged, the residual path mixed in ({mix}), and "
                       "layers 0–{layer} multiplied together. It estimates how much each input token flows into each "
                       "position; it is not a matrix the model computes.").format(mix=mix, layer=layer)
                     + (" " + _("The mean-of-heads option is part of it.") if options.mean_heads else ""))
    elif options.mean_heads:
        base = res.weights[layer].mean(0)
        title = _("{name} · layer {layer} · mean of {n} heads").format(name=name, layer=layer, n=facts.n_heads)
        real = False
        notes.append(_("Mean of the {n} heads of layer {layer}: no single head attends like this.").format(
            n=facts.n_heads, layer=layer))
    else:
        base = res.weights[layer, head]
        title = _("{name} · layer {layer} · head {head}").format(name=name, layer=layer, head=head)
    causal = facts.causal and res.part != "cross"
    matrix, q_lab, k_lab, q_pos, k_pos, masked, more = _transform(base, res, key_side(result, part), options,
                                                                  causal)
    return MatrixView(matrix, q_lab, k_lab, q_pos, k_pos, masked, title, value_name, notes + more, real)


@per_result
def _rollout(res: AttentionResult, layer: int) -> np.ndarray:
    return analysis.rollout(res.weights[: layer + 1], residual=ROLLOUT_RESIDUAL)[-1]


def layer_view(result: AttentionResult, part: str, layer: int, options: Options) -> MatrixView:
    """All heads of one layer, ``[head, query, key]``, with the same hide/merge options as the main view."""
    res = part_of(result, part)
    causal = res.facts.causal and res.part != "cross"
    matrix, q_lab, k_lab, q_pos, k_pos, masked, notes = _transform(res.weights[layer], res, key_side(result, part),
                                                                   options, causal)
    return MatrixView(matrix, q_lab, k_lab, q_pos, k_pos, masked, _("Layer {layer}: every head").format(layer=layer),
                      notes=notes)


def row_of(view: MatrixView, position: int) -> int:
    """The row of ``view`` that covers token ``position`` (the nearest row when that token is hidden)."""
    for i, covered in enumerate(view.query_positions):
        if position in covered:
            return i
    firsts = [p[0] for p in view.query_positions]
    return int(np.argmin([abs(p - position) for p in firsts]))


def default_query(result: AttentionResult, part: str = "self") -> int:
    """Token position to show first: the last "it" (the pronoun of the curated examples), else the last
    ordinary token."""
    res = part_of(result, part)
    its = [i for i, t in enumerate(res.tokens) if t.strip().lower() == "it"]
    if its:
        return its[-1]
    ordinary = np.flatnonzero(~np.asarray(res.special, bool))
    return int(ordinary[-1]) if ordinary.size else len(res.tokens) - 1


def csv_frame(view: MatrixView) -> pd.DataFrame:
    """The shown matrix as a table: one row per query token, one column per key token."""
    frame = pd.DataFrame(np.asarray(view.matrix, dtype=np.float64), index=pd.Index(view.query_labels),
                         columns=pd.Index(view.key_labels))
    frame.index.name = "query \\ key"
    return frame


def several_queries(view: MatrixView, rows: list[int]) -> pd.DataFrame:
    """The attention of several query rows of ``view`` at once: per key (rows of the frame, in the view's order),
    each chosen query's weight, their ``sum`` (how much attention the group sends each key, out of len(rows))
    and their ``mean`` (a row that again sums to 1)."""
    rows = sorted(set(int(r) for r in rows))
    m = np.asarray(view.matrix, dtype=np.float64)[rows]                  # (len(rows), key)
    frame = pd.DataFrame({f"{view.query_labels[r]} · {view.query_positions[r][0]}": m[i] for i, r in enumerate(rows)},
                         index=pd.Index([f"{k} · {p[0]}" for k, p in zip(view.key_labels, view.key_positions)]))
    frame["sum"], frame["mean"] = m.sum(0), m.mean(0)
    frame.index.name = "key"
    return frame
