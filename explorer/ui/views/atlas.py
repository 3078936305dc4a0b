"""The head atlas page's drawing: the stored atlas read (its problems said), the scatter of every head, a head's
card (its measures among the model's, the app's names for it checked, its top examples with the keys marked and
a link to each on the heatmap page), and the class question "Which head is this?"."""
from __future__ import annotations

import streamlit as st

from explorer.atlas import cards, labels, question, shipped
from explorer.atlas import on_demand as on_demand_pass
from explorer.jobs import keepers
from explorer.model.registry import EMBEDDED_DECODER
from explorer.plots import atlas as plots
from explorer.serving import regions
from explorer.sitemap import table
from explorer.ui import cached, params
from explorer.ui.predict_first import ask_first
from explorer.ui.text import literal
from explorer.ui.widgets import fidelity_badge, from_url, page_link, show_figure
from explorer.words import i18n, numbers
from explorer.words.i18n import _


@regions.remembered(64 * 2**20)
def stored(model: str) -> shipped.Atlas | None:
    """The stored atlas of ``model``, read and checked once per server."""
    return shipped.load(model)


PASSES = keepers.jobs("atlas-passes")   # on-demand passes, one per model, shared by every session


def atlas_or_stop(model: str) -> shipped.Atlas:
    """The model's stored atlas with its problems said; for a model without one, the on-demand pass (asked for
    with a button, then shared: its progress shown to every session that waits); else one sentence and a stop."""
    atlas = stored(model) or on_demand(model)
    if atlas is None:
        st.stop()
    for problem in atlas.problems:
        st.warning(str(problem))
    if not atlas.means:
        st.stop()
    return atlas


def on_demand(model: str) -> shipped.Atlas | None:
    """The on-demand atlas of ``model``: None (with one sentence and the button) until asked, then its shared job."""
    job = PASSES.peek(model)
    if job is None:
        running = [k for k in PASSES.running() if k != model]
        st.info(_("No atlas is stored for {model}: the stored atlas covers the two embedded models. This server can "
                  "read the corpus with it now: at most {tokens} tokens and {seconds} seconds.").format(
            model=literal(model), tokens=numbers.integer(on_demand_pass.MAX_TOKENS),
            seconds=numbers.integer(int(on_demand_pass.MAX_SECONDS))))
        if running:
            st.caption(_("Another model's pass is running ({model}); ask again when it has finished.").format(
                model=literal(str(running[0]))))
            return None
        if not st.button(_("Read the corpus with this model"), key="atlas_pass"):
            return None
        loaded = cached.get_model(model)   # loaded here, its progress in the page; the pass runs in the job
        job = PASSES.run(model, lambda progress: on_demand_pass.atlas_for(loaded, progress),
                         _("head atlas of {model}").format(model=model), lang=i18n.current())
    atlas = cached.wait_or_stop(job)
    st.caption(_("Read on demand: {tokens} tokens in {windows} windows of the corpus.").format(
        tokens=numbers.integer(atlas.n_tokens), windows=numbers.integer(atlas.n_windows)))
    return atlas


def measure_picker(label: str, key: str, atlas: shipped.Atlas, default: str) -> str:
    """One of the atlas's measures from a menu, deep-linked (a value not offered falls back to ``default``)."""
    offered = list(atlas.measures)
    default = default if default in offered else offered[0]
    if from_url(key, default) not in offered:
        st.session_state[key] = default
    choice = st.selectbox(label, offered, key=key, format_func=lambda m: _(cards.NAMES[m]))
    params.put(key, choice)
    return choice


def source_line(atlas: shipped.Atlas) -> None:
    st.caption(_("Corpus: {tokens} tokens in {windows} windows of short quotations and sayings. Source: {source}. "
                 "Licence: {licence}.").format(tokens=numbers.integer(atlas.n_tokens),
                                               windows=numbers.integer(atlas.n_windows),
                                               source=literal(atlas.source), licence=literal(atlas.licence)))


def heads_table(table, by: str, layers: tuple[int, int]) -> None:
    """Every head as a table sorted by ``by`` within ``layers``, its columns named in the session's language."""
    shown = cards.filtered(table, by, layers=layers)
    names = {"layer": _("layer"), "head": _("head"), "name": _("head") + " (L·H)",
             **{m: _(cards.NAMES[m]) for m in cards.NAMES}}
    st.dataframe(numbers.table(shown.rename(columns=names), 3), hide_index=True, height=280)


def scatter(atlas: shipped.Atlas, x: str, y: str, head: tuple[int, int], shown) -> None:
    """Every head as a point; a click opens that head's card (sets the layer and head pickers)."""
    fig = plots.head_scatter(atlas.means[x], atlas.means[y], _(cards.NAMES[x]), _(cards.NAMES[y]), shown=shown,
                             selected=head)
    show_figure(fig, "atlas_scatter", f"atlas-{atlas.model}", on_select=_open_clicked,
                view=(atlas.model, x, y, head, None if shown is None else shown.tobytes()))


def _open_clicked() -> None:
    from explorer.ui.widgets import selected_head

    picked = selected_head("atlas_scatter")
    if picked is not None:
        st.session_state["layer"], st.session_state["head"] = picked


