"""Classroom: a teacher starts a class and drives; students join with a code, a link or a QR code and follow."""
import streamlit as st

from explorer.ui import class_room, classroom_page
from explorer.ui.widgets import use_app_navigation

use_app_navigation()
st.title("Classroom", anchor=False)
if class_room.teacher_key():
    classroom_page.teacher()
elif class_room.student():
    classroom_page.student()
else:
    classroom_page.outside()
