"""The glossary where the words appear: tooltips for widgets that name a term, each page's "Words on this page"
in the sidebar, and the glossary page's list. The words themselves live in ``explorer.words``."""
from __future__ import annotations

import streamlit as st

from explorer.sitemap import table
from explorer.ui import language
from explorer.ui.live import membership
from explorer.ui.text import literal
from explorer.words import glossary
from explorer.words.i18n import _

GLOSSARY_PAGE = table.GLOSSARY.file


def tip(word: str) -> str | None:
    """The definition of the term ``word`` names (a widget label such as "Layer" or "Top-k (0: off)"), for a
    widget's ``help=``; None when it names none."""
    term = glossary.lookup(word)
    return f"**{term.title}**: {term.shown_meaning}" if term else None


def on_this_page(page_file: str) -> None:
    """The sidebar's "Words on this page": each term the page uses, with its definition, and the way to the
    glossary. Nothing for a page without terms, and nothing in the projector view (its sidebar stays shut)."""
    terms = table.terms_of(page_file)
    if not terms or membership.projector():
        return
    with st.sidebar.expander(_("Words on this page"), icon=":material/book:"):
        st.markdown("\n".join(f"- **{t.title}**: {t.shown_meaning}" for t in terms))
        _link_to_glossary()


def _link_to_glossary() -> None:
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(GLOSSARY_PAGE, label=_("Every word: the glossary"), icon=":material/arrow_forward:",
                     query_params=language.in_link() or None)
    except StreamlitAPIException:   # the page run alone, outside app.py's navigation
        st.caption(_("Every word: the Glossary page."))


def glossary_list(query: str, examples: dict[str, str] | None = None) -> None:
    """The whole glossary by idea, or the terms matching ``query``, each with the pages that use it and, for a term
    in ``examples`` (term name -> one sentence), its example."""
    found = set(t.name for t in glossary.matching(query))
    if not found:
        st.info(_("No word matches “{query}”. Try part of it, or clear the box.").format(query=literal(query)),
                icon=":material/search:")
        return
    for group, terms in glossary.GROUPS.items():
        shown = [t for t in terms if t.name in found]
        if not shown:
            continue
        st.subheader(_(group))
        half = (len(shown) + 1) // 2
        for column, part in zip(st.columns(2, gap="large"), (shown[:half], shown[half:])):   # one on a phone
            for term in part:
                on = ", ".join(_(g.title) for g in table.pages_using(term.name))
                on_pages = "  \n*" + _("On: {pages}").format(pages=on) + "*" if on else ""
                example = "  \n:material/hub: " + examples[term.name] if term.name in (examples or {}) else ""
                column.markdown(f"**{term.title}**  \n{term.shown_meaning}" + example + on_pages)
