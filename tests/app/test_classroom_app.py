"""AppTest of the classroom live mode: one AppTest per browser session, all sharing one store (one SQLite file).

Start a class, join it (typed code, join link, hostile nickname), wrong codes and limits, the teacher link leaving
the URL, following the teacher's page and deep link, the locked text, and a class question answered and revealed.
The class stays the teacher's: the roster, removing students, closing the room, wrong codes slowed per address.
"""
import json
import re
from urllib.parse import parse_qsl

import pagetest
import pytest
from pagetest import classroom_page, click, in_order, join, seat_of, session
from streamlit.testing.v1 import AppTest

from explorer.classroom import MAX_ROOMS, MAX_STUDENTS, WRONG_FIRST_WAIT_S, WRONG_FREE_TRIES, normalise_code
from explorer.ui import chart_text
from explorer.ui.live import membership
from explorer.ui.live.room_panels import PICK
from explorer.ui.text import literal

HOSTILE = "<img src=x onerror=alert(1)> **b** $x$"   # within NICK_MAX (40) characters


pytestmark = pytest.mark.usefixtures("fresh_store")   # tests/app/conftest.py


def texts(at: AppTest) -> str:
    return pagetest.texts(at, raw=True)   # raw: the checks look for literal(...) and for unescaped tags


TITLES = {"pages/heatmaps.py": "Attention heatmaps", "pages/lab_softmax.py": "Softmax saturation",
          "pages/flip.py": "Antecedent flip", "pages/write.py": "Watch it write", "pages/geometry.py": "Head geometry",
          "pages/heads_do.py": "What heads do", "pages/atlas.py": "Head atlas"}


def goes_to(student: AppTest, page: str) -> AppTest:
    """The student's next run finds the teacher on ``page``: that run is the teacher's page, in the same session,
    whatever page the student's browser asked for (here the one it had before), and it draws no script."""
    student.run()
    assert not student.exception, student.exception
    assert student.title[0].value.startswith(TITLES[page]), student.title[0].value
    # no script of ours moves the page (Streamlit ran it here); the one script a page may hold is the constant one
    # that makes wide formulas keyboard-focusable (explorer/ui/chart_text.py), beside style rules (a chart's frame)
    assert all(h.proto.body == chart_text._FOCUSABLE_FORMULAS or re.fullmatch(r"<style>[^<]*</style>", h.proto.body)
               for h in student.get("html"))
    assert student.query_params["room"] == seat_of(student).room
    assert student.query_params["me"] == seat_of(student).me
    return student.switch_page(page)   # the browser's address follows (Streamlit's navigation message)


def start() -> tuple[AppTest, str, str]:
    teacher = click(classroom_page(), "Start a class")
    room = normalise_code(teacher.title[1].value)
    key = seat_of(teacher).key
    assert membership.store().is_teacher(room, key)
    assert any(f"room={room}&teacher={key}" in c.value for c in teacher.code)  # the private link, in st.code
    assert literal(f"http://localhost:8501/classroom?join={room}") in texts(teacher)  # the join link, large
    return teacher, room, key


def test_start_join_and_the_teacher_sees_the_nickname_literally():
    teacher, room, _ = start()
    student = join(room, HOSTILE, typed=f" {room[:3].lower()}-{room[3:]} ")   # spaces, dash, lower case
    assert student.query_params["room"] == room and len(student.query_params["me"]) >= 8
    assert "You are in class" in texts(student)
    assert "Following class" in texts(student)
    teacher.run()
    assert "1 student joined" in [s.value for s in teacher.subheader]
    assert literal(HOSTILE) in [m.value for m in teacher.markdown]   # escaped: shown as typed, never as markup
    assert re.search(r"(?<!\\)<img", texts(teacher)) is None   # never an unescaped tag


def test_join_link_fills_in_the_code_and_no_nickname_is_fine():
    _, room, key = start()
    student = classroom_page(join=room)
    assert student.text_input(key="_class_typed").value == room
    click(student, "Join")
    assert "join" not in student.query_params and student.query_params["room"] == room
    assert membership.store().nicknames(room, key) == [membership.NO_NICKNAME]


