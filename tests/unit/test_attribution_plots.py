"""Figures of "Which words mattered?" on hand-made arrays: each row scaled to its own maximum, top words outlined,
a missing method said in words, and every word and label drawn as literal text."""
import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.plots import attribution as plots

HOSTILE = ["<script>x</script>", "the", "**b**", "the"]


def test_rows_are_scaled_to_their_own_maximum_and_tops_outlined():
    scores = np.array([[0.1, 0.4, 0.2, 0.0], [-3.0, 1.5, 0.0, 0.75], [np.nan] * 4])
    fig = plots.method_rows(scores, HOSTILE, ["a", "<b>g</b>", "flow"], [[1, 2], [0], []])
    z = np.asarray(fig.data[0].z, dtype=float)
    assert z[0] == pytest.approx([0.25, 1.0, 0.5, 0.0]) and z[1] == pytest.approx([-1.0, 0.5, 0.0, 0.25])
    assert np.isnan(z[2]).all() and fig.data[0].text[2][0] == "not computed"
    assert fig.data[0].text[0][1] == "#1" and fig.data[0].text[0][2] == "#2" and fig.data[0].text[1][0] == "#1"
    assert [(s.x0 + 0.5, s.y0 + 0.5) for s in fig.layout.shapes] == [(1, 0), (2, 0), (0, 1)]
    assert list(fig.layout.xaxis.ticktext) == ["&lt;script&gt;x&lt;/script&gt;", "the", "**b**", "the"]
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2, 3]                 # two "the" stay apart
    assert "&lt;b&gt;" in fig.layout.yaxis.ticktext[1] and "<script>" not in str(fig.data[0].customdata)
    go.Figure(fig.to_dict())                                              # validates


def test_agreement_and_faithfulness_figures():
    rho = np.array([[1.0, 0.5, np.nan], [0.5, 1.0, np.nan], [np.nan] * 3])
    fig = plots.agreement_matrix(rho, rho, ["a", "b", "flow"])
    assert fig.data[0].text[0][1] == "+0.50" and fig.data[0].text[2][2] == "–"
    moved = np.array([[-1.0, -2.0, -2.5], [np.nan] * 3, [0.1, 0.0, -0.2]])
    fig = plots.faithfulness_rows(moved, ["a", "flow", "random order"], (1, 2, 3), "log-odds <x>")
    assert fig.data[0].text[0] == ["-1.00", "-2.00", "-2.50"] and fig.data[0].text[1][0] == "not computed"
    assert fig.data[0].zmin == -2.5 and fig.data[0].zmax == 2.5
    assert "log-odds &lt;x&gt;" in fig.data[0].customdata[0][0]
    go.Figure(fig.to_dict())
