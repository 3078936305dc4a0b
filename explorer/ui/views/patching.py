"""The patching page's inputs and shared work: a ready pair or the student's own (checked by the core, a refusal
shown as one sentence), what to patch and in which direction, and the three computations a page waits on, each a
shared job keyed by plain values (the model, the pair's texts and answers, the granularity, the direction…):
the pair prepared (both runs and their metric), the attribution preview (one forward and one backward a run) and
exact patching (a bounded job with its progress). Thirty students asking for one pair start one computation, and
a student who leaves the page stops nothing. The drawing is ``explorer.ui.views.patching_results``.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from explorer.model.registry import EMBEDDED_DECODER
from explorer.patching import READY, MinimalPair, shared
from explorer.sitemap.table import PATCH_LEVELS, PATCH_PAIRS
from explorer.ui import cached, params, pickers
from explorer.ui.text import literal
from explorer.ui.widgets import from_url
from explorer.words import numbers
from explorer.words.i18n import N_, _

OWN = "own"
PAIR_NAMES = {k: p.title for k, p in READY.items()} | {OWN: N_("Your own pair…")}   # English: _() where shown
LEVELS = {"residual": N_("residual stream (layer × position)"), "heads": N_("each head's output"),
          "heads_at": N_("each head's output at one position"), "patterns": N_("each head's attention pattern"),
          "path": N_("paths into one head (path patching)")}
DIRECTIONS = {"denoise": N_("denoise: clean into corrupted"), "noise": N_("noise: corrupted into clean"),
              "both": N_("both, side by side")}
VIAS = {"q": N_("queries (q)"), "k": N_("keys (k)"), "v": N_("values (v)"), "qkv": N_("all three (qkv)")}
PREVIEWED = ("residual", "heads", "heads_at")   # the granularities attribution patching estimates
assert set(LEVELS) == set(PATCH_LEVELS) and set(READY) | {OWN} == set(PATCH_PAIRS)


@dataclass(frozen=True)
class PatchSettings:
    """What one exact run patches: the granularity, the directions drawn, and its options (plain values)."""
    level: str
    directions: tuple[str, ...]
    position: int | None = None
    receiver: tuple[int, int] | None = None
    via: str = "qkv"

    def options(self) -> dict:
        found = {}
        if self.level == "heads_at":
            found["position"] = self.position
        if self.level == "path":
            found.update(receiver=self.receiver, via=self.via)
        return found


def pair_picker() -> tuple[str, MinimalPair]:
    """A ready pair from a menu, or the student's own (two texts and two answer words), deep-linked; -> (the
    model it runs on, the pair). The own pair is checked by the core when it is prepared."""
    names = {k: _(title) for k, title in PAIR_NAMES.items()}
    from_url("pair", "ioi")
    if st.session_state["pair"] not in names:
        st.session_state["pair"] = "ioi"
    choice = st.selectbox(_("Pair"), list(names), key="pair", format_func=names.get)
    params.put("pair", choice)
    if choice != OWN:
        pair = READY[choice]
        return pair.model, pair
    model = pickers.model_picker(default=EMBEDDED_DECODER)
    ready = READY["ioi"]
    left, right = st.columns(2)
    clean = _box(left, "text", _("Clean text"), ready.clean, 400)
    corrupted = _box(right, "text_b", _("Corrupted text"), ready.corrupted, 400)
    answer = _box(left, "pt_ans", _("Answer after the clean text"), ready.answer, 40, area=False)
    wrong = _box(right, "pt_ans_b", _("Answer after the corrupted text"), ready.wrong, 40, area=False)
    return model, MinimalPair(clean, corrupted, answer=answer, wrong=wrong, model=model)


def _box(where, key: str, label: str, default: str, most: int, area: bool = True) -> str:
    value = str(from_url(key, default))[:most]
    st.session_state[key] = value
    widget = where.text_area if area else where.text_input
    text = widget(label, key=key, max_chars=most, **({"height": 80} if area else {}))
    params.put(key, text)
    return text


def settings_picker(n_layers: int, n_heads: int, tokens: list[str]) -> PatchSettings:
    """Granularity and direction side by side, then the options the granularity needs (deep-linked); the position
    is picked by its token (``tokens``: the clean text's), as a bare number it said nothing."""
    left, right = st.columns(2)
    with left:
        level = pickers.choice_picker(_("Patch"), "pt_level", {k: _(v) for k, v in LEVELS.items()}, "residual")
    with right:
        direction = pickers.choice_picker(_("Direction"), "pt_dir", {k: _(v) for k, v in DIRECTIONS.items()},
                                          "denoise")
    directions = ("denoise", "noise") if direction == "both" else (direction,)
    if level == "heads_at":
        last = len(tokens) - 1
        position = pickers.token_picker(_("Position"), "pt_pos", [[p] for p in range(len(tokens))],
                                        [str(t) for t in tokens], last, tokens=tuple(tokens))
        return PatchSettings(level, directions, position=position)
    if level == "path":
        columns = st.columns(3)
        with columns[0]:
            layer = pickers.index_picker(_("Receiver layer"), "pt_rl", n_layers, n_layers - 1)
        with columns[1]:
            head = pickers.index_picker(_("Receiver head"), "pt_rh", n_heads, 0)
        with columns[2]:
            via = pickers.choice_picker(_("Into its"), "pt_via", {k: _(v) for k, v in VIAS.items()}, "qkv")
        return PatchSettings(level, directions, receiver=(layer, head), via=via)
    return PatchSettings(level, directions)


# ---------------------------------------------------------------------------------------------- shared work

def contrast_or_stop(model: str, pair: MinimalPair):
    """The pair prepared on ``model`` (both runs, their metric), shared; a refusal is one sentence and a stop."""
    return cached.wait_or_stop(shared.contrast(cached.get_model(model), pair))


def preview_of(model: str, pair: MinimalPair, settings: PatchSettings, direction: str):
    """Attribution patching of the pair, shared (one forward and one backward pass, so it is drawn at once): the
    estimated map of ``settings``' granularity in ``direction`` (None for a granularity it does not estimate)."""
    found = cached.wait_or_stop(shared.preview(cached.get_model(model), pair, direction))
    if settings.level == "heads_at":
        return found.heads_by_position[:, settings.position]
    return {"residual": found.residual, "heads": found.heads}.get(settings.level)


def exact_key(model: str, pair: MinimalPair, settings: PatchSettings, direction: str) -> tuple:
    return shared.exact_key(model, pair, settings.level, direction, **settings.options())


def exact_job(model: str, pair: MinimalPair, settings: PatchSettings, direction: str):
    """Exact patching in one direction, a shared bounded job (its progress shown while the page waits)."""
    return shared.exact(cached.get_model(model), pair, settings.level, direction, **settings.options())


def exact_started(model: str, pair: MinimalPair, settings: PatchSettings, direction: str):
    """The exact job for these values if any session has started it, else None."""
    return shared.started(model, pair, settings.level, direction, **settings.options())


def metric_line(pair: MinimalPair, contrast) -> None:
    """The pair's metric on both runs, raw, and what 0 and 1 mean on the page's scale."""
    if pair.kind == "decoder":
        name = _("logit(“{answer}”) − logit(“{wrong}”) at the last position, the logit difference (a logit is "
                 "the model's raw score for a next token: above 0, it prefers “{answer}”)").format(
            answer=literal(pair.answer), wrong=literal(pair.wrong))
    else:
        name = _("layer {layer}, head {head}: attention from “{query}” to “{first}” minus to “{second}”").format(
            layer=pair.layer, head=pair.head, query=literal(pair.query), first=literal(pair.candidates[0]),
            second=literal(pair.candidates[1]))
    left, right = st.columns(2)
    left.metric(_("Clean run"), numbers.signed(contrast.clean, 3))
    right.metric(_("Corrupted run"), numbers.signed(contrast.corrupted, 3))
    st.caption(_("Measured: {metric}. On every map below, 0 is the corrupted run and 1 the clean run.").format(
        metric=name))