def test_wrong_codes_give_a_clear_message_and_are_slowed_down():
    student = join("", typed="<b>nope</b>")
    assert "That is not a room code" in student.error[0].value
    for _ in range(membership.FREE_TRIES - 1):
        student.text_input(key="_class_typed").input("ABC-DEF")
        click(student, "Join")
    assert "There is no open room with this code" in student.error[0].value
    student.text_input(key="_class_typed").input("ABC-DEF")
    click(student, "Join")
    assert literal("Too many wrong codes: please wait 10 seconds") in student.error[0].value


def test_limits_are_messages():
    _, room, _ = start()
    for i in range(MAX_STUDENTS):
        membership.store().join(room, f"student-{i:04d}", f"s{i}")
    student = join(room, "late")
    assert "This room is full" in student.error[0].value
    for _ in range(MAX_ROOMS - 1):
        membership.store().create_room()
    teacher = click(classroom_page(), "Start a class")
    assert "as many classrooms as it can" in teacher.error[0].value


def test_teacher_link_moves_the_key_out_of_the_url_and_a_bad_one_says_so():
    _, room, key = start()
    again = session(room=room, teacher=key)
    assert "teacher" not in again.query_params and "room" not in again.query_params
    assert seat_of(again).key == key
    assert "Teaching class" in texts(again)
    bad = session(room=room, teacher="forged")
    assert "teacher" not in bad.query_params
    assert "This teacher link does not open a class" in texts(bad)
    assert seat_of(bad).key is None


def test_a_teacher_link_made_before_the_rename_still_opens_the_class_and_a_key_token_is_left_alone():
    """Links printed before the secret became ``teacher`` carry it as ``key``; the heatmap page's ``key`` (a token
    position) beside a student's room is not taken for one."""
    _, room, key = start()
    old = session(room=room, key=key)
    assert "key" not in old.query_params and "room" not in old.query_params
    assert seat_of(old).key == key and "Teaching class" in texts(old)
    student = join(room, "ada")
    me = student.query_params["me"]
    back = session(room=room, me=me, key="2")
    assert seat_of(back).me == me and seat_of(back).key is None
    assert "teacher link" not in texts(back) and "Following class" in texts(back)


def test_reload_rejoins_as_the_same_student_and_an_ended_class_says_so():
    teacher, room, _ = start()
    student = join(room, "ada")
    me = student.query_params["me"]
    back = session(room=room, me=me)   # a new session (reload, reconnect, server restart) from the URL alone
    assert seat_of(back).me == me and "Following class" in texts(back)
    click(teacher, "End it now")
    assert membership.store().room(room) is None
    gone = session(room=room, me=me)
    assert "The class in this link has ended" in texts(gone) and "room" not in gone.query_params


def test_followers_follow_page_layer_head_and_locked_text_and_can_explore_alone():
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/heatmaps.py").run()
    teacher.slider(key="layer").set_value(3).run()
    teacher.slider(key="head").set_value(5).run()
    teacher.text_area(key="text").input("the cat sat on the mat").run()
    teacher.checkbox(key="opt_hide").check().run()
    assert not teacher.exception
    student = goes_to(student, "pages/heatmaps.py")
    assert student.slider(key="layer").value == 3 and student.slider(key="head").value == 5
    assert student.text_area(key="text").value == "the cat sat on the mat"
    assert student.checkbox(key="opt_hide").value is True
    assert not student.text_area(key="text").disabled
    # the teacher's controls, folded away, their values in the label (the charts' "Show as table" are expanders too)
    [folded] = [e for e in student.expander if "your teacher" in e.label]
    assert folded.label == "layer 3 · head 5 · your teacher's text" and folded.slider(key="layer").value == 3
    assert not [e for e in teacher.expander if "your teacher" in e.label]   # the teacher's own are not folded
    teacher.switch_page("pages/classroom.py").run()
    teacher.toggle(key="_class_lock").set_value(True).run()
    student.run()
    assert student.text_area(key="text").disabled and "the text is locked" in texts(student)
    click(student, "Explore on my own")
    assert not [e for e in student.expander if "your teacher" in e.label]   # exploring: the controls are in view
    student.slider(key="layer").set_value(1).run()
    teacher.switch_page("pages/heatmaps.py").run()
    teacher.slider(key="layer").set_value(4).run()
    student.run()
    assert student.slider(key="layer").value == 1 and not student.text_area(key="text").disabled
    click(student, "Catch up with the teacher")
    assert student.slider(key="layer").value == 4


