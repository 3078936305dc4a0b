"""The lessons on Home and on the Lessons page: start one with a class or alone, its steps and handout, and your own
lesson (edit, reorder, download, open a file). Every text from a lesson file is shown as literal text."""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError, pretty_code
from explorer.classroom.sentences import PROMPT_MAX
from explorer.lessons import Lesson, LessonError, catalogue, dump, find
from explorer.lessons.computed import COMPUTED, step_model
from explorer.lessons.handout import handout_html
from explorer.lessons.pages import STEP_PAGES, asks_own
from explorer.lessons.translations import untranslated, untranslated_sentence
from explorer.sitemap import table
from explorer.ui import cached
from explorer.ui.live import homework_panel, lesson_bar, membership, own_lesson, sentences_panel
from explorer.ui.text import literal
from explorer.ui.widgets import page_link
from explorer.words import numbers
from explorer.words.i18n import _, ngettext

LESSONS_PAGE = table.LESSONS.file


def _slug(lesson: Lesson) -> str:
    return lesson.source.replace(":", "-") or "lesson"


def _start_buttons(lesson: Lesson, key: str, primary: bool, as_homework: bool = False) -> None:
    if as_homework:
        st.text_input(_("Ask each student for a sentence too (optional): what should they write?"),
                      key=f"{key}_hw_sentence", max_chars=PROMPT_MAX, placeholder=_(sentences_panel.DEFAULT_PROMPT))
    with st.container(horizontal=True, gap="small"):
        st.button(_("Start with a class"), icon=":material/groups:", key=f"{key}_class", on_click=lesson_bar.start,
                  args=(lesson, True), type="primary" if primary else "secondary",
                  help=_("Opens a class (students join with its code) and step 1; the class follows each step."))
        st.button(_("Run it alone"), icon=":material/person:", key=f"{key}_alone", on_click=lesson_bar.start,
                  args=(lesson, False), help=_("The same steps and questions, without a class."))
        if as_homework:
            st.button(_("Set as homework"), icon=":material/home_work:", key=f"{key}_homework",
                      on_click=homework_panel.set_homework, args=(lesson, f"{key}_hw_sentence"),
                      help=_("A link and a code: each student runs the lesson alone, and their answers reach your "
                             "report."))


def _steps_and_minutes(lesson: Lesson) -> str:
    return ngettext("{n} step, {minutes} min", "{n} steps, {minutes} min", len(lesson.steps)).format(
        n=len(lesson.steps), minutes=numbers.number(lesson.minutes))


def _untranslated(lesson: Lesson) -> None:
    if untranslated(lesson):
        st.caption(":material/translate: " + untranslated_sentence())


def home_section() -> None:
    """Home's first section: the lessons, each with its start buttons (one click to a running lesson)."""
    lessons, errors = catalogue()
    st.subheader(":material/assignment: " + _("Lessons: ready to run with a class"), anchor=False)
    st.caption(_("Each lesson walks through the pages below in order, with a question for the class at every step "
                 "and notes only you see. Handouts and your own lessons are on the Lessons page."))
    columns = st.columns(max(1, min(3, len(lessons))))
    for i, lesson in enumerate(lessons):
        with columns[i % len(columns)], st.container(border=True, key=f"lesson_card_{_slug(lesson)}"):
            st.markdown(f"**{literal(lesson.title)}** · {_steps_and_minutes(lesson)}")
            st.caption(literal(lesson.about))
            _untranslated(lesson)
            _start_buttons(lesson, f"_home_{_slug(lesson)}", primary=i == 0)
    if errors:
        st.caption(":material/warning: " + ngettext(
            "{n} lesson file has an error and cannot run: see the Lessons page.",
            "{n} lesson files have an error and cannot run: see the Lessons page.", len(errors)).format(n=len(errors)))
    page_link(LESSONS_PAGE, _("All lessons, handouts and your own lesson"), icon=":material/arrow_forward:")


def _steps_table(lesson: Lesson) -> None:
    for n, step in enumerate(lesson.steps, 1):
        ask = (_("the page's own question") if step.page_question else
               literal(step.question.prompt) if step.question else
               _("measured on {model}: {about}").format(model=literal(step_model(step)),
                                                        about=literal(_(COMPUTED[step.computed].about)))
               if step.computed else _("no question"))
        page = literal(_(step.page_title))
        st.markdown(f"{n}. **{literal(step.title)}** · {page} · "
                    + _("{minutes} min").format(minutes=numbers.number(step.minutes)) + f"  \n   :material/quiz: {ask}")


