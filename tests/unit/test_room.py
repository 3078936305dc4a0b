"""plots/room.py: label widths from Source Sans's advance widths, and the margins built from them."""
import math

from explorer.plots import room


def test_text_width_sums_advance_widths_and_reads_entities_as_their_characters():
    # "it": i 222 + t 302 = 524 thousandths of an em; at 12 px, 6 % heavier: 0.524 * 12 * 1.06
    assert math.isclose(room.text_px("it"), 6.66528, rel_tol=1e-12)
    # "&lt;" is drawn as "<" (472), not as four characters; a CJK character counts one em
    assert math.isclose(room.text_px("&lt;"), 0.472 * 12 * 1.06, rel_tol=1e-12)
    assert math.isclose(room.text_px("日", size=10), 10.6, rel_tol=1e-12)
    assert room.text_px("\u200b\u200c") == 0   # the invisible marks that keep repeated tokens apart


def test_heatmap_margins_hold_the_widest_labels_and_the_colour_bar():
    # left: widest query label 6.66528 + 28 -> 35; top: sin 60° * 6.66528 + 20 = 25.77 -> 26; right: colour bar
    assert room.heatmap_margins(["it"], ["it"], show_scale=True) == {"l": 35, "r": 84, "t": 26}
    # without a colour bar the right margin holds half the last key label: "because" is
    # b 538 e 478 c 446 a 486 u 524 s 400 e 478 = 3350 -> 42.612 px; 21.31 + 12 -> 34
    wide = room.heatmap_margins(["a", "because"], ["x", "because"], show_scale=False)
    assert wide == {"l": 71, "r": 34, "t": 57}   # 42.612 + 28 = 70.6; 0.866 * 42.612 + 20 = 56.9


def test_bars_and_colour_bar_margins():
    assert room.bar_label_margin(["it", "because"]) == 63   # 42.612 + 20
    assert room.colorbar_margin("x") == 72                  # a short title: the bar's own 72 px
    assert room.colorbar_margin("because") == 103           # 42.612 + 60


def test_cell_labels_fit_their_cells_shrinking_then_cutting_then_leaving_out():
    texts = ["it", "refrigerator", "the", "Überraschungsei"]
    shown, size = room.cell_labels(texts, 200)   # room enough: whole, at the largest size
    assert shown == texts and size == 11
    shown, size = room.cell_labels(["it", "was", "tired"], 20)   # a smaller size fits them whole
    assert shown == ["it", "was", "tired"] and 8 <= size < 11
    assert room.widest(shown, size) <= 18
    shown, size = room.cell_labels(texts, 24)   # at the smallest size the long ones are cut, with "…"
    assert size == 8 and shown[0] == "it" and shown[1].endswith("…") and "refrigerator".startswith(shown[1][:-1])
    assert all(room.text_px(t, size) <= 22 for t in shown)
    assert room.cell_labels(["refrigerator"], 6) == ([""], 8)   # not even "r…" fits: left out


def test_a_title_wraps_before_the_word_that_would_pass_the_width():
    # at 14 px bold: "it it" = (222 + 302) * 2 + 200 = 1248 thousandths of an em -> 1.248 * 14 * 1.06 * 1.04 = 19.26
    # px; "it it it" = 1972 -> 30.4 px. Within 20.5 px two "it" fit on a line, a third goes to the next
    assert room.wrapped_title("it it it", width=20.5) == ("it it<br>it", 2)
    assert room.wrapped_title("it<br>it it it", width=20.5) == ("it<br>it it<br>it", 3)   # given breaks stay
    assert room.wrapped_title("refrigerator it", width=5) == ("refrigerator<br>it", 2)  # a wide word stays whole
    assert room.title_margin(2) == 64 and room.title_margin(3) == 84