def test_a_follower_sees_the_score_the_teacher_takes_apart_and_keeps_the_teachers_address():
    """The heatmap page's ``key`` (the breakdown's key token) is the teacher's view like ``query``: it reaches the
    follower's address and page (it was once the teacher link's private parameter, and never did)."""
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/heatmaps.py").run()
    teacher.toggle(key="breakdown").set_value(True).run()
    teacher.selectbox(key="query").set_value(10)
    teacher.selectbox(key="key").set_value(2).run()
    assert not teacher.exception and teacher.query_params["key"] == "2"
    student = goes_to(student, "pages/heatmaps.py")
    assert student.toggle(key="breakdown").value is True
    assert (student.selectbox(key="query").value, student.selectbox(key="key").value) == (10, 2)
    assert "Query **it** (position 10) → key **animal** (position 2)" in texts(student).replace("\\", "")
    shared = {k: v for k, v in teacher.query_params.items() if k not in membership.PRIVATE}
    assert {k: v for k, v in student.query_params.items() if k not in membership.PRIVATE} == shared


def test_a_follower_runs_the_teachers_latest_page_whatever_its_browser_asks():
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/heatmaps.py").run()
    teacher.slider(key="head").set_value(2).run()
    teacher.switch_page("pages/flip.py").run()
    teacher.switch_page("pages/lab_softmax.py").run()   # three pages before the student's next run
    goes_to(student, "pages/lab_softmax.py")
    teacher.switch_page("pages/heatmaps.py").run()   # a fresh page run: the head it had (kept) is the deep link
    student.switch_page("pages/flip.py").run()   # the student's browser asks for another page while following
    goes_to(student, "pages/heatmaps.py")
    assert student.slider(key="head").value == 2
    assert "You are following the teacher" in texts(student)
    click(student, "Explore on my own")
    student.switch_page("pages/flip.py").run()   # exploring alone: the page asked for
    assert student.title[0].value.startswith("Antecedent flip")
    click(student, "Catch up with the teacher")
    assert student.title[0].value.startswith("Attention heatmaps") and student.slider(key="head").value == 2


def labels(at: AppTest) -> list[str]:
    return [b.label for b in at.button]


def class_charts(at: AppTest) -> list[dict]:
    """The class-answers charts on the page (the lab's own charts aside), as plotly JSON."""
    return [spec for chart in at.get("plotly_chart") if "Class answers" in (spec := json.loads(chart.proto.spec))
            .get("layout", {}).get("title", {}).get("text", "")]


def no_count_on(at: AppTest) -> None:
    """Nothing on the page tells how the class voted: no class chart, no text alternative of one, no share."""
    assert not class_charts(at) and "Class answers" not in texts(at), texts(at)
    assert not re.search(r"\d+ \(\d+%\)", texts(at))


