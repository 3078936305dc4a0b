"""The patching page's results: the attribution preview at once, exact patching with its progress, the question
computed from it (asked before the exact maps are drawn), the maps with hover values and a text alternative, the
components that move the answer most in words, both directions side by side and their difference said, the
agreement between preview and exact, and a link that opens a head on the heatmap page with the same text.
The shared work is ``explorer.ui.views.patching``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from explorer.patching import predictions as questions
from explorer.plots import patching as plots
from explorer.sitemap import table
from explorer.ui import cached
from explorer.ui.predict_first import ask_first
from explorer.ui.text import literal
from explorer.ui.views import patching as work
from explorer.ui.widgets import from_url, page_link, selected_head, show_figure
from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext

QUIZ = "patch_where"   # the page's question (the table's ``quiz``)
PICKED = "pt_picked"   # the head a click on a map chose (Session State)
TOP = 5
SAID = {"denoise": N_("answer restored"), "noise": N_("answer kept")}   # 0: the corrupted run's, 1: the clean's
TITLES = {"residual": N_("Residual stream patched at each layer and position"),
          "heads": N_("Each head's output patched at every position"),
          "heads_at": N_("Each head's output patched at position {position}"),
          "patterns": N_("Each head's attention pattern patched"),
          "path": N_("Each head's output patched only into L{layer}H{head}: {via}")}
WHAT = {"heads": N_("output"), "heads_at": N_("output at one position"), "patterns": N_("attention pattern"),
        "path": N_("output, sent only into the receiver")}


def values_of(patched) -> np.ndarray:
    """The normalised map of an exact or attribution result: ``[layer, position]`` or ``[layer, head]``."""
    return np.asarray(patched.values, dtype=np.float64)


def title_of(settings: work.PatchSettings, direction: str, prefix: str = "") -> str:
    """A map's title: ``prefix``, what was patched (one line, wrapped by the plot), then its direction as a subtitle
    (``<br><sup>``: smaller, and read out as a clause of its own: "… at every position — denoising")."""
    receiver = settings.receiver or (0, 0)
    name = _(TITLES[settings.level]).format(position=settings.position, layer=receiver[0], head=receiver[1],
                                            via=_(work.VIAS[settings.via]))
    return (f"{prefix}: " if prefix else "") + name + f"<br><sup>{direction_word(direction)}</sup>"


def direction_word(direction: str) -> str:
    return _("denoising") if direction == "denoise" else _("noising")


def figure(values: np.ndarray, contrast, settings: work.PatchSettings, direction: str, title: str):
    """The map of one direction, white where patching changed nothing: at 0 when denoising (the corrupted run's
    value), at 1 when noising (the clean run's)."""
    centre = 1.0 if direction == "noise" else 0.0
    if settings.level == "residual":
        return plots.layer_positions(values, contrast.tokens["clean"], title=title, value_name=_(SAID[direction]),
                                     other_tokens=contrast.tokens["corrupted"], centre=centre)
    return plots.heads(values, title=title, value_name=_(SAID[direction]), centre=centre)


def _key(name: str, settings: work.PatchSettings, direction: str) -> str:
    """A chart's key: ``name`` for the first chosen direction, with the direction after it for the second."""
    return name if direction == settings.directions[0] else f"{name}_{direction}"


def preview(model: str, pair, contrast, settings: work.PatchSettings) -> None:
    """The attribution preview of the chosen granularity in each chosen direction, drawn at once."""
    if settings.level not in work.PREVIEWED:
        st.caption(_("The instant preview covers the residual stream and each head's output; for what you patch "
                     "here, only exact patching is shown."))
        return
    for direction in settings.directions:
        values = np.asarray(work.preview_of(model, pair, settings, direction), dtype=np.float64)
        title = title_of(settings, direction, _("Preview (attribution patching)"))
        show_figure(lambda values=values, direction=direction, title=title: figure(values, contrast, settings,
                                                                                   direction, title),
                    _key("pt_preview", settings, direction), f"patch-preview-{direction}",
                    view=(*work.exact_key(model, pair, settings, direction), "preview"))
    st.caption(_("Attribution patching estimates every cell from one forward and one backward pass: how far the "
                 "activation differs between the two runs, times how strongly the measured number reacts to it (its "
                 "gradient). Fast, but only an approximation: exact patching below checks it."))


def exact(model: str, pair, contrast, settings: work.PatchSettings, ready: bool) -> dict | None:
    """The exact results by direction, waited on with their progress (a ready pair starts at once, the
    student's own on a button); None while the student's own has not been asked for."""
    jobs = {d: work.exact_started(model, pair, settings, d) for d in settings.directions}
    if not ready and any(job is None for job in jobs.values()):
        st.caption(_("Exact patching runs the model once for every cell of the map (seconds on the embedded "
                     "models); the result is shared with everyone who asks for the same pair."))
        if not st.button(_("Patch exactly"), key="pt_run", type="primary"):
            return None
    return {d: cached.wait_or_stop(work.exact_job(model, pair, settings, d)) for d in settings.directions}


def asking() -> bool:
    """Whether the page asks its own question (``pt_ask``: a lesson step with a question of its own sets 0)."""
    return str(from_url("pt_ask", "1")) != "0"


def asked(results: dict, contrast, settings: work.PatchSettings) -> bool:
    """The page's question, computed from the first direction's exact result; True once it may be answered."""
    direction = next(iter(results))
    values = values_of(results[direction])
    if settings.level == "residual":
        query = contrast.query_rows[0] if contrast.kind == "encoder" else None   # an encoder's metric is read there
        q = questions.layer_range(values[:contrast.last_layer + 1], contrast.tokens["clean"], direction, query)
    else:
        q = questions.which_head(values, direction, _(WHAT[settings.level]))
    return ask_first(q, "patch_where", _("The exact maps"))   # QUIZ


def draw(model: str, pair, contrast, settings: work.PatchSettings, results: dict) -> None:
    """Each direction's map (side by side when both), the top components, the difference, the heatmap link."""
    columns = st.columns(len(results)) if len(results) > 1 else [st.container()]
    for column, (direction, patched) in zip(columns, results.items()):
        values = values_of(patched)
        title = title_of(settings, direction)
        with column:
            clickable = settings.level != "residual"
            show_figure(lambda v=values, d=direction, t=title: figure(v, contrast, settings, d, t),
                        f"pt_exact_{direction}", f"patch-{settings.level}-{direction}",
                        on_select=_picked(f"pt_exact_{direction}") if clickable else "ignore",
                        view=work.exact_key(model, pair, settings, direction))
            st.markdown(top_words(values, contrast, settings, direction))
    if len(results) == 2:
        st.info(literal(difference(values_of(results["denoise"]), values_of(results["noise"]), contrast, settings)))
    if settings.level != "residual":
        head_link(model, pair, contrast, values_of(next(iter(results.values()))), next(iter(results)))


def _picked(key: str):
    def callback():
        head = selected_head(key)
        if head is not None:
            st.session_state[PICKED] = head
    return callback


def names(values: np.ndarray, contrast, settings: work.PatchSettings) -> list[str]:
    """Each cell's name in flat order: "L12 · 9 “ John”" (residual) or "L9H5" (heads)."""
    n_rows, n_cols = values.shape
    if settings.level == "residual":
        tokens = contrast.tokens["clean"]
        said = _("L{layer} · {position} “{token}”")
        return [said.format(layer=l, position=p, token=tokens[p]) for l in range(n_rows) for p in range(n_cols)]
    return [f"L{l}H{h}" for l in range(n_rows) for h in range(n_cols)]


def ranked(values: np.ndarray, direction: str, k: int = TOP) -> list[int]:
    """The flat indices of the ``k`` cells that move the answer most in ``direction`` (restore or break it)."""
    moved = np.nan_to_num(values if direction == "denoise" else 1.0 - values, nan=-np.inf).ravel()
    return [int(i) for i in np.argsort(-moved, kind="stable")[:k]]


def top_words(values: np.ndarray, contrast, settings: work.PatchSettings, direction: str) -> str:
    """The cells that move the answer most, in one sentence (each value as a share of the clean answer)."""
    cells = names(values, contrast, settings)
    top = ranked(values, direction)
    moved_by = values.ravel() if direction == "denoise" else 1.0 - values.ravel()   # restored, or taken away
    listed = numbers.joined(f"{literal(cells[i])} ({numbers.percent(float(moved_by[i]))})" for i in top)
    line = (_("Restoring most: {cells}.") if direction == "denoise" else
            _("Taking away most of the clean answer: {cells}.")).format(cells=listed)
    moved = np.abs(values if direction == "denoise" else 1.0 - values) >= 0.5
    n = int(moved.sum())
    return line + " " + (ngettext("{n} cell of {total} moves at least half of the answer.",
                                  "{n} cells of {total} move at least half of the answer.", n).format(
        n=numbers.integer(n), total=numbers.integer(values.size)))


def difference(denoise: np.ndarray, noise: np.ndarray, contrast, settings: work.PatchSettings) -> str:
    """What differs between the two directions, in words: denoising finds what is enough to bring the answer
    back, noising what the clean run cannot do without; the cells one finds and the other does not."""
    cells = names(denoise, contrast, settings)
    enough = set(ranked(denoise, "denoise"))
    needed = set(ranked(noise, "noise"))
    both = sorted(enough & needed)
    only_enough, only_needed = sorted(enough - needed), sorted(needed - enough)
    said = _("Denoising asks what is enough: one clean activation in the corrupted run. Noising asks what is "
             "needed: one corrupted activation in the clean run. Of the top {k} of each, {both} are in both.").format(
        k=TOP, both=numbers.integer(len(both)))
    if only_enough:
        said += " " + _("Enough but not needed (something else in the clean run makes up for it): {cells}.").format(
            cells=numbers.joined(cells[i] for i in only_enough))
    if only_needed:
        said += " " + _("Needed but not enough alone (it works only with other parts): {cells}.").format(
            cells=numbers.joined(cells[i] for i in only_needed))
    return said


def head_link(model: str, pair, contrast, values: np.ndarray, direction: str) -> None:
    """A link that opens the clicked head (else the one that moves the answer most) on the heatmap page, with the
    clean text; the student's click is their own, so the link is drawn in each session."""
    n_layers, n_heads = values.shape
    picked = st.session_state.get(PICKED)
    if not (isinstance(picked, tuple) and 0 <= picked[0] < n_layers and 0 <= picked[1] < n_heads):
        top = ranked(values, direction, 1)[0]
        picked = (top // n_heads, top % n_heads)
    layer, head = int(picked[0]), int(picked[1])
    page_link(table.HEATMAPS.file, _("Open layer {layer}, head {head} on the heatmap page with the clean "
                                     "text").format(layer=layer, head=head),
              {"model": model, "text": pair.clean, "layer": str(layer), "head": str(head)}, icon=":material/grid_on:")


def agreement(model: str, pair, contrast, settings: work.PatchSettings, results: dict) -> None:
    """Once exact has run: how well the preview predicted it (correlation), and the cells where they disagree."""
    if settings.level not in work.PREVIEWED:
        return
    from explorer.patching.attribution import compare
    for direction, patched in results.items():
        approx = np.asarray(work.preview_of(model, pair, settings, direction), dtype=np.float64)
        agreed = compare(patched, approx)
        exact_values = values_of(patched)
        cells = names(exact_values, contrast, settings)
        worst = [cell["row"] * exact_values.shape[1] + cell["column"] for cell in agreed.disagree]
        said = direction_word(direction)
        if len(results) > 1:
            st.caption(said)
        st.markdown(_("**Preview against exact:** Pearson correlation {r}, rank correlation {rho} (1 when they "
                      "agree perfectly, 0 when they are unrelated), over {n} cells.").format(
            r=numbers.number(agreed.pearson, 2), rho=numbers.number(agreed.spearman, 2),
            n=numbers.integer(exact_values.size)))
        title = _("Preview against exact") + (f"<br><sup>{said}</sup>" if len(results) > 1 else "")
        show_figure(lambda exact_values=exact_values, approx=approx, cells=cells, worst=worst, title=title:
                    plots.agreement(exact_values, approx, cells, title=title, disagreeing=worst),
                    _key("pt_agree", settings, direction), f"patch-agreement-{direction}",
                    view=(*work.exact_key(model, pair, settings, direction), "agree", len(results)))


def cells_table(values: np.ndarray, contrast, settings: work.PatchSettings) -> pd.DataFrame:
    return pd.DataFrame({_("cell"): names(values, contrast, settings), _("value"): values.ravel()})
