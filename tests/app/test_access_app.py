"""The keyboard head box and the chart tables through Streamlit's AppTest: typing a head does what a click on the
chart does, and a name that is not a head of the chart changes nothing and says why (the browser test
drives the same boxes with the keyboard alone)."""
from pagetest import open_page


def test_typing_a_head_in_the_overview_box_opens_it():
    at = open_page("pages/heatmaps.py")
    assert (at.slider(key="layer").value, at.slider(key="head").value) == (0, 0)
    at.text_input(key="overview_head").set_value("L2H3").run()
    assert not at.exception
    assert (at.slider(key="layer").value, at.slider(key="head").value) == (2, 3)
    assert at.text_input(key="overview_head").value == ""   # emptied, ready for the next head
    at.text_input(key="grid_head").set_value("l2 h5").run()   # the layer grid offers its own layer's heads
    assert (at.slider(key="layer").value, at.slider(key="head").value) == (2, 5)


def test_a_name_that_is_not_a_head_of_the_chart_changes_nothing_and_says_why():
    at = open_page("pages/heatmaps.py")
    for typed in ("L9H0", "L-1H2", "cat"):   # no layer 9 in the encoder; negative; not a head at all
        at.text_input(key="overview_head").set_value(typed).run()
        assert (at.slider(key="layer").value, at.slider(key="head").value) == (0, 0)
        assert any("is not a head of this chart" in c.value for c in at.caption), typed


def test_compare_map_box_adds_the_typed_head():
    at = open_page("pages/compare.py", heads="L0H0,L1H1")
    at.text_input(key="stat_map_head").set_value("L4H5").run()
    assert not at.exception
    assert "L4H5" in at.multiselect(key="heads").value