def test_class_question_hides_the_counts_until_shown_then_a_second_round_and_the_reveal():
    """Peer Instruction: the students vote alone; neither the teacher's screen (projector view or not) nor a
    student's holds any count until "Show answers"; round 2 is a fresh vote beside round 1; the reveal shows both."""
    teacher, room, _ = start()
    students = [join(room, f"s{i}") for i in range(3)]
    teacher.switch_page("pages/lab_softmax.py").run()
    assert "Show answers" in labels(teacher) and "Reveal to the class" not in labels(teacher)
    assert "0 of 3 answered" in texts(teacher)
    students = [goes_to(student, "pages/lab_softmax.py") for student in students]
    for student, option in zip(students, ["about 1", "about 16", "about 16"]):
        assert "Softmax saturation" in student.title[0].value   # followed the teacher to the lab
        student.radio(key="softmax_answer").set_value(option).run()
        click(student, "Commit my answer")
        assert f"Your answer is in: {literal(option)}" in texts(student)
        assert "Right:" not in texts(student)   # nothing revealed before the teacher reveals
        no_count_on(student)
    students[0].radio(key="softmax_answer").set_value("about 256").run()
    click(students[0], "Commit my answer")   # a new commit replaces the old answer
    # kept by the option's place (about 1, about 16, about 256: #0, #1, #2), the same in every language
    assert membership.store().counts(room, "softmax") == {"#2": 1, "#1": 2}
    teacher.run()
    assert "3 of 3 answered" in texts(teacher)   # the teacher's private view: how many, nothing more
    no_count_on(teacher)
    teacher.toggle(key=membership.PROJECTOR).set_value(True).run()
    no_count_on(teacher)
    assert "answered" not in texts(teacher)   # the projector does not even say how many
    for student in students:
        student.run()
        no_count_on(student)
    click(teacher, "Show answers")   # round 1 closes; its counts, for everyone, without the right answer yet
    [chart] = class_charts(teacher)
    assert chart["data"][0]["y"] == [0, 2, 1] and "right answer" not in json.dumps(chart)
    assert "Revealed to the class" not in texts(teacher)
    for student in students:
        student.run()
        assert class_charts(student)[0]["data"][0]["y"] == [0, 2, 1] and "Right" not in texts(student)
        assert student.radio(key="softmax_answer").disabled
    click(teacher, "Discuss and vote again")
    assert "answered" not in texts(teacher) and "round 2" in texts(teacher)   # the projector view, still on
    teacher.toggle(key=membership.PROJECTOR).set_value(False).run()
    assert "0 of 3 answered" in texts(teacher)
    for student, option in zip(students, ["about 16", "about 16"]):   # the third student does not vote again
        student.run()
        assert f"Your first answer: {literal(option if student is not students[0] else 'about 256')}" in texts(
            student)
        student.radio(key="softmax_r2_answer").set_value(option).run()
        click(student, "Commit my answer")
    assert membership.store().counts(room, "softmax", round=1) == {"#2": 1, "#1": 2}   # kept apart
    assert membership.store().counts(room, "softmax", round=2) == {"#1": 2}
    teacher.run()
    assert "2 of 3 answered" in texts(teacher)
    [chart] = class_charts(teacher)   # only round 1's, shown before; round 2's stay hidden
    assert len(chart["data"]) == 1 and chart["data"][0]["y"] == [0, 2, 1]
    click(teacher, "Show answers")   # the last round: both rounds side by side, and the right answer
    assert "Revealed to the class: the answer is about 16" in texts(teacher)
    [both] = class_charts(teacher)
    assert [bar["y"] for bar in both["data"]] == [[0, 2, 1], [0, 2, 0]]
    assert "about 16<br>(right answer)" in both["data"][0]["x"]
    for student, verdict in zip(students, ["Right", "Right", "Right"]):
        student.run()
        assert verdict in texts(student), texts(student)
        assert [bar["y"] for bar in class_charts(student)[0]["data"]] == [[0, 2, 1], [0, 2, 0]]


# ------------------------------------------------------------------------------ the class stays the teacher's

def remove(teacher: AppTest, *nicknames: str) -> AppTest:
    teacher.multiselect(key=PICK).set_value(list(nicknames)).run()
    return click(teacher, "Remove")


def test_the_teacher_sees_the_roster_and_a_removed_student_leaves_and_must_join_again():
    teacher, room, key = start()
    ada, bob = join(room, "ada"), join(room, "bob")
    bob_id = seat_of(bob).me
    teacher.run()
    assert "2 students joined" in [s.value for s in teacher.subheader]
    assert teacher.multiselect(key=PICK).options == ["ada", "bob"]
    remove(teacher, "bob")
    assert literal("Removed 1 student: bob") in texts(teacher)
    assert "1 student joined" in [s.value for s in teacher.subheader]
    assert not membership.store().joined(room, bob_id)
    bob.run()   # the next poll finds the version moved and reruns: bob is out, and told why
    assert not bob.exception
    assert "your teacher removed you" in texts(bob) and "Following class" not in texts(bob)
    assert seat_of(bob).room is None and "room" not in bob.query_params
    back = session(room=room, me=bob_id)   # the old address (reload, a saved link) does not bring bob back
    assert "your teacher removed you" in texts(back) and seat_of(back).room is None
    ada.run()
    assert "Following class" in texts(ada)   # the others stay
    again = join(room, "bob")   # joining by code again: a new student id, a new seat
    assert "You are in class" in texts(again) and seat_of(again).me != bob_id
    assert sorted(n for _, n in membership.store().roster(room, key)) == ["ada", "bob"]


