"""plots/patching.py's maps: white where patching changed nothing in either direction, titles that fit a phone."""
import numpy as np

from explorer.plots import patching as plots
from explorer.plots import room


def _scale(fig) -> tuple[float, float, float]:
    heat = next(t for t in fig.data if t.type == "heatmap")
    return heat.zmin, heat.zmid, heat.zmax


def test_a_noising_map_is_white_at_the_clean_run_and_a_denoising_map_at_the_corrupted():
    # noising starts from the clean run (1): a head whose corrupted copy changes nothing reads 1 and must be white;
    # one that takes 0.7 of the answer away reads 0.3 (blue side), one that overshoots to 1.4 sits 0.4 on the red side
    kept = np.array([[1.0, 0.3], [1.4, 1.0]])
    assert _scale(plots.heads(kept, title="t", value_name="kept", centre=1.0)) == (0.0, 1.0, 2.0)
    grid = plots.layer_positions(kept, ["a", "b"], title="t", value_name="kept", centre=1.0)
    assert _scale(grid) == (0.0, 1.0, 2.0)
    # a cell 1.5 from the centre widens the scale both ways, the centre stays white
    assert _scale(plots.heads(np.array([[1.0, -0.5]]), title="t", value_name="kept", centre=1.0)) == (-0.5, 1.0, 2.5)
    # denoising starts from the corrupted run (0): white at 0, as before
    restored = np.array([[0.0, 0.6], [-0.2, 0.1]])
    assert _scale(plots.heads(restored, title="t", value_name="restored")) == (-1.0, 0.0, 1.0)


def test_a_long_title_is_wrapped_to_a_phone_with_room_above_the_plot():
    title = "Preview (attribution patching)<br>Residual stream patched at each layer and position<br>denoising"
    fig = plots.layer_positions(np.zeros((2, 2)), ["a", "b"], title=title, value_name="restored")
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) == 3 and lines[0] == "Preview (attribution patching)" and lines[-1] == "denoising"
    assert all(room.text_px(line, room.TITLE_PX) * room.BOLD <= room.PHONE_WIDTH - room.TITLE_PAD for line in lines)
    assert fig.layout.margin.t == room.title_margin(3) and fig.layout.title.yanchor == "top"
    long = plots.heads(np.zeros((2, 2)), title="Each head's output patched into L23H3's all three only and more words "
                       "still<br>noising", value_name="kept", centre=1.0)
    assert long.layout.title.text.count("<br>") == 2 and long.layout.margin.t == room.title_margin(3)