def named_verdict(model: str, head: tuple[int, int]) -> None:
    """Beside a head the app names (a lesson's previous-token or induction head), whether the atlas's corpus of
    real text agrees, in one caption; nothing for a head the app does not name or a model without an atlas."""
    named = [(where, role) for where, layer, h, role in labels.named_heads(model) if (layer, h) == tuple(head)]
    atlas = stored(model) if named else None
    for _where, role in named if atlas is not None else ():
        verdict = labels.verdict(atlas, tuple(head), role)
        if verdict is not None:
            icon = ":material/check_circle:" if verdict.agrees else ":material/help:"
            st.caption(icon + " " + _("On real text (Head atlas): {verdict}").format(verdict=labels.sentence(verdict)))


def fidelity_and_names(model: str, result, head: tuple[int, int]) -> None:
    """Under a head's heatmap: its fidelity badge and, for a head the app names, whether real text agrees."""
    fidelity_badge(result, *head)
    named_verdict(model, head)


def glossary_examples() -> dict[str, str]:
    """Per glossary term that names a kind of head (``labels.GLOSSARY_ROLES``): an example head of the embedded
    decoder with the corpus's verdict on that name; none without a stored atlas."""
    atlas = stored(EMBEDDED_DECODER)
    found = {}
    for term, role in labels.GLOSSARY_ROLES.items() if atlas is not None and atlas.means else ():
        head, where = labels.example(atlas, role)
        verdict = labels.verdict(atlas, head, role)
        if verdict is None:
            continue
        said = (_("Example: {head} of {model}, named in {where}. On real text: {verdict}") if where else
                _("Example: {head} of {model}, its strongest on real text: {verdict}"))
        found[term] = said.format(head=f"L{head[0]}H{head[1]}", model=atlas.model, where=_(where) if where else "",
                                  verdict=labels.sentence(verdict))
    return found


def head_profile(model: str, head: tuple[int, int]) -> None:
    """One caption under a head another page shows: what it does on real text, where an atlas is stored."""
    atlas = stored(model)
    said = None if atlas is None or not (0 <= head[0] < atlas.n_layers and 0 <= head[1] < atlas.n_heads) \
        else labels.profile(atlas, tuple(head))
    if said:
        st.caption(":material/hub: " + said)


def card(atlas: shipped.Atlas, head: tuple[int, int]) -> None:
    """One head's card: the app's names for it checked, its measures among the model's (its top examples follow,
    ``top_examples``, under the page's picker of their measure)."""
    name = f"L{head[0]}H{head[1]}"
    st.subheader(_("Head {head}").format(head=name))
    for where, layer, h, role in labels.named_heads(atlas.model):
        if (layer, h) == head:
            verdict = labels.verdict(atlas, head, role)
            if verdict is not None:
                icon = ":material/check_circle:" if verdict.agrees else ":material/help:"
                st.markdown(icon + " " + _("Named in {where}: {role}. On real text, {verdict}").format(
                    role=_(labels.ROLE_HEADS[role]), where=_(where), verdict=labels.sentence(verdict)))
    values = {m: atlas.means[m] for m in atlas.measures}
    names = {m: _(cards.NAMES[m]) for m in values}
    show_figure(plots.measures_strip(values, names, head), "atlas_card", f"atlas-{atlas.model}-{name}",
                view=(atlas.model, head))


def top_examples(atlas: shipped.Atlas, head: tuple[int, int], measure: str) -> None:
    """The card's top examples of ``measure``, under their heading."""
    st.markdown("**" + _("Top examples: {measure}").format(measure=_(cards.NAMES[measure])) + "**")
    examples_of(atlas, head, measure)


def examples_of(atlas: shipped.Atlas, head: tuple[int, int], measure: str, links: bool = True) -> None:
    """The head's top examples for ``measure``: the query token boxed, its top keys highlighted with weights."""
    found = cards.examples(atlas, measure, head)
    if not found:
        st.caption(_("No examples are stored for this measure."))
    for ex in found:
        st.markdown(example_markdown(ex))
        if links:
            link = cards.heatmap_link(atlas, ex, head)
            if link:
                page_link(table.HEATMAPS.file, _("Open this example on the heatmap page"), link,
                          icon=":material/grid_on:")


def example_markdown(ex: cards.Example) -> str:
    """An example as markdown: every token literal, joined as the text has them; the query bold on blue, the top
    keys on orange; under it the measure's value and the top keys' weights."""
    parts = []
    for _pos, token, role in ex.shown:
        space = " " if token.startswith(" ") or role == "gap" else ""
        text = literal(token[1:] if token.startswith(" ") else token)
        if role == "query":
            text = f":blue-background[**{text}**]"
        elif role == "key":
            text = f":orange-background[{text}]"
        parts.append(space + text)
        if role == "gap":
            parts.append(" ")
    token_at = {p: t.strip() for p, t, _r in ex.shown}
    keys = numbers.joined(f"“{literal(token_at[k])}” {numbers.number(w, 2)}" for k, w in zip(ex.keys, ex.weights))
    return "".join(parts).strip() + "  \n:gray[" + _("value {value}; top keys: {keys}").format(
        value=numbers.number(ex.value, 3), keys=keys) + "]"


def which_head(atlas: shipped.Atlas, role: str) -> None:
    """The class question: four unnamed heads' top examples, then the names once answered."""
    try:
        q, line = question.question(atlas, role)
    except question.NoLineup as why:
        st.info(str(why))
        return
    for letter, head, shown in zip(question.LETTERS, line.heads, line.shown):
        st.markdown("**" + _("Head {letter}").format(letter=letter) + "**")
        examples_of(atlas, head, shown, links=False)
    if ask_first(q, "atlas_which", _("The heads' names")):   # an answer to another lineup expires (fingerprint)
        st.markdown(q.reveal)
