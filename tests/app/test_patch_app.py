"""AppTest of the Patch activations page on SmolLM2's indirect-object pair: the preview and, once the question is
answered or skipped, the exact grid drawn with its text alternative; the question's right answer is a recomputation
from the exact grid; a click target opens the head that restores most on the heatmap page; the student's own pair
refused in one sentence (unequal token lengths, an answer of several tokens), hostile text shown as text, hostile
link values replaced with a note. Exact runs are the page's shared jobs: computed once in this process."""
import json
from functools import partial
from urllib.parse import parse_qs

import numpy as np
from pagetest import array, figures, in_app, open_page, texts, unfolded

from explorer.patching import READY, shared
from explorer.plots import alt, room

run = partial(open_page, "pages/patch.py")
IOI = READY["ioi"]


def _exact(level: str, direction: str = "denoise") -> np.ndarray:
    from explorer.ui import cached
    return shared.exact(cached.get_model(IOI.model), IOI, level, direction).wait().values


def test_the_ready_pair_asks_first_then_draws_the_exact_grid():
    at = run()
    drawn = figures(at)
    assert any(t.startswith("Preview (attribution patching)") for t in drawn)
    assert not any(t.startswith("Residual stream patched") for t in drawn)   # folded until answered
    grid = _exact("residual")
    first = int(np.flatnonzero(grid[:, -1] >= 0.5)[0])                     # recomputed: the first layer across half
    bands = {"layers 0–7": range(0, 8), "layers 8–14": range(8, 15), "layers 15–21": range(15, 22),
             "layers 22–29": range(22, 30)}
    right = next(name for name, layers in bands.items() if first in layers)
    options = [o for r in at.radio for o in r.options]
    assert right in options and "From which layer on" in texts(at)
    at = unfolded(at)
    exact = next(spec for title, spec in figures(at).items() if title.startswith("Residual stream patched"))
    assert np.allclose(array(exact["data"][0]["z"]).reshape(grid.shape), grid, atol=1e-6)
    ticks = exact["layout"]["xaxis"]["ticktext"]
    assert ticks[9] == "John ·9" and ticks[1] == "Mary ·1"                  # tokens as tick text, positions apart
    said = texts(at)
    assert f"Restoring most: L{first} · 13 “ to”" in said or "Restoring most: L" in said
    assert "30 layers × 14 positions" in said
    assert "Preview against exact" in said and "Pearson correlation" in said


def test_heads_map_links_the_head_that_restores_most_to_the_heatmap_page():
    at = in_app("pages/patch.py")
    at.session_state["pt_level"] = "heads"
    at.session_state["pt_ask"] = "0"
    at.run()
    assert not at.exception
    heads = _exact("heads")
    best = np.unravel_index(int(np.argmax(heads)), heads.shape)
    links = [{k: v[0] for k, v in parse_qs(e.proto.query_string).items()} for e in at.get("page_link")
             if "heatmaps" in e.proto.page]
    assert links and links[0]["layer"] == str(best[0]) and links[0]["head"] == str(best[1])
    assert links[0]["text"] == IOI.clean


def test_noising_at_one_position_is_picked_by_token_and_drawn_white_at_the_clean_run():
    at = run(pt_level="heads_at", pt_dir="noise", pt_pos="9", pt_ask="0")
    picker = at.selectbox(key="pt_pos")
    assert picker.value == 9 and picker.options[9].startswith("John") and picker.options[13].startswith("to")
    heat = next(spec for title, spec in figures(at).items() if title.startswith("Each head"))["data"][0]
    assert heat["zmid"] == 1.0 and heat["zmin"] < 1.0 < heat["zmax"]   # noising starts from the clean run (1)
    preview = next(spec for title, spec in figures(at).items() if title.startswith("Preview (attribution"))
    lines = preview["layout"]["title"]["text"].split("<br>")
    assert len(lines) >= 2 and all(room.text_px(line, room.TITLE_PX) * room.BOLD <= room.PHONE_WIDTH - room.TITLE_PAD
                                   for line in lines)