def handout(lesson: Lesson, key: str) -> None:
    """Download the handout (with the join link and QR code when this session teaches a class): a page of its own,
    opened and printed from the browser (no preview in the app: the app draws no raw HTML)."""
    room = membership.code() if membership.teacher_key() else None
    url, shown = (membership.join_url(room), pretty_code(room)) if room else (None, None)

    def page() -> bytes:   # made when the button is pressed: a computed question may need its model loaded first
        asked = {i: cached.lesson_question(lesson, i) for i, step in enumerate(lesson.steps) if step.computed}
        return handout_html(lesson, url, shown, asked).encode()

    st.download_button(_("Handout (HTML, prints as a page)"), page if any(s.computed for s in lesson.steps)
                       else page(), file_name=f"{_slug(lesson)}-handout.html",
                       mime="text/html", key=f"{key}_handout", icon=":material/print:", on_click="ignore")


def errors_list(errors: list[LessonError]) -> None:
    for err in errors:
        st.error(literal(err), icon=":material/error:")


def catalogue_section() -> None:
    lessons, errors = catalogue()
    errors_list(errors)
    for i, lesson in enumerate(lessons):
        with st.expander(f"{lesson.title} · {_steps_and_minutes(lesson)}", expanded=i == 0,
                         icon=":material/assignment:"):
            st.caption(literal(lesson.about))
            _untranslated(lesson)
            key = f"_lessons_{_slug(lesson)}"
            _start_buttons(lesson, key, primary=i == 0, as_homework=True)
            _steps_table(lesson)
            handout(lesson, key)
            st.button(_("Copy it to my own lesson"), key=f"{key}_copy", icon=":material/content_copy:",
                      on_click=own_lesson.adopt, args=(lesson,))


# ---------------------------------------------------------------------------------------------- homework

def _begin(code: str, me: str | None) -> None:
    """Callback: the student starts (or goes on with) the homework ``code``, alone, where they were."""
    try:
        info = homework_panel.open_code(code)
        lesson = find(info.source)
        if lesson is None:
            raise ClassroomError(_("This homework's lesson is no longer on this server: please tell your teacher."))
        step = homework_panel.join(info, st.session_state.get("_hw_nick", ""), me)
    except ClassroomError as err:
        st.session_state["_hw_error"] = str(err)
        return
    lesson_bar.start(lesson, with_class=False, step=step)


def homework_section() -> None:
    """The Lessons page's homework: a student's link or code opens it (a nickname is optional), a teacher's link
    adopts it; every homework this session set shows its link, progress, report and End."""
    code, me, key = homework_panel.from_url()
    if code and key:
        homework_panel.adopt_teacher_link(code, key)
    elif not code and not homework_panel.mine():
        with st.expander(_("Homework from your teacher? Type its code"), icon=":material/home_work:"):
            st.text_input(_("Homework code"), key="_hw_typed", max_chars=20, placeholder=_("e.g. K7M-2QX"))
    code = code or st.session_state.get("_hw_typed")
    if code and not key:
        _entry(code, me)
    for code, key in list(homework_panel.set_by_me().items()):
        homework_panel.teacher_panel(code, key)


def _entry(code: str, me: str | None) -> None:
    running = homework_panel.mine()
    if running and running["code"] == homework_panel.normalised(code):   # already running it in this session
        return
    error = st.session_state.pop("_hw_error", None)
    checked = st.session_state.get("_hw_checked")
    if not checked or checked[0] != code:   # each code is looked up (and a wrong one counted) once, not every rerun
        try:
            checked = (code, homework_panel.open_code(code))
        except ClassroomError as err:
            checked = (code, str(err))
        st.session_state["_hw_checked"] = checked
    info = checked[1]
    if isinstance(info, str):
        st.error(literal(error or info), icon=":material/error:")
        return
    with st.container(border=True, key="_hw_entry"):
        st.markdown(":material/home_work: " + ngettext(
            "**Homework: {title}** · {n} step, alone, at your own pace. Answer each question once; the answer shows "
            "right after.", "**Homework: {title}** · {n} steps, alone, at your own pace. Answer each question once; "
            "the answer shows right after.", info.steps).format(title=literal(info.title), n=info.steps))
        if error:
            st.warning(literal(error))
        st.text_input(_("Nickname (optional: only your teacher sees it)"), key="_hw_nick", max_chars=40)
        st.button(_("Start the homework") if not me else _("Go on with my homework"), icon=":material/play_arrow:",
                  key="_hw_start", type="primary", on_click=_begin, args=(info.code, me))


# ---------------------------------------------------------------------------------------------- your own lesson

