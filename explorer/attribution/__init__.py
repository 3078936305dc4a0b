"""Which input words mattered for one prediction, six ways: attention (last layer, rollout, flow, value-weighted)
and gradients (gradient × input, integrated gradients), how far the methods agree, and how faithful each is.

``explain.explain`` is the entry point; the other modules are its parts (see ``explain``'s table of methods).
"""