def test_both_directions_each_get_their_preview_and_their_check_against_exact():
    """With "both", each direction has its own attribution preview and its own agreement with exact patching (the
    noising preview used to be missing, and the check compared denoising only)."""
    at = run(pt_dir="both", pt_ask="0")
    titles = [json.loads(e.proto.spec)["layout"]["title"]["text"] for e in at.get("plotly_chart")]
    previews = [t for t in titles if t.startswith("Preview (attribution patching)")]
    assert len(previews) == 2 and previews[0].endswith("<sup>denoising</sup>") and previews[1].endswith(
        "<sup>noising</sup>")
    assert [alt.plain(t) for t in previews] == [   # read out: what was patched, then its direction as a clause
        "Preview (attribution patching): Residual stream patched at each layer and position — denoising",
        "Preview (attribution patching): Residual stream patched at each layer and position — noising"]
    checks = [t for t in titles if t.startswith("Preview against exact")]
    assert checks == ["Preview against exact<br><sup>denoising</sup>", "Preview against exact<br><sup>noising</sup>"]
    said = texts(at)
    assert said.count("Pearson correlation") == 2
    from explorer.patching.attribution import compare
    from explorer.ui import cached
    from explorer.words import numbers
    for direction in ("denoise", "noise"):   # each check is its own direction's, recomputed here
        exact = shared.exact(cached.get_model(IOI.model), IOI, "residual", direction).wait()
        approx = shared.preview(cached.get_model(IOI.model), IOI, direction).wait().residual
        r = compare(exact, np.asarray(approx, dtype=np.float64)).pearson
        assert f"Pearson correlation {numbers.number(r, 2)}" in said, (direction, r)   # the page's own rounding


def test_own_pair_of_unequal_lengths_is_refused_in_one_sentence():
    at = run(pair="own", text=IOI.clean, text_b=IOI.clean.replace("John gave", "Christopherson gave"))
    said = texts(at)
    assert "tokens and the corrupted text" in said and "Choose words" in said
    assert not figures(at) and len(at.warning) == 1


def test_an_answer_of_several_tokens_is_refused_and_hostile_text_stays_text():
    at = run(pair="own", text=IOI.clean, text_b=IOI.corrupted, pt_ans="<b>Mary</b>**x**")
    assert len(at.warning) == 1 and not figures(at)
    raw = texts(at, raw=True)
    assert "<b>" not in raw.replace("\\<b\\>", "") and "the metric compares two single tokens" in texts(at)


def test_hostile_link_values_fall_back_with_nothing_broken():
    at = run(pair="<script>", pt_level="'; drop", pt_dir="sideways", pt_pos="-9", pt_rl="999", pt_ask="maybe")
    assert at.session_state["pair"] == "ioi" and at.session_state["pt_level"] == "residual"
    assert any(t.startswith("Preview") for t in figures(at))


def test_the_next_lesson_step_is_prepared_while_the_class_is_on_this_one():
    """Lesson 7's path step (4) prepared while the class is on step 3: its exact run is then a finished shared
    job, keyed as the page asks for it (plan ``patch`` of explorer.ui.prefetch)."""
    import dataclasses

    from explorer.lessons import catalogue
    from explorer.ui import prefetch

    lesson = next(x for x in catalogue({})[0] if x.title == "Where is the answer carried?")
    lesson = dataclasses.replace(lesson, source="test:prepared-patch")   # a key no other test prepared
    prefetch.next_step(lesson, 2)
    prefetch.PREPARED.peek((lesson.source, 3)).wait(600)
    job = shared.started(IOI.model, IOI, "path", "denoise", receiver=(23, 3), via="qkv")
    assert job is not None and job.done.is_set() and job.error is None


def test_the_encoder_pair_asks_at_its_query_word_up_to_the_metric_layer():
    """MiniLM's flip pair reads attention from "it" at L3H1: the residual question asks at "it" (the last position,
    [SEP], cannot move that attention), its options cover layers 0-3 only, its answer recomputed from the grid."""
    flip = READY["flip"]
    at = open_page("pages/patch.py", model=flip.model, pair="flip")
    from explorer.ui import cached
    grid = shared.exact(cached.get_model(flip.model), flip, "residual", "denoise").wait().values
    c = shared.contrast(cached.get_model(flip.model), flip).wait()
    assert c.tokens["clean"][c.query_rows[0]].strip() == "it" and c.last_layer == flip.layer == 3
    column = grid[: c.last_layer + 1, c.query_rows[0]]
    options = list(at.radio(key="patch_where_answer").options)
    said = texts(at)
    assert "at the query word (“it”)" in said and "at the last position" not in said
    assert options == ["layer 0", "layer 1", "layer 2", "layer 3", "no layer restores half of it"]
    crossed = np.flatnonzero(column >= 0.5)
    right = f"layer {int(crossed[0])}" if crossed.size else "no layer restores half of it"
    assert right in options
