"""Classroom: a teacher starts a class and drives; students join with a code, a link or a QR code and follow."""
import streamlit as st

from explorer.ui.live import membership, room_panels
from explorer.ui.widgets import use_app_navigation
from explorer.words.i18n import _

use_app_navigation()
st.title(_("Classroom"), anchor=False)
if membership.teacher_key():
    room_panels.teacher()
elif membership.student():
    room_panels.student()
else:
    room_panels.outside()
