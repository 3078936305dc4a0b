"""Choices and summaries for the flip and compare-heads pages: pure functions of tables and arrays.

Nothing here imports Streamlit. Heads are ``(layer, head)`` pairs; tables are the DataFrames from
``analysis.head_stats`` and ``analysis.flip`` (one row per head, in layer-major order).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.attention.analysis import word_key
from explorer.words import numbers
from explorer.words.i18n import N_, _

Head = tuple[int, int]


# ---------------------------------------------------------------------------------------------- words

def word_options(words: list[str]) -> list[str]:
    """The text's words once each (case ignored, first spelling kept), without punctuation-only words."""
    seen, out = set(), []
    for word in words:
        key = word_key(word)
        if key and key not in seen:
            seen.add(key)
            out.append(word)
    return out


def match_word(options: list[str], wanted: str | None) -> str | None:
    """The option equal to ``wanted`` with case and punctuation ignored, or None."""
    target = word_key(wanted or "")
    return next((o for o in options if target and word_key(o) == target), None)


def pick_word(options: list[str], wanted: str | None, fallback: str | None = None) -> str | None:
    """``wanted``'s option, else ``fallback``'s, else the last option (None when there are no options)."""
    return match_word(options, wanted) or match_word(options, fallback) or (options[-1] if options else None)


def words_after(words: list[str], word_ids: list[int], position: int) -> list[str]:
    """Words (once each) that have a token after ``position``: the queries a causal model lets see that token."""
    later = sorted({w for p, w in enumerate(word_ids) if p > position and w >= 0})
    return word_options([words[w] for w in later])


# ---------------------------------------------------------------------------------------------- flip tables

def grid(table: pd.DataFrame, column: str, n_layers: int, n_heads: int) -> np.ndarray:
    """``table[column]`` as a ``[layer, head]`` array (heads missing from the table are NaN)."""
    out = np.full((n_layers, n_heads), np.nan)
    out[table["layer"].to_numpy(), table["head"].to_numpy()] = table[column].to_numpy(dtype=float)
    return out


def best_head(table: pd.DataFrame) -> Head:
    """The head with the largest flip among those that flip; without any, the largest change either way."""
    flipping = table[table["flips"]]
    row = (flipping.loc[flipping["flip"].idxmax()] if len(flipping)
           else table.loc[table["flip"].abs().idxmax()])
    return int(row["layer"]), int(row["head"])


def ranked_flips(table: pd.DataFrame, top: int = 15) -> tuple[pd.DataFrame, bool]:
    """Heads that flip, largest flip first (or, when none flips, the largest changes); and whether they flip.

    Columns are renamed for reading: ``A → animal`` is the query's attention to "animal" in text A.
    """
    flipping = table[table["flips"]]
    ranked = (flipping.sort_values("flip", ascending=False) if len(flipping)
              else table.reindex(table["flip"].abs().sort_values(ascending=False).index)).head(top)
    names = {c: c.replace(":", " → ") for c in ranked.columns if re.match(r"^[AB]:", c)}
    names.update(lean_a="lean A", lean_b="lean B")
    first = ["layer", "head", "flip", "lean_a", "lean_b"]
    ranked = ranked[first + [c for c in ranked.columns if c not in first and c != "flips"]]
    out = ranked.rename(columns=names).reset_index(drop=True)
    return out.round(3), bool(len(flipping))


RANKED_NAMES = {"layer": N_("layer"), "head": N_("head"), "flip": N_("flip"), "lean A": N_("lean A"),
                "lean B": N_("lean B")}


def readable(ranked: pd.DataFrame) -> pd.DataFrame:
    """``ranked_flips``'s table with its column names in the session's language (``A → animal`` stays: a sentence's
    letter and the model's word). The untranslated one keeps naming the heads for a selection."""
    return ranked.rename(columns={c: _(name) for c, name in RANKED_NAMES.items()})


def small_flip_note(table: pd.DataFrame, small: float = 0.05) -> str:
    """A caution when even the largest change is small (else an empty string)."""
    top = float(table["flip"].abs().max()) if len(table) else 0.0
    if top >= small:
        return ""
    return _("Even the largest flip is small ({top}): in this model, changing the word barely moves where the "
             "query looks. Heads that 'flip' by less than a few hundredths are noise, not a decision.").format(
        top=numbers.number(top, 3))


def max_row_difference(a: np.ndarray, b: np.ndarray, rows: list[int]) -> float:
    """Largest |a − b| over the given query rows of two ``[query, key]`` matrices (0 when the shapes differ)."""
    if a.shape != b.shape or not rows:
        return float("nan")
    return float(np.abs(a[rows] - b[rows]).max())


# ---------------------------------------------------------------------------------------------- head statistics

PATTERN_TITLES = {"previous-token": N_("Previous-token"), "attention sink": N_("Attention sink"),
                  "sharp": N_("Sharp"), "broad": N_("Broad")}


@dataclass(frozen=True)
class Pattern:
    name: str            # the pattern's id (English); ``title`` names it in the session's language
    heads: list[Head]
    values: list[float]
    meaning: str         # in the language of the session that found it

    @property
    def title(self) -> str:
        return _(PATTERN_TITLES[self.name])


