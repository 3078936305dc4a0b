"""A session's place in a class is one object (``explorer.ui.live.seat.ClassSeat``): taking a seat and leaving
forget who it was and what it took from the room, and keep what outlives a class."""
from explorer.ui.live.seat import ClassSeat


def test_a_new_seat_is_outside_any_class_and_would_follow():
    seat = ClassSeat()
    assert (seat.room, seat.key, seat.me, seat.follow, seat.locked) == (None, None, None, True, False)
    assert seat.notes == [] and seat.questions == {} and seat.notes is not ClassSeat().notes


def test_entering_as_a_student_after_teaching_forgets_the_teacher_and_the_room_it_followed():
    seat = ClassSeat()
    seat.enter("AAAAAA", key="k" * 12)
    seat.applied, seat.seen, seat.published, seat.locked = 3, 3, {"page": "pages/flip.py"}, True
    seat.enter("BBBBBB", me="m" * 12)
    assert (seat.room, seat.key, seat.me) == ("BBBBBB", None, "m" * 12)
    assert (seat.applied, seat.seen, seat.published, seat.locked, seat.follow) == (None, None, None, False, True)


def test_leaving_forgets_the_room_and_keeps_the_join_guard_and_the_notes():
    seat = ClassSeat()
    seat.enter("AAAAAA", me="m" * 12)
    seat.follow, seat.wrong = False, (2, 10.0)
    seat.notes.append("The class has ended.")
    seat.leave()
    assert (seat.room, seat.me, seat.follow) == (None, None, True)
    assert seat.wrong == (2, 10.0) and seat.notes == ["The class has ended."]
