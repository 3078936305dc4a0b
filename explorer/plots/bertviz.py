"""bertviz's head view and model view as one self-contained, offline HTML page.

bertviz (``html_action="return"``) builds a page that fetches require.js, d3 and jQuery from a CDN, so with no
network it draws nothing. Here bertviz still validates the input and builds the page's data and markup;
``explorer.plots.offline_html`` then drops the CDN tags and inlines d3 5.7.0 and jQuery 2.2.4 (vendored from npm in
``assets/vendor/``), followed by a tiny ``require`` shim that hands bertviz the two libraries it asks for. The
result makes no request at all: a Content-Security-Policy (``default-src 'none'``, scripts allowed only by their
sha256) says so to the browser as well.

User text never becomes markup. bertviz writes its parameters as JSON straight into a ``<script>`` element, so a
token such as ``</script><img src=x onerror=…>`` would end the script early and run. The parameters are
therefore re-serialised with ``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e`` and ``\\u0026`` (the same
string to JavaScript, but nothing an HTML parser can act on); bertviz's own JS puts tokens into the SVG with
d3's ``.text()``, which never parses HTML.

The page's size grows with tokens² × layers × heads (every weight of every head is embedded), and so does the
number of SVG lines the browser draws, so each view is capped in tokens: ``max_tokens_for`` derives the cap from
a byte budget and a line budget, and a longer input raises ``TooManyTokens`` (a ``ValueError`` whose message can
be shown as is).

Weights are ``[layer, head, query, key]`` numpy arrays, as in ``explorer.attention.result.AttentionResult``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from explorer.plots import offline_html
from explorer.words.i18n import _

HTML_BUDGET_BYTES = 3_000_000   # the most a bertviz page may weigh; it is re-sent to the browser on every rerun
MAX_DRAWN_LINES = 120_000       # SVG lines drawn at once; 430k took 9-16 s to draw in headless Chromium here
MAX_TOKENS_CEILING = 128        # above this the views are unreadable whatever the model size
DECIMALS = 3                    # weights are rounded for the page: 0.001 is below what an opacity can show

Part = Literal["self", "encoder", "decoder", "cross"]
_BERTVIZ_NAMES = {"encoder": "encoder_attention", "decoder": "decoder_attention", "cross": "cross_attention"}



class TooManyTokens(ValueError):
    """The input is longer than a bertviz view may show; ``str(error)`` is a message for the user."""

    def __init__(self, view: str, n_tokens: int, max_tokens: int, n_layers: int, n_heads: int):
        self.view, self.n_tokens, self.max_tokens = view, n_tokens, max_tokens
        self.n_layers, self.n_heads = n_layers, n_heads
        said = (_("The bertviz head view shows at most {most} tokens for {n_layers} layer(s) × {n_heads} heads (its "
                  "page holds and draws every weight: tokens² × layers × heads); this input has {n} tokens. Shorten "
                  "the text, or show fewer layers.") if view == "head" else
                _("The bertviz model view shows at most {most} tokens for {n_layers} layer(s) × {n_heads} heads (its "
                  "page holds and draws every weight: tokens² × layers × heads); this input has {n} tokens. Shorten "
                  "the text, or show fewer layers."))
        super().__init__(said.format(most=max_tokens, n_layers=n_layers, n_heads=n_heads, n=n_tokens))



@dataclass(frozen=True)
class ViewPart:
    """One attention block for bertviz: ``weights`` ``[layer, head, query, key]``, ``query_tokens`` label the
    query axis, ``key_tokens`` the key axis (the same list for self-attention). ``part`` is "self" for a
    self-attention model, or "encoder" | "decoder" | "cross" for an encoder-decoder's blocks."""
    part: Part
    query_tokens: list[str]
    key_tokens: list[str]
    weights: np.ndarray

    def __post_init__(self):
        w = np.asarray(self.weights)
        if w.ndim != 4:
            raise ValueError(f"{self.part} weights must be [layer, head, query, key]; got shape {w.shape}.")
        if w.shape[2:] != (len(self.query_tokens), len(self.key_tokens)):
            raise ValueError(
                f"{self.part} weights have {w.shape[2]} queries × {w.shape[3]} keys, but there are "
                f"{len(self.query_tokens)} query tokens and {len(self.key_tokens)} key tokens.")

    @property
    def n_tokens(self) -> int:
        return max(len(self.query_tokens), len(self.key_tokens))