def test_a_student_who_leaves_explores_alone_and_the_class_goes_on():
    teacher, room, _ = start()
    ada = join(room, "ada")
    assert "You are in class" in texts(ada)
    click(ada, "Leave the class")
    assert not ada.exception and "You are in class" not in texts(ada)
    assert seat_of(ada).room is None and "room" not in ada.query_params and "me" not in ada.query_params
    assert ada.text_input(key="_class_typed") is not None   # the join form is back: the page is a student's own
    teacher.run()
    assert not teacher.exception and membership.store().room(room) is not None   # the class goes on


def test_duplicate_nicknames_are_removed_together():
    teacher, room, key = start()
    for i in range(3):
        membership.store().join(room, f"prank-{i}", "xx")
    join(room, "ada")
    teacher.run()
    assert "xx ×3" in texts(teacher)
    remove(teacher, "xx")
    assert literal("Removed 3 students: xx") in texts(teacher)
    assert membership.store().nicknames(room, key) == ["ada"]


def test_a_closed_room_refuses_new_students_the_class_stays_and_the_projector_shows_no_names():
    teacher, room, _ = start()
    ada = join(room, "ada")
    ada_id = seat_of(ada).me
    teacher.toggle(key="_class_open").set_value(False).run()
    assert not teacher.exception and membership.store().room(room).joinable is False
    assert "Closed to new students" in texts(teacher)
    late = join(room, "late")
    assert "Your teacher has closed this class to new students" in late.error[0].value
    assert seat_of(late).room is None
    back = session(room=room, me=ada_id)   # ada reloads: still in
    assert "Following class" in texts(back)
    teacher.toggle(key=membership.PROJECTOR).set_value(True).run()
    assert "ada" not in texts(teacher) and not teacher.multiselect and "Closed to new students" in texts(teacher)
    teacher.toggle(key=membership.PROJECTOR).set_value(False).run()
    teacher.toggle(key="_class_open").set_value(True).run()
    assert "You are in class" in texts(join(room, "late"))


def test_wrong_codes_are_slowed_per_address_across_sessions(monkeypatch):
    monkeypatch.setattr(membership, "client_address", lambda: "198.51.100.23")
    per_session = membership.FREE_TRIES - 1   # under one session's own limit
    tries = 0
    while tries < WRONG_FREE_TRIES:   # a script opening a new session every few codes
        student = classroom_page()
        for _ in range(min(per_session, WRONG_FREE_TRIES - tries)):
            student.text_input(key="_class_typed").input("ABC-DEF")
            click(student, "Join")
            assert "There is no open room with this code" in student.error[0].value
            tries += 1
    fresh = join("ABC-DEF")   # a brand-new session from the same address is slowed at once
    wait = re.search(r"Too many wrong codes\\: please wait (\d+) seconds", fresh.error[0].value)
    assert wait and 0 <= int(wait.group(1)) <= WRONG_FIRST_WAIT_S, fresh.error[0].value   # the first wait, running
    assert membership.store().code_wait("198.51.100.23") > 0
    monkeypatch.setattr(membership, "client_address", lambda: "198.51.100.24")
    for _ in range(per_session):   # malformed codes are typos, not guesses: the address is not counted
        assert "That is not a room code" in join("", typed="<b>no</b>").error[0].value
    assert membership.store().code_wait("198.51.100.24") == 0
    _, room, _ = start()
    assert "You are in class" in texts(join(room, "ada"))   # another address gets in


