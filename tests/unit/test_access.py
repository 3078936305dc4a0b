"""Accessibility of the figures, from hand-made arrays: the text alternatives say what the chart shows, a chart
whose click picks a head offers those heads to the keyboard, every chart goes through ``ui.show_figure``, and
the colour scales stay readable with red–green colour blindness (a simulation, checked by numbers)."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.colors as pcolors
import plotly.graph_objects as go
import pytest

from explorer.access import colour as C
from explorer.access import summary
from explorer.maths import causal_mask
from explorer.plots import alt, base, concepts, effects, head_grids, positions, thumbnails
from explorer.plots import attention as plots
from explorer.plots import classroom as class_plots
from explorer.plots import heads as head_plots

ROOT = Path(__file__).resolve().parents[2]
TOKENS = ["The", "cat", "sat", "on", "it"]


def lopsided() -> np.ndarray:
    """Rows that each peak at a different, known key: row i looks most at key (i + 2) % 5 (weight 0.6)."""
    w = np.full((5, 5), 0.1)
    for i in range(5):
        w[i, (i + 2) % 5] = 0.6
    return w


# ---------------------------------------------------------------------------------------------- summaries

def test_heatmap_summary_names_where_each_query_looks_most_and_its_table_holds_every_cell():
    fig = plots.heatmap(lopsided(), TOKENS, TOKENS, title="<b>layer 1</b> · head 2")
    said = alt.text_alternative(fig).summary
    assert said.startswith("layer 1 · head 2.")       # the title, without plotly's markup
    for i, token in enumerate(TOKENS):
        assert f"{token} → {TOKENS[(i + 2) % 5]} 0.60" in said
    [(name, table)] = alt.text_alternative(fig).tables()
    assert table.shape == (5, 5) and list(table.index) == [f"{i} · {t}" for i, t in enumerate(TOKENS)]
    assert table.iloc[0, 2] == 0.6


def test_heatmap_summary_never_names_a_masked_key():
    w = np.tril(lopsided()) + np.triu(np.full((5, 5), 9.0), 1)   # the hidden upper triangle is the largest
    said = alt.text_alternative(plots.heatmap(w, TOKENS, TOKENS, masked=~causal_mask(5, 5))).summary
    assert "The → The" in said and "9.00" not in said


def test_long_summaries_stop_and_point_to_the_table():
    n = summary.MOST + 6
    said = summary.row_peaks(np.eye(n), [f"t{i}" for i in range(n)], [f"t{i}" for i in range(n)])
    assert f"t{summary.MOST - 1} → " in said and f"t{summary.MOST} →" not in said
    assert "6 more rows (see the table)" in said


def test_query_bars_say_the_top_keys_in_order():
    row = np.array([0.05, 0.5, 0.1, 0.3, 0.05])
    text = alt.text_alternative(plots.query_bars(row, TOKENS, "it", key_positions=[0, 1, 2, 3, 4]))
    assert text.summary == "Where it looks most: cat · 1 0.50, on · 3 0.30, sat · 2 0.10 (of 5)."
    assert list(text.tables()[0][1]["key"][:2]) == ["cat · 1", "on · 3"]


def test_overview_summary_names_the_focused_and_the_sink_heads():
    tiles = np.random.default_rng(0).random((2, 3, 4, 4)).astype(np.float32)
    stats = np.zeros((2, 3, len(head_grids.OVERVIEW_STATS)), dtype=np.float32)
    names = list(head_grids.OVERVIEW_STATS)
    stats[..., names.index("entropy")] = 2.0
    stats[1, 2, names.index("entropy")] = 0.1      # the most focused head
    stats[0, 1, names.index("sink")] = 0.95        # the strongest sink
    said = alt.text_alternative(head_grids.overview(tiles, stats=stats)).summary
    assert "2 layers × 3 heads" in said
    assert re.search(r"Most focused \(lowest entropy, nats\): L1H2 0\.10", said)
    assert re.search(r"sinks\): L0H1 0\.95", said)
    table = alt.text_alternative(head_grids.overview(tiles, stats=stats)).tables()[0][1]
    assert len(table) == 6 and table.loc[5, "entropy"] == pytest.approx(0.1)


def test_head_grid_summary_names_each_heads_strongest_link():
    w = np.stack([lopsided(), np.roll(lopsided(), 1, axis=1)])
    w[1, 3, 0] = 0.9
    said = alt.text_alternative(head_grids.head_grid(w, TOKENS, TOKENS, layer=4)).summary
    assert said.startswith("Layer 4: 2 heads.")
    assert "head 0: The → sat 0.60" in said and "head 1: on → The 0.90" in said


def test_head_map_summary_names_both_ends_of_a_signed_map_and_the_marked_heads():
    values = np.array([[0.1, -0.7], [0.4, 0.0]])
    fig = head_plots.value_per_head(values, diverging=True, value_name="flip", title="Flip per head",
                              marked=np.array([[False, True], [False, False]]), mark_name="flips")
    said = alt.text_alternative(fig).summary
    assert "Highest flip: L1H0 0.40" in said and "Lowest flip: L0H1 -0.70." in said
    assert "Marked flips (1): L0H1." in said


def test_answer_bars_say_the_counts_and_the_right_answer_in_words():
    said = alt.text_alternative(class_plots.answer_bars(["a", "b"], {"a": 1, "b": 3}, correct="b")).summary
    assert said == "Class answers, 4 students: a: 1 (25%); b: 3 (75%). The right answer: b."


def test_figures_without_their_own_text_are_read_from_their_traces():
    """Lab figures are described generically: a heatmap by each row's largest value, bars by the largest, lines
    by their ends; each with a table."""
    fig = concepts.labelled_heatmap(lopsided(), TOKENS, TOKENS, title="Weights")
    text = alt.text_alternative(fig)
    assert text.summary.startswith("Weights.") and "Largest value in each row" in text.summary
    assert "cat → on 0.60" in text.summary and text.tables()[0][1].shape == (5, 5)
    bars = go.Figure(go.Bar(x=["x", "y", "z"], y=[1.0, 3.0, 2.0], name="counts"))
    assert alt.text_alternative(bars).summary == "counts: Largest: y 3.00, z 2.00, x 1.00."
    keys = concepts.weights_bars(["key 1", "key 2", "key 3"], {"raw": [0.2, 0.7, 0.1]})   # bars on positions
    assert "raw: Largest: key 2 0.70, key 1 0.20, key 3 0.10." in alt.text_alternative(keys).summary
    line = positions.line(np.arange(4), {"cosine": [1.0, 0.5, 0.75, 0.2]}, title="Similarity")
    assert "cosine: 1.00 at 0 to 0.20 at 3, highest 1.00 at 0." in alt.text_alternative(line).summary


def test_a_subtitle_is_read_as_its_own_clause_and_a_wrapped_title_as_one_line():
    """A chart's second title line (``<br><sup>``) follows after a dash, or a space where the first line ends a
    sentence; a ``<br>`` that only wraps a long title reads as a space, and tags and entities never reach the words."""
    def said(title: str) -> str:
        return alt.text_alternative(go.Figure(go.Bar(x=["x", "y"], y=[1.0, 2.0]), layout={"title": title})).summary
    assert said("Where the score 1.2 comes from<br><sup>the 3 marked add 0.9</sup>").startswith(
        "Where the score 1.2 comes from — the 3 marked add 0.9. ")
    assert said("Which head?<br><sup>click one</sup>").startswith("Which head? click one. ")
    assert said("Class answers,<br>4 students").startswith("Class answers, 4 students. ")
    assert said("A &lt;b&gt; tag<br><sup></sup>").startswith("A <b> tag. ")
    assert alt.plain(None) == "" and alt.plain("<br><sup>only a subtitle</sup>") == "only a subtitle"


def test_numbers_are_written_for_reading():
    assert [summary.number(v) for v in (np.int64(16), 0.5, np.float64(0.0), 51539607552.0, 0.0004, "x")] == [
        "16", "0.50", "0.00", "5.15e+10", "0.0004", "x"]
    said = summary.series_ends(np.array([16, 32]), np.array([196608.0, 5.1539607552e10]), "cost")
    assert said == "cost: 1.97e+05 at 16 to 5.15e+10 at 32, highest 5.15e+10 at 32."


def test_head_split_says_which_columns_each_head_owns():
    said = alt.text_alternative(positions.head_split(8, 2)).summary
    assert said == ("The 8 columns of Q, K and V split among 2 heads of 4 columns each: head 0: columns 0–3; "
                    "head 1: columns 4–7.")


def test_clickable_heads_are_the_points_that_carry_layer_and_head():
    fig = head_plots.value_per_head(np.zeros((2, 3)))
    assert alt.clickable_heads(fig) == [(l, h) for l in range(2) for h in range(3)]
    grid = head_grids.head_grid(np.stack([lopsided()] * 2), TOKENS, TOKENS, layer=5)
    assert alt.clickable_heads(grid) == [(5, 0), (5, 1)]
    frame = pd.DataFrame({"layer": [0, 1], "head": [1, 0], "x": [0.0, 1.0], "y": [1.0, 0.0]})
    assert alt.clickable_heads(effects.similar_heads(frame)) == [(0, 1), (1, 0)]
    assert alt.clickable_heads(plots.heatmap(lopsided(), TOKENS, TOKENS)) == []   # nothing to pick there
    tiles = np.random.default_rng(0).random((2, 3, 4, 4)).astype(np.float32)
    light = head_grids.overview(tiles, stats=np.ones((2, 3, 5), np.float32), stats_hover="%{customdata[2]}")
    assert isinstance(light, base.LightFigure) and light.light_traces() is not None
    heads = alt.clickable_heads(light)   # read from the figure's dicts: plotly's object tree is still not built
    assert light.light_traces() is not None and heads == [(l, h) for l in range(2) for h in range(3)]
    assert light.data and light.light_traces() is None and alt.clickable_heads(light) == heads   # built: the same


def test_every_chart_goes_through_show_figure():
    """No page or UI module draws a plotly chart itself: ``ui.show_figure`` adds the text alternative to each."""
    sources = [*(ROOT / "pages").glob("*.py"), *(ROOT / "explorer" / "ui").rglob("*.py")]
    direct = [p.name for p in sources if "plotly_chart(" in p.read_text() and p.name != "widgets.py"]
    assert direct == [], f"these draw charts without a text alternative (use ui.show_figure): {direct}"


# ---------------------------------------------------------------------------------------------- colour blindness

SEQUENTIAL = {"Blues", "Viridis", "Oranges"}   # low → high: lightness must change monotonically
DIVERGING = {"RdBu"}                           # two ends around a light middle
KINDS = ("normal", "protanopia", "deuteranopia")


def scales_in_use() -> set[str]:
    """Every named plotly colour scale in the figures' and pages' code."""
    names = set()
    for path in [*(ROOT / "explorer").rglob("*.py"), *(ROOT / "pages").glob("*.py")]:
        text = path.read_text()
        for first, other in re.findall(r'colorscale\s*[=:]\s*"(\w+)"(?:[^"\n]* if [^"\n]* else "(\w+)")?', text):
            names |= {first, other} - {""}
        names |= set(re.findall(r'get_colorscale\("(\w+)"\)', text))
    return names


def sample(name: str, n: int) -> np.ndarray:
    return np.array(pcolors.sample_colorscale(pcolors.get_colorscale(name), list(np.linspace(0, 1, n)),
                                              colortype="tuple"), dtype=np.float64)


def test_the_simulation_matches_the_papers_fixed_points():
    """Machado's dichromat matrices keep white, black and greys (rows sum to 1) and merge red with green: pure
    red and pure green, 85 ΔE apart to normal vision, come within a fraction of that."""
    for kind in ("protanopia", "deuteranopia"):
        assert np.allclose(C.MACHADO[kind].sum(axis=1), 1.0, atol=1e-5)
        grey = np.array([0.5, 0.5, 0.5])
        assert np.allclose(C.simulate(grey, kind), grey, atol=1e-4)
        red, green = np.array([0.8, 0.2, 0.1]), np.array([0.35, 0.55, 0.1])
        assert C.delta_e(C.simulate(red, kind), C.simulate(green, kind)) < 0.5 * C.delta_e(red, green)


def test_every_scale_in_use_is_one_we_checked():
    assert scales_in_use() <= SEQUENTIAL | DIVERGING, f"classify and check: {scales_in_use() - SEQUENTIAL - DIVERGING}"
    assert {"Blues", "Viridis", "RdBu"} <= scales_in_use()


@pytest.mark.parametrize("name", sorted(SEQUENTIAL))
@pytest.mark.parametrize("kind", KINDS)
def test_sequential_scales_stay_ordered_and_distinct(name, kind):
    """14 steps (the thumbnails' shades): L* moves one way all along, each step at least a JND from the next."""
    seen = C.simulate(sample(name, 14), kind)
    lightness = C.lab(seen)[:, 0]
    steps = np.diff(lightness)
    assert np.all(steps < 0) or np.all(steps > 0), np.round(lightness, 1)
    assert C.delta_e(seen[1:], seen[:-1]).min() > C.JND


@pytest.mark.parametrize("kind", KINDS)
def test_the_thumbnail_palette_stays_ordered_and_distinct(kind):
    seen = C.simulate(thumbnails.blues(np.linspace(0, 1, thumbnails.LEVELS)) / 255.0, kind)
    assert np.all(np.diff(C.lab(seen)[:, 0]) < 0)
    assert C.delta_e(seen[1:], seen[:-1]).min() > C.JND


@pytest.mark.parametrize("kind", KINDS)
def test_the_diverging_scale_keeps_its_two_sides_apart(kind):
    """RdBu: lightness rises from each end to the middle, and the two sides stay far apart (they differ along
    blue–yellow, which protanopes and deuteranopes keep): each pair at the same distance from the middle."""
    seen = C.simulate(sample("RdBu", 15), kind)
    lightness = C.lab(seen)[:, 0]
    assert np.all(np.diff(lightness[:8]) > 0) and np.all(np.diff(lightness[7:]) < 0)
    mirrored = C.delta_e(seen[:7], seen[::-1][:7])     # -v against +v
    assert mirrored[:5].min() > 5 * C.JND               # clearly two sides, except right at the light middle
    assert mirrored.min() > C.JND


CATEGORIES = {"raw vs scaled scores": (concepts.RAW_COLOR, concepts.SCALED_COLOR),
              "padding masked vs not": (positions.MASKED_COLOR, positions.UNMASKED_COLOR),
              "intact vs knocked out": (effects.INTACT, effects.KNOCKED),
              "right vs wrong answer": (class_plots.RIGHT, class_plots.WRONG),
              "chosen head vs a flip map": (head_plots.SELECTED, "#f7f7f7")}


@pytest.mark.parametrize("what", sorted(CATEGORIES))
@pytest.mark.parametrize("kind", KINDS)
def test_category_colours_stay_apart(what, kind):
    a, b = (np.array([int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)]) for c in CATEGORIES[what])
    assert C.delta_e(C.simulate(a, kind), C.simulate(b, kind)) > 5 * C.JND