# ---------------------------------------------------------------------------------------------------- public API

def max_tokens_for(view: Literal["head", "model"], n_layers: int, n_heads: int, n_parts: int = 1, *,
                   budget_bytes: int = HTML_BUDGET_BYTES, max_lines: int = MAX_DRAWN_LINES,
                   decimals: int = DECIMALS) -> int:
    """The most tokens a view of ``n_parts`` blocks of ``n_layers × n_heads`` attention may show.

    Two limits, both quadratic in tokens: the page holds every weight (at most ``decimals + 3`` bytes each,
    "0.123,") and must stay under ``budget_bytes``; and the browser draws one line per weight it shows at once,
    heads × tokens² for the head view (one layer of one part) and layers × heads × tokens² for the model view
    (one part), which must stay under ``max_lines`` to draw in a few seconds."""
    if view not in ("head", "model"):
        raise ValueError(f"view must be 'head' or 'model'; got {view!r}.")
    room = max(budget_bytes - offline_html.fixed_bytes(), 0)
    by_bytes = math.isqrt(room // ((decimals + 3) * n_layers * n_heads * n_parts))
    by_lines = math.isqrt(max_lines // (n_heads * (n_layers if view == "model" else 1)))
    return max(1, min(MAX_TOKENS_CEILING, by_bytes, by_lines))


def head_view_html(result, layer: int | None = None, *, layers: Sequence[int] | None = None,
                   max_tokens: int | None = None, decimals: int = DECIMALS) -> str:
    """bertviz's head view of an ``AttentionResult`` (or anything with ``tokens``, ``weights`` and optionally
    ``key_tokens`` / ``parts``) as one offline HTML page. ``layer``: the layer shown first; ``layers``: the
    layers the page holds (default all; fewer layers allow more tokens). Raises ``TooManyTokens``."""
    return head_view_html_from_parts(parts_of(result), layer=layer, layers=layers,
                                     max_tokens=max_tokens, decimals=decimals)


def model_view_html(result, *, layers: Sequence[int] | None = None, heads: Sequence[int] | None = None,
                    max_tokens: int | None = None, decimals: int = DECIMALS,
                    display_mode: Literal["light", "dark"] = "light") -> str:
    """bertviz's model view (every layer × head as a thumbnail) of an ``AttentionResult`` as one offline HTML
    page. ``layers`` / ``heads`` restrict what it holds. Raises ``TooManyTokens``."""
    return model_view_html_from_parts(parts_of(result), layers=layers, heads=heads, max_tokens=max_tokens,
                                      decimals=decimals, display_mode=display_mode)


def head_view_html_from_arrays(tokens: Sequence[str], weights: np.ndarray, *,
                               key_tokens: Sequence[str] | None = None, layer: int | None = None,
                               layers: Sequence[int] | None = None, max_tokens: int | None = None,
                               decimals: int = DECIMALS) -> str:
    """Head view from plain arrays: ``weights`` ``[layer, head, query, key]``, ``tokens`` for the queries,
    ``key_tokens`` for the keys when they differ (cross attention)."""
    return head_view_html_from_parts([_part_from_arrays(tokens, weights, key_tokens)], layer=layer,
                                     layers=layers, max_tokens=max_tokens, decimals=decimals)


def model_view_html_from_arrays(tokens: Sequence[str], weights: np.ndarray, *,
                                key_tokens: Sequence[str] | None = None, layers: Sequence[int] | None = None,
                                heads: Sequence[int] | None = None, max_tokens: int | None = None,
                                decimals: int = DECIMALS, display_mode: Literal["light", "dark"] = "light") -> str:
    """Model view from plain arrays (see ``head_view_html_from_arrays``)."""
    return model_view_html_from_parts([_part_from_arrays(tokens, weights, key_tokens)], layers=layers,
                                      heads=heads, max_tokens=max_tokens, decimals=decimals,
                                      display_mode=display_mode)


def head_view_html_from_parts(parts: Sequence[ViewPart], *, layer: int | None = None,
                              layers: Sequence[int] | None = None, max_tokens: int | None = None,
                              decimals: int = DECIMALS) -> str:
    """Head view of one self-attention part, or of an encoder-decoder's parts (a menu picks one)."""
    from bertviz import head_view

    kwargs, include = _bertviz_inputs(parts, "head", layers, None, max_tokens, decimals)
    if layer is not None and layer not in include:
        raise ValueError(f"Layer {layer} is not among the layers shown: {include}.")
    page = head_view(**kwargs, layer=layer, include_layers=include, prettify_tokens=False, html_action="return")
    return offline_html.offline_page(page.data, "head_view.js", "bertviz head view")


def model_view_html_from_parts(parts: Sequence[ViewPart], *, layers: Sequence[int] | None = None,
                               heads: Sequence[int] | None = None, max_tokens: int | None = None,
                               decimals: int = DECIMALS, display_mode: Literal["light", "dark"] = "light") -> str:
    """Model view of one self-attention part, or of an encoder-decoder's parts (a menu picks one)."""
    from bertviz import model_view

    kwargs, include = _bertviz_inputs(parts, "model", layers, heads, max_tokens, decimals)
    n_heads = np.asarray(parts[0].weights).shape[1]
    include_heads = sorted({int(h) for h in heads}) if heads else list(range(n_heads))
    page = model_view(**kwargs, include_layers=include, include_heads=include_heads,
                      display_mode=display_mode, prettify_tokens=False, html_action="return")
    return offline_html.offline_page(page.data, "model_view.js", "bertviz model view",
                         background="#000" if display_mode == "dark" else "#fff")


def view_height(result, view: Literal["head", "model"], layers: Sequence[int] | None = None) -> int:
    """Pixels the page needs to show without scrolling, from bertviz's own layout constants; pass it as the
    iframe's height (the page's CSP blocks the script Streamlit injects for ``height="content"``)."""
    parts = result if isinstance(result, (list, tuple)) else parts_of(result)
    n = max(p.n_tokens for p in parts)
    menu = 26 if len(parts) > 1 or view == "head" else 0     # the "Layer:" / "Attention:" select line
    if view == "head":                                        # 22.5 px a token, 30 px of head boxes on top
        return math.ceil(menu + 30 + 22.5 * n) + 24
    shape = np.asarray(parts[0].weights).shape
    n_layers = shape[0] if layers is None else len(set(layers))
    thumbnail = n * 7 * 12 / shape[1] + 10                   # bertviz: 7·12/heads px a token, 5 px padding
    detail = n * 18 + 55                                      # the panel shown when a thumbnail is clicked
    return math.ceil(menu + max(n_layers * thumbnail + 38, detail)) + 24


def parts_of(result) -> list[ViewPart]:
    """The blocks of an ``AttentionResult``: the encoder, decoder and cross parts of an encoder-decoder
    (``result.parts``), else the result itself (with ``key_tokens`` for a lone cross-attention part)."""
    sub = getattr(result, "parts", None) or {}
    if sub:
        return [ViewPart(name, list(p.tokens), list(_keys(p)), p.weights)
                for name in ("encoder", "decoder", "cross") if (p := sub.get(name)) is not None]
    keys = getattr(result, "key_tokens", None)
    part = "cross" if keys is not None or getattr(result, "part", "self") == "cross" else "self"
    return [ViewPart(part, list(result.tokens), list(_keys(result)), result.weights)]


# ---------------------------------------------------------------------------------------------------- internals

def _keys(result) -> Sequence[str]:
    keys = getattr(result, "key_tokens", None)
    return result.tokens if keys is None else keys


def _part_from_arrays(tokens, weights, key_tokens) -> ViewPart:
    tokens = [str(t) for t in tokens]
    if key_tokens is None:
        return ViewPart("self", tokens, tokens, weights)
    return ViewPart("cross", tokens, [str(t) for t in key_tokens], weights)


def _bertviz_inputs(parts: Sequence[ViewPart], view: str, layers, heads, max_tokens, decimals):
    """bertviz's keyword arguments (per-layer ``(1, head, query, key)`` float64 tensors, rounded) after the
    token cap is checked; also the layers the page will hold."""
    import torch

    if not parts:
        raise ValueError("No attention to show.")
    if not isinstance(decimals, int) or not 1 <= decimals <= 6:
        raise ValueError("decimals must be an integer from 1 to 6.")
    shapes = [np.asarray(p.weights).shape for p in parts]
    n_layers = min(s[0] for s in shapes)   # bertviz applies one layer list to every part
    include = list(range(n_layers)) if layers is None else sorted({int(i) for i in layers})
    if not include or include[0] < 0 or include[-1] >= n_layers:
        raise ValueError(f"layers must be a non-empty subset of 0…{n_layers - 1}; got {list(layers or [])}.")
    if heads is not None and (not heads or min(heads) < 0 or max(heads) >= shapes[0][1]):
        raise ValueError(f"heads must be a non-empty subset of 0…{shapes[0][1] - 1}; got {list(heads)}.")
    n_heads = len(set(heads)) if heads else shapes[0][1]
    cap = max_tokens if max_tokens is not None else max_tokens_for(view, len(include), n_heads, len(parts),
                                                                 decimals=decimals)
    n_tokens = max(p.n_tokens for p in parts)
    if n_tokens > cap:
        raise TooManyTokens(f"{view} view", n_tokens, cap, len(include), n_heads)

    def per_layer(weights):
        rounded = np.round(np.asarray(weights, dtype=np.float64), decimals)   # short JSON numbers
        return tuple(torch.from_numpy(rounded[i][None]) for i in range(rounded.shape[0]))   # (1, head, q, k)

    if len(parts) == 1 and parts[0].part == "self":
        return dict(attention=per_layer(parts[0].weights), tokens=list(parts[0].query_tokens)), include
    kwargs = {}
    for p in parts:
        kwargs[_BERTVIZ_NAMES[p.part if p.part != "self" else "encoder"]] = per_layer(p.weights)
        if p.part == "cross":
            kwargs["decoder_tokens"], kwargs["encoder_tokens"] = list(p.query_tokens), list(p.key_tokens)
        else:
            kwargs["decoder_tokens" if p.part == "decoder" else "encoder_tokens"] = list(p.query_tokens)
    return kwargs, include


def bertviz_layers(view: str, n_tokens: int, n_layers: int, n_heads: int, layer: int) -> list[int] | None:
    """The most layers around ``layer`` that a bertviz ``view`` ("head" | "model") can hold for ``n_tokens``
    (all of them when the text is short); None when even one layer is too many."""
    count = next((n for n in range(n_layers, 0, -1) if max_tokens_for(view, n, n_heads) >= n_tokens), 0)
    if count == 0:
        return None
    start = min(max(layer - count // 2, 0), n_layers - count)
    return list(range(start, start + count))


def bertviz_height(view: str, n_tokens: int, n_layers: int, n_heads: int) -> int:
    """Pixels an iframe needs for a bertviz view (from the sizes in bertviz's own JS), plus its menus."""
    if view == "head":
        return int(110 + 22.5 * n_tokens)
    thumbnails = n_layers * (n_tokens * 7 * 12 / n_heads + 10) + 40
    return int(max(thumbnails, n_tokens * 18 + 70) + 60)
