"""explorer.plots.remember: the labs' figures are built once per set of inputs and handed out as copies that send
exactly what a freshly built figure sends, and that no caller's change can reach."""
from __future__ import annotations

import json

import numpy as np
import plotly.io as pio

from explorer import maths
from explorer.plots import concepts
from explorer.plots.base import LightFigure
from explorer.plots.remember import MAX_CELLS, remembered_figure


def sent(fig) -> dict:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))   # what st.plotly_chart sends


CURVES = maths.saturation_curves()
CASES = [
    (concepts.saturation_figure, (CURVES, 64), {}),
    (concepts.weights_bars, (["a", "b", "c"], {"raw": np.array([0.2, 0.3, 0.5]), "scaled": np.array([0.3, 0.3, 0.4])}),
     {"title": "t"}),
    (concepts.matrix_heatmap, (np.arange(12.0).reshape(3, 4), ["x", "y", "<b>z</b>"], list("abcd")),
     {"labels_on_top": True, "title": "m"}),
    (concepts.labelled_heatmap, (np.eye(3) / 2, ["the", "cat", "sat"], ["the", "cat", "sat"]), {}),
]


def test_a_remembered_figure_sends_what_a_fresh_one_sends():
    for builder, args, kwargs in CASES:
        fresh = getattr(builder, "__wrapped__", builder)(*args, **kwargs)   # labelled_heatmap is not wrapped itself
        first, again = builder(*args, **kwargs), builder(*args, **kwargs)
        assert isinstance(again, LightFigure) and again is not first
        assert sent(first) == sent(again) == sent(fresh), builder.__name__


def test_it_is_built_once_per_input_and_a_change_to_one_copy_stays_there():
    calls = []

    @remembered_figure
    def bars(values, title=""):
        calls.append(title)
        return concepts.weights_bars.__wrapped__(["a", "b"], {"w": values}, title=title)
    a = bars(np.array([0.25, 0.75]), title="one")
    a.update_layout(title="changed by one caller")                        # builds this copy's own objects
    b = bars(np.array([0.25, 0.75]), title="one")
    assert calls == ["one"] and sent(b)["layout"]["title"]["text"] == "one"
    bars(np.array([0.75, 0.25]), title="one")                              # other values: built anew
    bars(np.array([0.25, 0.75]), title="two")                              # another keyword: built anew
    assert calls == ["one", "one", "two"]


def test_large_or_unkeyable_inputs_are_built_every_time():
    calls = []

    @remembered_figure
    def heat(values, labels=None):
        calls.append(1)
        return concepts.matrix_heatmap.__wrapped__(values)
    big = np.zeros((MAX_CELLS + 1, 1))
    heat(big), heat(big)                                                   # a long text's matrix: not kept
    heat(np.zeros((2, 2)), labels=object()), heat(np.zeros((2, 2)), labels=object())
    assert len(calls) == 4 and len(heat.memo) == 0


def test_the_builders_text_alternative_travels_with_each_copy():
    from explorer.plots import alt

    @remembered_figure
    def described(n):
        return alt.attach(concepts.matrix_heatmap.__wrapped__(np.eye(n)), f"an identity of {n}")
    assert alt.text_alternative(described(2)).summary == alt.text_alternative(described(2)).summary == \
        "an identity of 2"