def test_one_address_cannot_take_every_seat(monkeypatch):
    monkeypatch.setenv("EXPLORER_SEATS_PER_ADDRESS", "2")
    membership.store.clear()
    monkeypatch.setattr(membership, "client_address", lambda: "203.0.113.9")
    _, room, _ = start()
    for nick in ("p1", "p2"):
        assert "You are in class" in texts(join(room, nick))
    assert "from your network address" in join(room, "p3").error[0].value
    monkeypatch.setattr(membership, "client_address", lambda: "203.0.113.10")
    assert "You are in class" in texts(join(room, "ada"))


def test_the_roster_of_a_class_ended_elsewhere_gives_way_to_the_note():
    teacher, room, key = start()
    join(room, "ada")
    membership.store().close(room, key)   # ended from another tab
    teacher.run()
    assert "The class has ended" in texts(teacher) and seat_of(teacher).key is None


def test_a_follower_sees_the_teachers_generation_with_the_prompt_and_settings_folded():
    teacher, room, _ = start()
    student = join(room)
    teacher.switch_page("pages/write.py").run()
    teacher.number_input(key="new").set_value(2).run()
    teacher.text_area(key="prompt").input("The capital of France is").run()
    assert not teacher.exception
    assert not [e for e in teacher.expander if "your teacher" in e.label]      # the teacher's controls stay open
    student = goes_to(student, "pages/write.py")
    [folded] = [e for e in student.expander if "your teacher's prompt" in e.label]
    assert folded.label == "layer 0 · head 0 · your teacher's prompt"
    assert folded.text_area(key="prompt").value == "The capital of France is"   # inside the fold, the teacher's
    assert folded.number_input(key="new").value == 2


def test_predict_the_next_token_pools_typed_words_with_the_options_they_name():
    teacher, room, _ = start()
    students = [join(room, f"s{i}") for i in range(3)]
    teacher.switch_page("pages/write.py").run(timeout=300)
    teacher.toggle(key="predict").set_value(True).run(timeout=300)
    assert "Show answers" in [b.label for b in teacher.button]
    students = [goes_to(student, "pages/write.py") for student in students]
    for student, word in zip(students, [" PARIS", "<b>Lyon</b>", "<b>Lyon</b>"]):
        student.run(timeout=300)
        student.radio(key="write_next_answer").set_value("Another word…").run(timeout=300)
        student.text_input(key="write_next_typed").input(word).run(timeout=300)
        click(student, "Commit my answer")
    assert membership.store().counts(room, "write_next") == {"#3": 1, "<b>Lyon</b>": 2}   # “␣Paris”: option 4
    assert f"Your answer is in: “{literal('<b>Lyon</b>')}”" in texts(students[1])
    teacher.run(timeout=300)
    assert "3 of 3 answered" in texts(teacher) and not class_charts(teacher)   # no count before "Show answers"
    next(b for b in teacher.button if b.label == "Show answers").click().run(timeout=300)
    bars = class_charts(teacher)[0]["data"][0]
    assert bars["x"][4:] == ["“&lt;b&gt;Lyon&lt;/b&gt;”"] and bars["y"][4:] == [2]   # after the options, as text
    next(b for b in teacher.button if b.label == "Reveal the answer").click().run(timeout=300)
    for student, verdict in zip(students, ["Right", "Not quite", "Not quite"]):
        student.run(timeout=300)
        assert verdict in texts(student), texts(student)
    assert students[2].text_input(key="write_next_typed").value == "<b>Lyon</b>"   # the typed word stays shown


def test_a_follower_sees_the_teachers_head_map_with_its_controls_folded():
    teacher, room, _ = start()
    student = join(room)
    teacher.switch_page("pages/geometry.py").run(timeout=300)
    teacher.slider(key="layer").set_value(2).run(timeout=300)
    teacher.text_area(key="text").input("the red kite and the red kite").run(timeout=300)
    assert not teacher.exception and not [e for e in teacher.expander if "map " in e.label]
    student = goes_to(student, "pages/geometry.py")
    [folded] = [e for e in student.expander if e.label.startswith("layer ")]
    assert folded.label == "layer 2 · head 0 · map PCA · colour by position in the sentence · your teacher's text"
    assert folded.slider(key="layer").value == 2 and not student.exception
    assert folded.text_area(key="text").value == "the red kite and the red kite"   # the teacher's text, drawn