def _sync(uid: int, name: str) -> None:
    step = next(s for s in own_lesson.own()["steps"] if s["uid"] == uid)
    step[name] = st.session_state[f"_own_{uid}_{name}"]


def _field(fields: dict, name: str, widget, label: str, **kw) -> None:
    key = f"_own_{fields['uid']}_{name}"
    st.session_state.setdefault(key, fields[name])
    widget(label, key=key, on_change=_sync, args=(fields["uid"], name), **kw)


def _step_editor(step: dict, n: int, last: int) -> None:
    uid = step["uid"]
    where = step["page"]   # a plain variable: the extractor would take a literal key here for a message
    page = _(STEP_PAGES[where].title)
    with st.expander(f"{n}. {step['title']} · {page} · "
                     + _("{minutes} min").format(minutes=numbers.number(step['minutes']))):
        with st.container(horizontal=True, gap="small"):
            st.button(_("Up"), icon=":material/arrow_upward:", key=f"_own_{uid}_up", on_click=own_lesson.move,
                      args=(uid, -1), disabled=n == 1)
            st.button(_("Down"), icon=":material/arrow_downward:", key=f"_own_{uid}_down", on_click=own_lesson.move,
                      args=(uid, 1), disabled=n == last)
            st.button(_("Remove"), icon=":material/delete:", key=f"_own_{uid}_remove", on_click=own_lesson.remove,
                      args=(uid,))
        if step["params"]:
            st.caption(_("View:") + " " + literal(", ".join(f"{k} = {v}" for k, v in step["params"].items())))
        _field(step, "title", st.text_input, _("Title"), max_chars=120)
        _field(step, "minutes", st.number_input, _("Planned minutes"), min_value=0.5, max_value=25.0, step=0.5)
        _field(step, "notes", st.text_area, _("Your notes (only on your screen)"), max_chars=2000)
        if asks_own(step["page"], step["params"]):
            _field(step, "page_question", st.checkbox, _("Ask the page's own question"))
        if not step["page_question"]:
            _field(step, "prompt", st.text_input, _("Class question (optional)"), max_chars=400)
            _field(step, "options", st.text_area, _("Options, one a line (2 to 6)"), height=100)
            _field(step, "answer", st.text_input, _("The right option (as written above)"), max_chars=120)
            _field(step, "explain", st.text_area, _("Explanation shown at the reveal"), max_chars=1000)


PENDING = "_own_pending"   # (bytes, file name) of a lesson file just uploaded


def _upload() -> None:
    data = st.session_state.get("_own_upload")
    if data is not None:
        st.session_state[PENDING] = (data.getvalue(), data.name)


def _open_pending() -> None:
    """An uploaded lesson file becomes the own lesson, or one literal message and nothing changes."""
    pending = st.session_state.pop(PENDING, None)
    if pending is None:
        return
    data, name = pending
    try:
        own_lesson.load(data, name)
    except LessonError as err:
        st.error(literal(err), icon=":material/error:")
        return
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("_own_") and k[5:6].isdigit()]:
        del st.session_state[key]   # the step editors' widgets show the file's values, not the old ones
    st.session_state["_own_title"] = own_lesson.own()["title"]
    st.success(_("Opened {name}.").format(name=literal(name)), icon=":material/check_circle:")


def own_section() -> None:
    """Build, edit, download and open your own lesson."""
    st.toggle(_("Build my own lesson while exploring: every page gets “Add this view as a step”"),
              value=own_lesson.building(), key="_own_toggle",
              on_change=lambda: own_lesson.set_building(st.session_state["_own_toggle"]))
    _open_pending()
    fields = own_lesson.own()
    st.session_state.setdefault("_own_title", fields["title"])
    st.text_input(_("Lesson title"), key="_own_title", max_chars=120,
                  on_change=lambda: fields.update(title=st.session_state["_own_title"]))
    steps = fields["steps"]
    for n, step in enumerate(steps, 1):
        _step_editor(step, n, len(steps))
    try:
        made = own_lesson.lesson()
    except LessonError as err:
        made = None
        if steps:
            st.warning(literal(err), icon=":material/warning:")
        else:
            st.caption(_("No steps yet: switch on the toggle above, open a page, set it up, and press “Add this "
                         "view as a step”."))
    if made is not None:
        st.download_button(_("Download the lesson file"), dump(made).encode(), file_name=own_lesson.FILE,
                           mime="application/toml", key="_own_download", icon=":material/download:",
                           on_click="ignore")
        _start_buttons(made, "_own_start", primary=False)
        handout(made, "_own")
    st.file_uploader(_("Open a lesson file (.toml)"), type=["toml"], key="_own_upload", on_change=_upload,
                     max_upload_size=1)
