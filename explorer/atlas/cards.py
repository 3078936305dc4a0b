"""What the atlas page shows of a stored atlas, as plain data: the measures' names, every head as a table to sort
and filter, and one head's card (its top examples as tokens marked query / top key / context, and the heatmap
page's link to each)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.atlas.shipped import Atlas
from explorer.words.i18n import N_

NAMES = {   # English, N_: shown through _()
    "entropy": N_("entropy (nats)"), "first": N_("weight on the first token"),
    "previous": N_("weight on the previous token"), "self": N_("weight on itself"),
    "duplicate": N_("weight on earlier copies of the token"), "induction": N_("weight on the token after a copy"),
    "punctuation": N_("weight on punctuation"), "distance": N_("mean distance (tokens)"),
    "top_first": N_("share of tokens whose top key is the first"),
    "top_previous": N_("share of tokens whose top key is the previous"),
    "top_induction": N_("share of repeats whose top key is after a copy"),
}
CONTEXT = 12   # tokens shown on each side of an example's query
KEY_FLOOR = 0.05   # a top key lighter than this is neither marked nor listed (the heaviest always is)


def heads_table(atlas: Atlas) -> pd.DataFrame:
    """One row per head: ``layer``, ``head``, ``name`` ("L3H7") and every measure that passed its checks."""
    layer, head = np.meshgrid(np.arange(atlas.n_layers), np.arange(atlas.n_heads), indexing="ij")
    frame = pd.DataFrame({"layer": layer.ravel(), "head": head.ravel()})
    frame.insert(2, "name", [f"L{l}H{h}" for l, h in zip(frame["layer"], frame["head"])])
    for name in atlas.measures:
        frame[name] = atlas.means[name].ravel().astype(np.float64)
    return frame


def filtered(frame: pd.DataFrame, by: str, at_least: float = 0.0, layers: tuple[int, int] | None = None,
             descending: bool = True) -> pd.DataFrame:
    """``frame`` sorted by ``by`` (largest first unless ``descending`` is False), keeping heads with ``by`` ≥
    ``at_least`` and a layer within ``layers`` (inclusive)."""
    out = frame[frame[by] >= at_least] if at_least else frame
    if layers is not None:
        out = out[(out["layer"] >= layers[0]) & (out["layer"] <= layers[1])]
    return out.sort_values(by, ascending=not descending, kind="stable")


def rank(atlas: Atlas, name: str, head: tuple[int, int]) -> tuple[int, int]:
    """``(rank, of)``: the head's place among the model's heads on ``name`` (1 = the highest)."""
    v = atlas.means[name].astype(np.float64)
    finite = v[np.isfinite(v)]
    return int((finite > v[head]).sum()) + 1, int(finite.size)


@dataclass(frozen=True)
class Example:
    """One of a head's top examples: ``window`` and ``query`` (a position in the window's tokens), the measure's
    ``value`` there, ``keys`` and ``weights`` (the row's heaviest keys), and ``shown``: (position, token, role)
    for the context around the query, role "query" | "key" | "" (and "gap" for the "…" between parts)."""
    window: int
    query: int
    value: float
    keys: tuple[int, ...]
    weights: tuple[float, ...]
    shown: tuple[tuple[int, str, str], ...]
    text: str


def examples(atlas: Atlas, measure: str, head: tuple[int, int]) -> list[Example]:
    """The head's top examples for ``measure`` (each once, strongest first); [] when none are stored."""
    ex = atlas.examples.get(measure)
    if ex is None:
        return []
    out, seen = [], set()
    l, h = head
    for i in range(ex["value"].shape[-1]):
        window, query = int(ex["window"][l, h, i]), int(ex["query"][l, h, i])
        if (window, query) in seen or window not in atlas.tokens or not np.isfinite(ex["value"][l, h, i]):
            continue
        seen.add((window, query))
        kept: list[tuple[int, float]] = []
        for j, (k, w) in enumerate(zip(ex["keys"][l, h, i], ex["key_weights"][l, h, i])):
            if k >= 0 and (w >= KEY_FLOOR or j == 0):   # the heaviest key always; the others when they weigh
                kept.append((int(k), float(w)))
        keys, weights = tuple(k for k, _w in kept), tuple(w for _k, w in kept)
        out.append(Example(window, query, float(ex["value"][l, h, i]), keys, weights,
                           context(atlas.tokens[window], query, keys), atlas.texts.get(window, "")))
    return out


def context(tokens: list[str], query: int, keys: tuple[int, ...], width: int = CONTEXT):
    """The tokens around ``query`` (``width`` each side, up to the query: a decoder's keys are never after it, an
    encoder's may be) plus any top key outside that span, in order, a "gap" entry where tokens are left out."""
    near = set(range(max(0, query - width), min(len(tokens), query + width + 1)))
    wanted = sorted(near | {k for k in keys if 0 <= k < len(tokens)})
    shown, last = [], None
    for pos in wanted:
        if last is not None and pos > last + 1:
            shown.append((-1, "…", "gap"))
        shown.append((pos, tokens[pos], "query" if pos == query else "key" if pos in keys else ""))
        last = pos
    return tuple(shown)


def heatmap_link(atlas: Atlas, example: Example, head: tuple[int, int]) -> dict[str, str] | None:
    """The heatmap page's URL parameters that open ``example`` there (model, text, layer, head, query), or None
    when the window's text was not shipped."""
    if not example.text:
        return None
    return {"model": atlas.model, "text": example.text, "layer": str(head[0]), "head": str(head[1]),
            "query": str(example.query)}