def test_a_follower_whose_browser_sends_an_old_value_gets_the_teachers_again_but_not_for_parameters_of_its_own():
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/heatmaps.py").run()
    teacher.slider(key="layer").set_value(3).run()
    student = goes_to(student, "pages/heatmaps.py")
    assert student.slider(key="layer").value == 3
    student.slider(key="layer").set_value(1).run()   # a value the browser held before the teacher's view arrived
    assert student.slider(key="layer").value == 3 and not student.exception   # the teacher's view, applied again
    fixes = seat_of(student).fixes[1]
    # a parameter the page writes but the teacher's view lacks is not straying: no rerun for it
    wanted = seat_of(student).wanted
    assert "weighting" in wanted
    seat_of(student).wanted = {k: v for k, v in wanted.items() if k != "weighting"}
    student.run()
    assert seat_of(student).fixes[1] == fixes and student.slider(key="layer").value == 3


def test_each_change_of_the_teacher_reaches_the_class_as_one_version():
    """A changed parameter and a new page are each shared once (when the teacher's run ends, with every parameter
    its widgets wrote), so followers run once per change."""
    teacher, room, _ = start()
    versions = [membership.store().version(room)]
    teacher.switch_page("pages/heatmaps.py").run()
    versions.append(membership.store().version(room))
    teacher.slider(key="head").set_value(4).run()
    versions.append(membership.store().version(room))
    teacher.switch_page("pages/write.py").run(timeout=300)   # writes its layer and head after its first controls
    versions.append(membership.store().version(room))
    assert [b - a for a, b in zip(versions, versions[1:])] == [1, 1, 1]
    assert membership.store().view(room)[1]["page"] == "pages/write.py"


def test_a_page_that_stops_early_is_still_shared_and_followed():
    """The Masks lab stops at its unanswered question (st.stop): the teacher's view is shared all the same."""
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/lab_masks.py").run(timeout=300)
    assert not teacher.exception and membership.store().view(room)[1]["page"] == "pages/lab_masks.py"
    student.run(timeout=300)
    assert student.title[0].value.startswith("Masks") and not student.exception


def test_a_view_stored_by_a_run_stopped_just_after_is_shared_again_when_the_teacher_returns(monkeypatch):
    """A newer run can stop the teacher's run at any read or write of its session state, including just after the
    store took the new view and before the run noted it as shared. The teacher's return to the view before must
    then be shared again (it was not: the class stayed on the page between, seen in the browser follow test)."""
    teacher, room, _ = start()
    student = join(room, "ada")
    for page in ["pages/heatmaps.py", "pages/flip.py", "pages/heatmaps.py"]:   # the flip's parameters stay
        teacher.switch_page(page).run()   # in the address, so the next return to the heatmaps is this view
    store = membership.store()
    before = store.view(room)[1]
    real = type(store).set_view

    def stored_then_stopped(self, room_, key_, view):
        real(self, room_, key_, view)
        if view.get("page") == "pages/flip.py":
            monkeypatch.setattr(type(store), "set_view", real)
            raise RuntimeError("the run stops here, as a newer run would stop it")
    monkeypatch.setattr(type(store), "set_view", stored_then_stopped)
    teacher.switch_page("pages/flip.py").run()
    assert store.view(room)[1]["page"] == "pages/flip.py"
    teacher.switch_page("pages/heatmaps.py").run()
    assert not teacher.exception
    assert store.view(room)[1] == before   # the same view as before the flip, shared again
    goes_to(student, "pages/heatmaps.py")


def test_a_followers_rerun_from_another_pages_address_ends_on_the_teachers_address():
    """A follower's rerun at a version it has already applied starts from whatever address the rerun carries: the
    browser's last message, or the session's last run, which holds another page's parameters when the teacher
    moved on quickly. Seen in the browser follow test: followers on the flip page kept a parameter of the heatmap
    page and stayed off the teacher's view. The run must end on the teacher's address exactly."""
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/flip.py").run()
    student = goes_to(student, "pages/flip.py")
    wanted = dict(student.query_params)
    knockouts = session()
    knockouts.switch_page("pages/heads_do.py").run()   # the address of a page the flip page has no widget of
    elsewhere = {**knockouts.query_params, "room": wanted["room"], "me": wanted["me"]}
    assert "ablation" in elsewhere and "ablation" not in wanted
    student.query_params = elsewhere   # a rerun that carries the address of another page
    student.run()
    assert not student.exception and student.title[0].value.startswith("Antecedent flip")
    assert student.query_params == wanted


