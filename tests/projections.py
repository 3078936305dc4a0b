"""What the score-origin tests share (a helper module, not a test file): a layer's query and key projections,
caught by forward hooks while the app's own ``extract`` runs."""
from __future__ import annotations

import numpy as np

from explorer.attention.result import extract


def query_key_projections(loaded, layer: int, text: str, d_head: int) -> tuple[np.ndarray, np.ndarray]:
    """The outputs of ``q_proj`` and ``k_proj`` of ``layer`` (a Llama-style ``self_attn``) while ``text`` is
    extracted, before any rotation: two float64 arrays (token, head, d_head), the key's with its key/value heads."""
    seen = {}
    attn = loaded.model.layers[layer].self_attn
    hooks = [attn.q_proj.register_forward_hook(lambda m, i, o: seen.__setitem__("q", o)),
             attn.k_proj.register_forward_hook(lambda m, i, o: seen.__setitem__("k", o))]
    try:
        extract(loaded, text)
    finally:
        for h in hooks:
            h.remove()
    return tuple(seen[x][0].view(seen[x].shape[1], -1, d_head).double().numpy() for x in ("q", "k"))
