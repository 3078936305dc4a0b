"""The class report (explorer.classroom.report): CSV rows, share right per round and the shift, checked by hand;
hostile text from the class stays text (CSV formulas, HTML)."""
import csv
import io

from explorer.classroom import Asked
from explorer.classroom.report import (
    CSV_COLUMNS,
    QuestionReport,
    csv_text,
    points,
    recap,
    round_line,
    summary_html,
)


def question(correct="a", round_=2, state="revealed", typed=False, options=("a", "b", "c")):
    return Asked("q", "Which **word**?", options, correct, typed, round_, state)


def test_share_right_and_shift_by_hand():
    # round 1: 3 of 5 chose "a" (right) -> 60%; round 2: 4 of 5 -> 80%; shift +20 points
    r = QuestionReport(question(), ({"a": 3, "b": 2}, {"a": 4, "c": 1}))
    assert r.voters(1) == 5 and r.voters(2) == 5
    assert r.share_right(1) == 0.6 and r.share_right(2) == 0.8
    assert abs(r.shift - 0.2) < 1e-12 and points(r.shift) == "+20 points"
    assert round_line(r, 1) == "3 of 5 right (60%)" and round_line(r, 2) == "4 of 5 right (80%)"
    # fewer voters in round 2: 1 of 4 (25%) -> 2 of 3 (67%): +42 points (0.6667 - 0.25 = 0.4167)
    fewer = QuestionReport(question(), ({"a": 1, "b": 3}, {"a": 2, "b": 1}))
    assert points(fewer.shift) == "+42 points" and round_line(fewer, 2) == "2 of 3 right (67%)"
    worse = QuestionReport(question(), ({"a": 2}, {"a": 1, "b": 1}))   # 100% -> 50%
    assert points(worse.shift) == "-50 points"
    one = QuestionReport(question(round_=1), ({"a": 1, "b": 1},))
    assert one.shift is None and points(one.shift) == "–" and round_line(one, 2) == "no second round"
    unknown = QuestionReport(question(correct=None, round_=1, state="open"), ({"a": 2},))
    assert unknown.share_right(1) is None and round_line(unknown, 1) == "2 votes · voting still open"
    assert round_line(QuestionReport(question(round_=1), ({},)), 1) == "no votes"


def test_csv_has_every_option_of_every_round_and_keeps_formulas_as_text():
    r = QuestionReport(question(typed=True), ({"a": 3, "=HYPERLINK(1)": 1}, {"b": 2, "a": 1}))
    rows = list(csv.reader(io.StringIO(csv_text([r]))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[1:] == [
        ["Which **word**?", "1", "a", "3", "yes"], ["Which **word**?", "1", "b", "0", "no"],
        ["Which **word**?", "1", "c", "0", "no"], ["Which **word**?", "1", "'=HYPERLINK(1)", "1", "no"],
        ["Which **word**?", "2", "a", "1", "yes"], ["Which **word**?", "2", "b", "2", "no"],
        ["Which **word**?", "2", "c", "0", "no"]]
    assert csv_text([]) == ",".join(CSV_COLUMNS) + "\n"


def test_the_printable_summary_escapes_and_holds_the_numbers():
    hostile = Asked("q", "<script>alert(1)</script>", ("<b>x</b>", "y"), "y", True, 2, "revealed")
    r = QuestionReport(hostile, ({"y": 1, "<b>x</b>": 3}, {"y": 3, "<img src=x>": 1}))
    page = summary_html([r], room="K7M-2QX", when="2026-12-03 09:00")
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page and "&lt;img src=x&gt;" in page
    assert "1 of 4 right (25%)" in page and "3 of 4 right (75%)" in page and "+50 points" in page
    assert "@media print" in page and "Class K7M-2QX" in page
    assert "No class questions were asked" in summary_html([], room="K7M-2QX", when="now")


def test_a_students_recap_lists_the_lessons_questions_their_answers_and_the_right_ones():
    questions = [Asked("q1", "Rows sum to?", ("1", "2"), "1", False, 2, "revealed"),
                 Asked("q2", "Mask?", ("0", "1"), "0", False, 1, "open"),
                 Asked("other", "Not this lesson's", ("a", "b"), None, False, 1, "open")]
    mine = {"q1": {1: "2", 2: "1"}, "other": {1: "a"}}
    lines = recap(questions, mine, ["q1", "q2", "gone"])
    assert [(x.prompt, x.said, x.correct, x.right) for x in lines] == [
        ("Rows sum to?", {1: "2", 2: "1"}, "1", True), ("Mask?", {}, "0", None)]
    assert recap(questions, {"q1": {1: "2"}}, ["q1"])[0].right is False
