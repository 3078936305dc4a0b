"""Small pictures of attention: weights as palette PNGs (data URIs) in shades of the heatmaps' blue, for the grid of
a layer's heads and the overview of every head (``explorer.plots.attention``). The browser gets a picture of a
few kB instead of every weight. The last few encoded are remembered. Never calls Streamlit."""
from __future__ import annotations

import base64
import functools
import hashlib
import io
import zlib

import numpy as np
import plotly.colors as pcolors

from explorer.serving import regions

MASKED_LIGHT = "#e6e6e6"  # cells a causal model cannot see, light enough for the tiles' patterns to stand out


def shades(tiles: np.ndarray, hidden: np.ndarray | None, k: int) -> np.ndarray:
    """Palette indices for ``tiles[..., p, q]`` in 0…1, each cell ``k`` × ``k`` pixels; ``hidden`` cells grey."""
    shade = np.round(np.clip(np.nan_to_num(tiles), 0, 1) * (LEVELS - 1)).astype(np.uint8)
    shade = np.repeat(np.repeat(shade, k, axis=-2), k, axis=-1)
    if hidden is not None:
        shade[..., np.repeat(np.repeat(np.asarray(hidden, bool), k, 0), k, 1)] = LEVELS
    return shade


def blues(values: np.ndarray) -> np.ndarray:
    """Colours of plotly's "Blues" (the heatmaps' ``COLORSCALE``) for values in [0, 1]: uint8 RGB ``[..., 3]``."""
    stops = np.array([[int(c) for c in s[4:-1].split(",")] for s in pcolors.sequential.Blues], dtype=np.float32)
    pos = np.clip(np.nan_to_num(values), 0, 1) * (len(stops) - 1)
    low = np.floor(pos).astype(int).clip(0, len(stops) - 2)
    frac = (pos - low)[..., None]
    return np.round(stops[low] * (1 - frac) + stops[low + 1] * frac).astype(np.uint8)


LEVELS = 14   # shades for 0…1 in the thumbnails' palette; with the masked grey and the white gaps that is 16 colours,
# so the PNG stores 4 bits a pixel: ~30% fewer bytes than 24 shades (8 bits). Enough steps to tell heads apart in
# one hue; the exact weights are in the main heatmap.


PNG_LEVEL = 6   # zlib level (PIL's default)
PNG_STRATEGY = zlib.Z_HUFFMAN_ONLY   # 16 colours in runs: string matching finds little that Huffman codes miss.
# Overview of a 32-token text: encoder 7,210 -> 6,564 bytes in 1.90 -> 0.41 ms, decoder 23,399 -> 24,308 bytes in
# 5.8 -> 1.4 ms (zlib's default strategy against Huffman only, both at level 6)


def png_uri(index: np.ndarray, masked_colour: str = MASKED_LIGHT) -> str:
    """A palette PNG (one byte a pixel) of ``index`` into ``LEVELS`` shades of blue (``blues``), grey, white, as a
    data URI. The last few are remembered: a head change, or a class following one view, draws the same pictures
    again (the overview's 1–5 ms of encoding on every rerun before)."""
    index = np.ascontiguousarray(index, dtype=np.uint8)
    digest = hashlib.blake2b(index.data, digest_size=16).digest()
    return _encoded(digest, index.shape, masked_colour, index)


PNG_MEMO = 64   # pictures remembered (a few kB each)
_png_memo = regions.memo(f"{__name__}._png_memo", 1 << 20, "figures", max_entries=PNG_MEMO)   # each by its length


def _encoded(digest: bytes, shape: tuple, masked_colour: str, index: np.ndarray) -> str:
    key = (digest, shape, masked_colour)
    known = _png_memo.peek(key)
    if known is not None:
        return known
    from PIL import Image

    image = Image.fromarray(index, "P")
    image.putpalette(_palette(masked_colour))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_LEVEL, compress_type=PNG_STRATEGY)
    uri = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    _png_memo.put(key, uri, len(uri))
    return uri


@functools.lru_cache(maxsize=8)
def _palette(masked_colour: str) -> bytes:
    """The PNGs' palette as PIL takes it: ``LEVELS`` shades of blue, ``masked_colour``, white (RGB, flat)."""
    grey = [int(masked_colour[i:i + 2], 16) for i in (1, 3, 5)]
    return np.vstack([blues(np.linspace(0, 1, LEVELS)), [grey, [255, 255, 255]]]).astype(np.uint8).tobytes()
