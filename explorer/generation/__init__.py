"""Watching a causal decoder write: generation one token at a time with the key/value cache.

``sampling``: settings, temperature / top-k / top-p and the seeded draw. ``steps``: the generation loop and the
recorded ``Generation``. ``taps``: the hooks that keep the residual stream, each head's output and each MLP's
output at the new token. ``readout``: the logit lens and each head's direct effect on the picked token's logit.
``kvcache``: the cache's size and the fidelity check against one full forward pass.
"""
