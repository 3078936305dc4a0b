"""Glossary: every term the pages use, in plain words, by idea; a search box narrows it (deep-linked as ?find=)."""
import streamlit as st

from explorer.ui import params, words
from explorer.ui import widgets as ui
from explorer.ui.views import atlas
from explorer.words import glossary
from explorer.words.i18n import _

ui.use_app_navigation()
st.title(_("Glossary"))
st.caption(_("{n} words of attention and transformers, each in a sentence or three. On every page, “Words on this "
             "page” in the sidebar lists its own, and a widget that names one explains it beside its label (the "
             "small question mark).").format(n=len(glossary.TERMS)))
ui.from_url("find", "")
query = st.text_input(_("Find a word"), key="find", max_chars=60, placeholder=_("softmax, head, top-p…"),
                      icon=":material/search:")
if query:
    params.put("find", query)
else:
    params.drop("find")
words.glossary_list(query, examples=atlas.glossary_examples())   # a kind of head: an example, checked on real text
