"""The class's sentences as figures: one colour scale, a word's rows lined up on it, text as literal text, and a
text alternative that names the sentences."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from explorer.plots import sentences as plots
from explorer.plots.alt import text_alternative

HOSTILE = "<b>bold</b> <script>alert(1)</script>"


def sent(fig) -> dict:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))


def test_small_multiples_share_one_scale_and_validate():
    tiles = [np.eye(3, dtype=np.float32) * 0.5, np.full((2, 2), 0.25, np.float32), np.eye(4, dtype=np.float32)]
    toks = [["a", "b", "<b>"], ["c", "d"], ["e", "f", "g", "h"]]
    fig = plots.small_multiples(tiles, toks, [1, 2, 3], title=HOSTILE, said="In 2 of 3 sentences…",
                                sentences=["a b", "c d", HOSTILE])
    out = sent(fig)
    assert len(out["data"]) == 3 and {d["coloraxis"] for d in out["data"]} == {"coloraxis"}
    assert out["layout"]["coloraxis"]["cmax"] == 1.0 and out["layout"]["coloraxis"]["cmin"] == 0.0
    assert "<b>" not in json.dumps(out["layout"]["title"]) and "&lt;script&gt;" in out["layout"]["title"]["text"]
    assert "&lt;b&gt;" in out["layout"]["xaxis"]["ticktext"]
    go.Figure(fig.to_dict())   # plotly's validators accept every property
    alt = text_alternative(fig)
    assert alt.summary == "In 2 of 3 sentences…"
    assert alt.tables()[0][1].iloc[2, 1] == HOSTILE   # the table holds the sentence as written


def test_word_rows_line_up_on_the_word_and_name_the_top_key():
    rows = [np.array([0.1, 0.7, 0.2], np.float32), np.array([0.2, 0.1, 0.1, 0.6], np.float32)]
    toks = [["the", "dog", "it"], ["<i>x</i>", "so", "it", "goes"]]
    fig = plots.word_rows(rows, toks, queries=[2, 2], tops=[1, 3], numbers=[4, 1], word="it", title="t", said="s")
    out = sent(fig)["data"][0]
    z = np.array(out["z"], dtype=float) if isinstance(out["z"], list) else None
    assert out["x"] == [-2, -1, 0, 1]   # two tokens before "it", one after
    assert out["text"][0] == ["the", "dog", "it", ""] and out["text"][1][0] == "&lt;i&gt;x&lt;/i&gt;"
    assert sent(fig)["layout"]["yaxis"]["ticktext"] == ["4: → “dog”", "1: → “goes”"]
    if z is not None:
        assert np.isnan(z[0, 3]) and z[1, 3] == np.float32(0.6)
    go.Figure(fig.to_dict())
    table = text_alternative(fig).tables()[0][1]
    assert list(table.iloc[:, 2]) == ["dog", "goes"] and list(table.iloc[:, 3]) == [0.7, 0.6]


def test_word_rows_fit_a_phone_and_keep_every_token_whole_in_the_hover():
    """Fifteen columns of long words: on a 390 px phone every cell's label (at the figure's text size) fits its
    cell, so no two overlap; the hover and the table still hold each token whole."""
    from explorer.plots import room

    words = ["refrigerator", "grandmother's", "unacceptable", "protesters", "it", "contained", "yesterday"]
    toks = [words[i:] + words[:i] for i in range(4)]
    queries = [t.index("it") for t in toks]
    rows = [np.full(len(t), 1 / len(t), np.float32) for t in toks]
    fig = plots.word_rows(rows, toks, queries, tops=[0, 0, 0, 0], numbers=[1, 2, 3, 4], word="it")
    out = sent(fig)
    trace, margin = out["data"][0], out["layout"]["margin"]
    cell = (room.PHONE_WIDTH - margin["l"] - margin["r"]) / len(trace["x"])
    size = trace["textfont"]["size"]
    shown = [t for line in trace["text"] for t in line]
    assert all(room.text_px(t, size) <= cell - 2 for t in shown)
    assert "refrigerator" not in shown and any(t.endswith("…") for t in shown)   # cut, not overlapping
    assert sorted(t for line in trace["customdata"] for t in line if t) == sorted(w for t in toks for w in t)
    assert out["layout"]["yaxis"]["ticktext"][0] == "1: → “refrigera…”"   # the top key cut, whole in the table
    assert list(text_alternative(fig).tables()[0][1].iloc[:, 2])[0] == "refrigerator"


def test_head_across_puts_the_odd_ones_first_and_says_so():
    from explorer.sentences.batch import ClassAttention

    def made(words, top):   # [CLS] words [SEP]; "it" (token 2) puts 0.9 on ``top``
        n = len(words) + 2
        w = np.full((1, 1, n, n), 0.1 / (n - 1), np.float32)
        for q in range(n):
            w[0, 0, q, q] = 0.9
        w[0, 0, 2, 2], w[0, 0, 2, top] = 0.1 / (n - 1), 0.9
        return ["[CLS]", *words, "[SEP]"], np.array([True, *[False] * len(words), True]), \
            (-1, *range(len(words)), -1), tuple(words), w
    parts = [made(["dog", "it", "ran"], 1), made(["cat", "it", "sat"], 3), made(["cow", "it", "ate"], 1)]
    fields = [tuple(p[k] for p in parts) for k in range(5)]   # tokens, special, word ids, words, weights
    ca = ClassAttention("m", False, tuple(" ".join(p[3]) for p in parts), *fields)
    fig = plots.head_across(ca, 0, 0, "it")
    assert sent(fig)["layout"]["yaxis"]["ticktext"] == ["2: → “sat”", "1: → “dog”", "3: → “cow”"]
    assert text_alternative(fig).summary.startswith("In 2 of 3 sentences, “it” looks most at the token just before.")
    grid = plots.head_across(ca, 0, 0, "")   # no word: one tile per sentence
    assert len(sent(grid)["data"]) == 3
