"""The link from any page that draws one head's heatmap to that score taken apart in its one room, the heatmap
page (``explorer.ui.views.score_breakdown``), opened on the same model, text, head and cell."""
from __future__ import annotations

import numpy as np

from explorer.sitemap import table
from explorer.ui import widgets as ui
from explorer.words.i18n import _

OPEN = "breakdown"   # the toggle's key, and its deep link (1 = open)
PAGE = table.HEATMAPS.file   # the breakdown's one room


def cell_params(model: str, text: str, layer: int, head: int, query: int, key: int,
                part: str = "self") -> dict[str, str]:
    """The heatmap page's address parameters that open head (``layer``, ``head``) of ``text`` with the score of
    cell (``query``, ``key``) taken apart; ``query`` and ``key`` are token positions, as the page reads them."""
    found = {"model": model, "text": text, "layer": str(layer), "head": str(head), "query": str(query),
             "key": str(key), OPEN: "1"}
    return found if part == "self" else {**found, "part": part}


def strongest_key(row) -> int:
    """The key a row of weights puts most on (masked keys, NaN, ignored): the default cell to take apart."""
    return int(np.nanargmax(np.asarray(row, dtype=np.float64)))


def cell_link(model: str, text: str, head: tuple[int, int], matrix, tokens: list[str], query: int,
              key: int | None = None, keys: list[str] | None = None, part: str = "self") -> None:
    """A link under a heatmap drawn on another page (or a query of the head geometry map): it opens the heatmap
    page on that head (``(layer, head)``) and text, with the score of cell (``query``, ``key``) of
    ``matrix[query, key]`` taken apart; by default ``key`` is the one the query's row weights most (``matrix`` is
    needed only then). It writes nothing into this page's own address (a follower's address stays the
    teacher's)."""
    key = strongest_key(matrix[query]) if key is None else key
    names = [ui.literal(_short(t)) for t in (tokens[query], (keys or tokens)[key])]
    ui.page_link(PAGE, _("Take “{query}” → “{key}” apart on the heatmap page").format(query=names[0], key=names[1]),
                 icon=":material/calculate:", query_params=cell_params(model, text, *head, query, key, part))


def _short(token: str, most: int = 10) -> str:
    """A token for a one-line label: a link's label does not wrap, it is cut off at the column's edge."""
    token = token.strip() or token
    return token if len(token) <= most else token[:most - 1] + "…"