def test_a_follower_is_sent_the_teachers_address_even_when_its_session_believes_the_browser_has_it(monkeypatch):
    """A rerun that the server starts for a follower begins from Streamlit's record of the session's last finished
    script thread, which can already name the teacher's new address while the browser was last sent another page's
    (the flip page's, here). Seen in the browser follow test: followers on the heatmap page with the flip page's
    parameters, because the run found the address already set and sent nothing. The run must send it."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    sent = []
    real = ScriptRunner._enqueue_forward_msg

    def enqueue(self, msg):
        real(self, msg)
        if msg.WhichOneof("type") == "page_info_changed":
            sent.append(dict(parse_qsl(msg.page_info_changed.query_string)))
    monkeypatch.setattr(ScriptRunner, "_enqueue_forward_msg", enqueue)
    teacher, room, _ = start()
    student = join(room, "ada")
    teacher.switch_page("pages/heatmaps.py").run()
    student = goes_to(student, "pages/heatmaps.py")
    teacher.switch_page("pages/flip.py").run()
    student = goes_to(student, "pages/flip.py")
    teacher.switch_page("pages/heatmaps.py").run()
    wanted = {**{k: str(v) for k, v in membership.store().view(room)[1]["params"].items()},
              "room": room, "me": student.query_params["me"]}
    student.query_params = dict(wanted)   # the session's belief: the teacher's new address, never sent yet
    sent.clear()
    goes_to(student, "pages/heatmaps.py")
    assert sent and sent[-1] == dict(student.query_params) == wanted   # the browser was told, last


def test_a_followers_clickable_chart_is_the_classs_one_drawn_once_and_not_clickable():
    """While following, a chart a click acts on (the flip map picks a head) is drawn once for the class and
    replayed: the teacher picks the head, as with the folded controls; the figure is the teacher's."""
    teacher, room, _ = start()
    student = join(room)
    teacher.switch_page("pages/flip.py").run(timeout=300)
    assert not teacher.exception
    student = goes_to(student, "pages/flip.py")

    def flip_map(at):
        [chart] = [c for c in at.get("plotly_chart") if "flip" in json.loads(c.proto.spec)["layout"]["title"]["text"]
                   .lower()]
        return chart.proto, json.loads(chart.proto.spec)
    mine, theirs = flip_map(student), flip_map(teacher)
    assert list(theirs[0].selection_mode) and not list(mine[0].selection_mode)   # only the teacher's takes clicks
    theirs[1]["layout"].pop("meta", None)   # the teacher's click counter (widgets._counting_clicks)
    assert mine[1]["data"] == theirs[1]["data"] and mine[1]["layout"]["title"] == theirs[1]["layout"]["title"]


def test_a_followers_folded_controls_name_each_choice_as_its_widget_does():
    """The fold's label says what a choice is set to in the words its widget uses (not its key in the link), and
    the atlas's "Examples of" is folded beside the examples it picks."""
    teacher, room, _ = start()
    student = join(room)
    teacher.switch_page("pages/atlas.py").run()
    teacher.slider(key="layer").set_value(16).run()
    teacher.radio(key="atlas_ex").set_value("induction").run()
    assert not teacher.exception
    student = goes_to(student, "pages/atlas.py")
    labels = [e.label for e in student.expander]
    assert "layer 16 · head 0" in labels and "examples of weight on the token after a copy" in labels, labels
    # in the page's order: the card's heading, then the fold with its picker, then the examples it picks
    order = [e.label if e.type == "expander" else str(getattr(e, "value", ""))
             for e in in_order(student.main)]
    card = order.index("Head L16H0")
    fold = order.index("examples of weight on the token after a copy")
    assert card < fold < next(i for i, t in enumerate(order) if t.startswith("**Top examples:"))
    assert student.radio(key="atlas_ex").value == "induction"