def patterns(stats: pd.DataFrame, n_tokens: int, special_sinks: bool = True, top: int = 5) -> list[Pattern]:
    """The common head patterns found in ``head_stats`` output, strongest heads first.

    - previous-token: more than half the weight on the token just before
    - sink: more than half on special tokens (or the first token when there are none)
    - sharp: mean top weight above 0.7 (one key per query), not counting sinks or previous-token heads
    - broad: entropy above 80 % of a uniform row's ln(n)
    """
    sink_meaning = (_("Most weight goes to the special tokens ([CLS], [SEP], …). A head with nothing relevant to "
                      "find for a query parks its weight there (rows must sum to 1), so read it as 'this head is "
                      "mostly idle on this text', not as 'this token matters'.") if special_sinks else
                    _("Most weight goes to the first token. A head with nothing relevant to find for a query parks "
                      "its weight there (rows must sum to 1), so read it as 'this head is mostly idle on this text', "
                      "not as 'this token matters'."))
    broad_cut = 0.8 * math.log(max(n_tokens, 2))
    prev = stats["previous_token"] > 0.5
    sink = stats["sink"] > 0.5
    rules = [
        ("previous-token", prev, "previous_token",
         _("Each token looks mostly at the token just before it. These heads carry local word order; "
           "later heads can build on them (for example to copy what followed an earlier occurrence).")),
        ("attention sink", sink, "sink", sink_meaning),
        ("sharp", (stats["max_weight"] > 0.7) & ~prev & ~sink, "max_weight",
         _("Each query puts most of its weight on one key: a precise lookup (a particular word, a delimiter, "
           "itself).")),
        ("broad", stats["entropy"] > broad_cut, "entropy",
         _("Weight is spread over most of the text: the head averages context, like a bag of words.")),
    ]
    found = []
    for name, mask, column, meaning in rules:
        hits = stats[mask].sort_values(column, ascending=False).head(top)
        if len(hits):
            found.append(Pattern(name, list(zip(hits["layer"].astype(int), hits["head"].astype(int))),
                                 [float(v) for v in hits[column]], meaning))
    return found


def preselect(stats: pd.DataFrame, k: int = 4) -> list[Head]:
    """``k`` heads that look different from each other: strongest previous-token, sink, sharpest and broadest."""
    plain = stats[(stats["previous_token"] <= 0.5) & (stats["sink"] <= 0.5)]
    sharp = plain["max_weight"].idxmax() if len(plain) else stats["max_weight"].idxmax()
    order = [stats["previous_token"].idxmax(), stats["sink"].idxmax(), sharp, stats["entropy"].idxmax(),
             *stats["max_weight"].sort_values(ascending=False).index]
    heads: list[Head] = []
    for i in order:
        head = (int(stats.loc[i, "layer"]), int(stats.loc[i, "head"]))
        if head not in heads:
            heads.append(head)
        if len(heads) == k:
            break
    return heads


# ---------------------------------------------------------------------------------------------- links, exports

_HEAD = re.compile(r"^\s*L?\s*(-?\d+)\s*[.·:/_\- ]?\s*H?\s*(-?\d+)\s*$", re.IGNORECASE)


def head_id(head: Head) -> str:
    return f"L{head[0]}H{head[1]}"


def parse_heads(raw: str, n_layers: int, n_heads: int, most: int = 4) -> tuple[list[Head], list[str]]:
    """Heads from a link like ``L4H0,L2H3`` (also ``4.0``), clamped to the model; and notes on what was fixed."""
    heads: list[Head] = []
    notes = []
    for part in [p for p in str(raw).split(",") if p.strip()]:
        match = _HEAD.match(part)
        if not match:
            notes.append(_("{part} is not a head (write L4H0); it was skipped.").format(part=repr(part.strip()[:20])))
            continue
        layer, head = int(match[1]), int(match[2])
        fixed = (min(max(layer, 0), n_layers - 1), min(max(head, 0), n_heads - 1))
        if fixed != (layer, head):
            notes.append(_("Layer {layer} head {head} does not exist (layers 0–{last_layer}, heads 0–{last_head}); "
                           "showing layer {shown_layer} head {shown_head}.").format(
                layer=layer, head=head, last_layer=n_layers - 1, last_head=n_heads - 1, shown_layer=fixed[0],
                shown_head=fixed[1]))
        if fixed not in heads:
            heads.append(fixed)
    if len(heads) > most:
        notes.append(_("At most {most} heads side by side; the first {most} are shown.").format(most=most))
    return heads[:most], notes


def matrix_frame(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> pd.DataFrame:
    """One head's ``[query, key]`` matrix with ``position:token`` labels (unique even when words repeat)."""
    return pd.DataFrame(np.asarray(weights, dtype=np.float64),
                        index=pd.Index([f"{i}:{t}" for i, t in enumerate(query_tokens)], name="query \\ key"),
                        columns=[f"{i}:{t}" for i, t in enumerate(key_tokens)])
