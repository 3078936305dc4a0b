"""Lessons: the ready-made lessons (start one, read its steps, print its handout) and your own lesson."""
import streamlit as st

from explorer.ui.views import lessons
from explorer.ui.widgets import use_app_navigation
from explorer.words.i18n import _

use_app_navigation()
st.title(_("Lessons"), anchor=False)
st.caption(_("A lesson is a plan for the hour: pages in order, each opened on the view it needs, a question for the "
             "class at each step and notes that only you see. Start one with a class (students join with a code "
             "and follow each step) or run it alone."))
lessons.homework_section()   # a homework link or code opens it here; the teacher's homework
lessons.catalogue_section()
st.subheader(":material/edit_note: " + _("Your own lesson"), anchor=False)
lessons.own_section()
