"""How the next token is picked from a step's logits: greedy, or a seeded draw after temperature, top-k, top-p.

The order is the one most libraries use: logits ÷ temperature, then keep the ``top_k`` most likely tokens, then
the smallest set of the most likely tokens whose probabilities add up to at least ``top_p``; what is left is
renormalised (the *processed* distribution). A draw is inverse-CDF sampling: one uniform number ``u`` in [0, 1)
per step, from a generator seeded by ``seed``, and the picked token is the first, in order of decreasing
probability, at which the running total passes ``u``. The same seed gives the same ``u`` sequence, hence the same
continuation: a link reproduces it exactly.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from explorer import maths
from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext

DEFAULT_NEW_TOKENS = 20


def max_new_tokens() -> int:
    """The deployer's cap on new tokens (``EXPLORER_MAX_NEW_TOKENS``, default 64)."""
    raw = os.environ.get("EXPLORER_MAX_NEW_TOKENS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else 64


@dataclass(frozen=True)
class Settings:
    """Everything that decides a continuation besides the model and the prompt (plain values: a cache key)."""
    new_tokens: int = DEFAULT_NEW_TOKENS
    greedy: bool = True
    temperature: float = 1.0
    top_k: int = 0          # 0: off
    top_p: float = 1.0      # 1: off
    seed: int = 0

    def describe(self) -> str:
        """The settings in words, in the current language."""
        if self.greedy:
            return ngettext("greedy, up to {n} new token", "greedy, up to {n} new tokens",
                            self.new_tokens).format(n=self.new_tokens)
        parts = [_("temperature {t}").format(t=numbers.number(self.temperature))]
        if self.top_k:
            parts.append(_("top-k {k}").format(k=self.top_k))
        if self.top_p < 1:
            parts.append(_("top-p {p}").format(p=numbers.number(self.top_p)))
        return ngettext("sampling ({parts}, seed {seed}), up to {n} new token",
                        "sampling ({parts}, seed {seed}), up to {n} new tokens", self.new_tokens).format(
            parts=numbers.joined(parts), seed=self.seed, n=self.new_tokens)


NAMES = {"new_tokens": N_("new tokens"), "temperature": N_("temperature"), "top_k": N_("top k"), "top_p": N_("top p"),
         "seed": N_("seed")}   # each setting as a link's note names it
LIMITS = {  # name: (lowest, highest)
    "new_tokens": (1, None), "temperature": (0.05, 5.0), "top_k": (0, 1000), "top_p": (0.01, 1.0),
    "seed": (0, 2**31 - 1),
}


def clamp_settings(raw: dict) -> tuple[Settings, list[str]]:
    """Settings from loose values (a link's strings), each clamped into range or replaced by its default, and
    one note per value changed. ``new_tokens``' highest is ``max_new_tokens()``."""
    base, notes, values = Settings(), [], {}
    for name, (low, high) in LIMITS.items():
        default = getattr(base, name)
        value = raw.get(name, default)
        kind = type(default)
        try:
            value = kind(float(value)) if kind is int else kind(value)
            if not np.isfinite(value):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            notes.append(_("{setting} {value} is not a number; using {default}.").format(
                setting=_(NAMES[name]), value=repr(str(value)[:30]), default=default))
            value = default
        high = max_new_tokens() if name == "new_tokens" else high
        fixed = min(max(value, low), high)
        if fixed != value:
            notes.append(_("{setting} {value} is out of range ({low}–{high}); using {fixed}.").format(
                setting=_(NAMES[name]), value=numbers.number(value), low=numbers.number(low),
                high=numbers.number(high), fixed=numbers.number(fixed)))
        values[name] = fixed
    greedy = str(raw.get("greedy", True)).strip().lower() not in {"0", "false", "no", "off", "sample"}
    return Settings(greedy=greedy, **values), notes


URL_KEYS = {"new_tokens": "new", "temperature": "temp", "top_k": "topk", "top_p": "topp", "seed": "seed"}
"""Each setting's name in a link (the "Watch it write" page's URL parameters; ``mode`` is greedy or sample)."""


def settings_from_params(params) -> Settings:
    """The settings a link's parameters (``URL_KEYS`` and ``mode``) give, as the page reads them: clamped, and with
    greedy's unused settings left at their defaults (one setting, one cache entry)."""
    raw = {name: params[key] for name, key in URL_KEYS.items() if key in params}
    raw["greedy"] = params.get("mode", "greedy") != "sample"
    settings, _ = clamp_settings(raw)
    return Settings(settings.new_tokens) if settings.greedy else settings


def process(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """The processed distribution over the vocabulary (float64, sums to 1): softmax(logits / temperature) with
    only the ``top_k`` most likely tokens kept (0: all), then only the smallest most-likely set reaching ``top_p``
    (the most likely token is always kept), renormalised. Ties at the cut are broken by token id."""
    z = np.asarray(logits, dtype=np.float64) / float(temperature)
    if not (top_k and top_k < len(z)) and top_p >= 1.0:
        return maths.softmax(z)                                # nothing cut: no sort needed
    order = np.argsort(-z, kind="stable")                      # most likely first, ties by token id
    keep = np.ones(len(z), dtype=bool)
    if top_k and top_k < len(z):
        keep[order[top_k:]] = False
    if top_p < 1.0:
        p = maths.softmax(np.where(keep, z, -np.inf))[order]
        before = np.cumsum(p) - p                              # mass of the more likely tokens
        cut = order[before >= top_p]                           # already reached p without them
        keep[cut] = False
    return maths.softmax(np.where(keep, z, -np.inf))


def draw(probs: np.ndarray, u: float) -> int:
    """Inverse-CDF pick: the first token, most likely first, at which the running total of ``probs`` exceeds ``u``
    (``u`` in [0, 1)). Tokens of probability 0 are never picked."""
    p = np.asarray(probs, dtype=np.float64)
    order = np.argsort(-p, kind="stable")
    total = np.cumsum(p[order])
    i = int(np.searchsorted(total, u * total[-1], side="right"))
    return int(order[min(i, int(np.count_nonzero(p)) - 1)])


def uniforms(seed: int, n: int) -> np.ndarray:
    """The ``n`` draws ``u`` of a sampled run with ``seed``: the same seed, the same numbers."""
    return np.random.default_rng(seed).random(n)


def pick(logits: np.ndarray, settings: Settings, u: float | None) -> int:
    """The token a step picks: the largest logit (greedy; ties to the lower id) or ``draw`` on the processed
    distribution."""
    if settings.greedy:
        return int(np.argmax(np.asarray(logits)))
    return draw(process(logits, settings.temperature, settings.top_k, settings.top_p), float(u))


@dataclass(frozen=True)
class Considered:
    """A step's top candidates: ``ids`` (most likely first, by the model's own distribution), ``before`` their
    probabilities at temperature 1 with nothing cut, ``after`` after the settings' processing (0 = cut out),
    and the running total of ``after`` in processed order (where ``u`` lands)."""
    ids: np.ndarray
    before: np.ndarray
    after: np.ndarray
    kept: int          # tokens left after top-k / top-p


def considered(logits: np.ndarray, temperature: float, top_k: int, top_p: float, n: int = 10) -> Considered:
    """The ``n`` most likely tokens of ``logits`` and their probabilities before and after processing."""
    before = maths.softmax(np.asarray(logits, dtype=np.float64))
    after = process(logits, temperature, top_k, top_p)
    top = np.argpartition(-before, min(n, len(before) - 1))[:n]              # the n largest, unordered
    ids = top[np.lexsort((top, -before[top]))]                            # most likely first, ties by id
    return Considered(ids, before[ids], after[ids], int(np.count_nonzero(after)))
