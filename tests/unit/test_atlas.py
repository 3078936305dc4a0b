"""The head atlas: measures worked by hand, the pass on tiny models, the store's round trip and its checks on
damaged files, the cards, the label verdicts and the "Which head is this?" lineup."""
import json

import numpy as np
import pytest

from explorer.atlas import cards, fortunes, head_stats, labels, question, shipped, survey
from explorer.words.i18n import language


def _uniform_causal(n: int) -> np.ndarray:
    w = np.tril(np.ones((n, n)))
    return w / w.sum(1, keepdims=True)


def test_measures_on_a_uniform_causal_head_by_hand():
    # tokens a b a b (ids 5 7 5 7), the last one a comma; every row uniform over the keys it sees
    v = head_stats.per_query(_uniform_causal(4)[None, None], np.array([5, 7, 5, 7]),
                           np.array([False, False, False, True]))
    at = {k: x[0, 0] for k, x in v.items()}
    # queries 1, 2, 3 see 2, 3, 4 keys: entropy ln 2, ln 3, ln 4; every key gets 1/2, 1/3, 1/4
    np.testing.assert_allclose(at["entropy"], np.log([2, 3, 4]))
    for name in ("first", "previous", "self"):
        np.testing.assert_allclose(at[name], [1 / 2, 1 / 3, 1 / 4])
    # query 2 (a): its twin is key 0 (duplicate), the token after it key 1 (induction); query 3 (b): key 1, key 2
    np.testing.assert_allclose(at["duplicate"], [np.nan, 1 / 3, 1 / 4])
    np.testing.assert_allclose(at["induction"], [np.nan, 1 / 3, 1 / 4])
    np.testing.assert_allclose(at["punctuation"], [0, 0, 1 / 4])            # only query 3 sees the comma
    np.testing.assert_allclose(at["distance"], [(1 + 0) / 2, (2 + 1 + 0) / 3, (3 + 2 + 1 + 0) / 4])
    np.testing.assert_allclose(at["top_first"], [1, 1, 1])                  # ties: the first key wins
    np.testing.assert_allclose(at["top_induction"], [np.nan, 0, 0])
    total, count = head_stats.sums(v)
    assert count["duplicate"][0, 0] == 2 and count["entropy"][0, 0] == 3
    assert head_stats.means(total, count)["self"][0, 0] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)


def test_one_hot_heads_score_one_on_their_own_measure():
    ids = np.array([1, 2, 3, 1, 2, 3])
    n = len(ids)
    prev, sink, ind = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    for q in range(n):
        prev[q, max(q - 1, 0)] = 1
        sink[q, 0] = 1
        ind[q, q - 2 if q >= 3 else 0] = 1        # from the second copy: the token after the twin (q − 3 + 1)
    v = head_stats.per_query(np.stack([prev, sink, ind])[None], ids, np.zeros(n, bool))
    total, count = head_stats.sums(v)
    m = head_stats.means(total, count)
    np.testing.assert_allclose(m["top_previous"][0], [1, 0.2, 0.2])          # head 2's q=1, q=2: key 0 is q−1 once
    np.testing.assert_allclose(m["top_first"][0], [0.2, 1, 0.4])
    np.testing.assert_allclose(m["induction"][0], [0, 0, 1])                # over queries 3, 4, 5
    np.testing.assert_allclose(m["entropy"][0], [0, 0, 0], atol=1e-12)


def test_twin_masks_and_punctuation():
    dup, ind = head_stats.twin_masks(np.array([4, 4, 9, 4]))
    assert dup.tolist() == [[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0]]
    # query 3 (4): keys after a 4 and before it: 1 (after 0), 2 (after 1); query 1: key ≥1 and < 1: none
    assert ind.tolist() == [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]]
    assert head_stats.is_punctuation(" ,") and head_stats.is_punctuation("…") and not head_stats.is_punctuation("a.")
    assert not head_stats.is_punctuation("  ")


def test_corpus_cookies_windows_and_avoid_list():
    text = "A wise word.\n\t-- Someone\n%\nThe war of words.\n%\n%\nSecond  line\nwrapped.\n"
    assert fortunes.cookies(text) == ["A wise word. -- Someone", "The war of words.", "Second line wrapped."]
    assert not fortunes.suitable("The war of words.") and fortunes.suitable("A wise word. -- Someone")
    assert not fortunes.suitable("#### #### ####  ||| ###")                     # ASCII art
    count = lambda t: len(t.split())   # noqa: E731
    out = fortunes.windows(["one two", "three four five", "six", "seven eight nine ten"], count, 5, 100)
    assert out == ["one two\nthree four five", "six\nseven eight nine ten"]
    assert fortunes.windows(["one two", "three four five", "six"], count, 5, 4) == ["one two\nthree four five"]


def test_typed_over_characters_read_as_a_terminal_shows_them():
    """The cookies' typewriter habits (from Debian's files): an underlined word, an underlined letter, an accent
    typed over its letter; a control character left over keeps a cookie out."""
    assert fortunes.overstruck('"Well, ____\b\b\b\bSOMEbody\'s out') == '"Well, SOMEbody\'s out'
    assert fortunes.overstruck("for all _\bn.") == "for all n."
    assert fortunes.overstruck("Ren'\be Descartes") == "René Descartes"
    assert fortunes.overstruck("fl'\bechettes") == "fléchettes"
    assert fortunes.overstruck("a\b\bb") == "b"   # a backspace at the line's start stays there
    assert fortunes.cookies("smells *_____\b\b\b\b\bawful*.\n%\n") == ["smells *awful*."]
    assert not fortunes.suitable("A bell \x07 rings.") and fortunes.suitable("A bell rings.")


def test_the_shipped_windows_hold_no_control_character():
    """What the atlas shows a class is text: no backspace or bell (drawn as a box where a font lacks its picture)."""
    import unicodedata

    from explorer.model.registry import EMBEDDED_DECODER
    atlas = shipped.load(EMBEDDED_DECODER)
    found = {i: c for i, text in atlas.texts.items() for c in text if unicodedata.category(c) == "Cc" and c != "\n"}
    assert len(atlas.texts) > 100 and found == {}


@pytest.fixture(scope="module")
def tiny_atlas(tiny_loaded, tmp_path_factory):
    windows = ["the cat sat on the mat . the cat sat", "a dog , a dog ; the end .", "on the mat the cat"]
    surveys = [survey.survey(tiny_loaded(f), windows) for f in ("bert", "llama")]
    folder = tmp_path_factory.mktemp("atlas")
    shipped.save(surveys, windows, "tiny source", "tiny licence", folder)
    return surveys, folder, windows


def test_survey_on_tiny_models_matches_its_own_measures(tiny_atlas, tiny_loaded):
    from explorer.attention.result import extract

    surveys, folder, windows = tiny_atlas
    s = surveys[1]
    assert s.n_windows == 3 and s.kind == "decoder"
    # the means are the query-weighted average of each window's own measures
    total, count = {}, {}
    for text in windows:
        r = extract(tiny_loaded("llama"), text)
        punct = np.array([head_stats.is_punctuation(t) for t in r.tokens])
        t, c = head_stats.sums(head_stats.per_query(r.weights, np.array(r.token_ids), punct))
        for k in t:
            total[k], count[k] = total.get(k, 0) + t[k], count.get(k, 0) + c[k]
    expect = head_stats.means(total, count)
    for k in head_stats.MEASURES:
        np.testing.assert_allclose(s.means[k], expect[k], rtol=1e-6, atol=1e-7)
    # the kept examples are the largest per-query values of their measure, with the row's heaviest keys
    ex = s.examples["previous"]
    r = extract(tiny_loaded("llama"), windows[int(ex["window"][0, 0, 0])])
    q = int(ex["query"][0, 0, 0])
    assert ex["value"][0, 0, 0] == pytest.approx(r.weights[0, 0, q, q - 1], abs=1e-6)
    assert int(ex["keys"][0, 0, 0, 0]) == int(np.argmax(r.weights[0, 0, q]))


def test_survey_stops_at_its_token_bound(tiny_loaded):
    s = survey.survey(tiny_loaded("llama"), ["the cat sat on the mat"] * 5, max_tokens=10)
    assert s.n_windows == 2 and s.n_tokens >= 10


def test_store_round_trip(tiny_atlas):
    surveys, folder, windows = tiny_atlas
    for s in surveys:
        a = shipped.load(s.model, folder)
        assert a.problems == [] and a.source == "tiny source" and a.licence == "tiny licence"
        for k in a.measures:
            np.testing.assert_array_equal(a.means[k], s.means[k])
        np.testing.assert_array_equal(a.examples["induction"]["keys"], s.examples["induction"]["keys"])
        assert a.tokens == s.tokens and a.texts == dict(enumerate(windows))
    assert shipped.load("no-such-model", folder) is None


def test_a_damaged_measure_is_left_out_with_one_sentence(tiny_atlas, tmp_path):
    surveys, folder, windows = tiny_atlas
    s = surveys[1]
    data = dict(np.load(folder / shipped.file_of(s.model)))
    data["mean_previous"] = data["mean_previous"] + 5        # a weight share above 1: damaged
    del data["mean_entropy"]
    np.savez(tmp_path / shipped.file_of(s.model), **data)
    (tmp_path / shipped.CORPUS).write_bytes((folder / shipped.CORPUS).read_bytes())
    a = shipped.load(s.model, tmp_path)
    assert "previous" not in a.measures and "entropy" not in a.measures and "first" in a.measures
    with language("en"):
        said = [str(p) for p in a.problems]
    assert len(said) == 2 and all("is damaged" in p for p in said)


def test_a_file_that_cannot_be_read_gives_one_sentence(tiny_atlas, tmp_path):
    surveys, folder, windows = tiny_atlas
    (tmp_path / shipped.file_of(surveys[0].model)).write_bytes(b"not a zip")
    (tmp_path / shipped.CORPUS).write_text("{broken", encoding="utf-8")
    a = shipped.load(surveys[0].model, tmp_path)
    assert a.means == {} and len(a.problems) == 2


def test_cards_context_examples_and_link(tiny_atlas):
    surveys, folder, windows = tiny_atlas
    a = shipped.load(surveys[1].model, folder)
    shown = cards.context([str(i) for i in range(40)], 30, (0, 29), width=2)
    assert [p for p, _t, _r in shown] == [0, -1, 28, 29, 30, 31, 32]
    assert [r for _p, _t, r in shown][:2] == ["key", "gap"] and dict((p, r) for p, _t, r in shown)[30] == "query"
    found = cards.examples(a, "previous", (0, 0))
    assert found and found[0].value >= found[-1].value
    link = cards.heatmap_link(a, found[0], (0, 0))
    assert link["text"] == windows[found[0].window] and link["query"] == str(found[0].query)
    table = cards.heads_table(a)
    assert len(table) == a.n_layers * a.n_heads and list(cards.filtered(table, "self")["self"]) == sorted(
        table["self"], reverse=True)
    assert cards.filtered(table, "self", layers=(1, 1))["layer"].eq(1).all()


def _synthetic(prev, first, ind) -> shipped.Atlas:
    shape = np.asarray(prev).shape
    means = {"top_previous": np.asarray(prev, dtype=np.float32), "top_first": np.asarray(first, dtype=np.float32),
             "top_induction": np.asarray(ind, dtype=np.float32),
             "entropy": np.arange(np.prod(shape), dtype=np.float32).reshape(shape)}
    return shipped.Atlas("m", "decoder", *shape, 100, 3, means, {}, {}, {}, {}, "", "")


def test_label_verdicts():
    prev = np.array([[0.9, 0.1, 0.05], [0.2, 0.3, 0.0]])
    first = np.array([[0.05, 0.8, 0.9], [0.7, 0.6, 0.9]])
    ind = np.zeros((2, 3))
    a = _synthetic(prev, first, ind)
    v = labels.verdict(a, (0, 0), "previous")
    assert (v.rank, v.of, v.agrees) == (1, 6, True)
    v = labels.verdict(a, (1, 1), "previous")      # second-highest of 6 heads: within the top 3
    assert v.rank == 2 and v.agrees
    v = labels.verdict(a, (0, 2), "previous")
    assert v.rank == 5 and not v.agrees and v.instead == "sink"
    with language("en"):
        said = labels.sentence(v)
    assert "5%" in said and "rank 5 of 6" in said
    assert said.endswith("its top key for most tokens (90%) is the first token.")
    assert labels.strongest(a, "sink", 2) == [(0, 2), (1, 2)]


def test_which_head_lineup_has_no_near_tie():
    prev = np.array([[0.9, 0.1, 0.05], [0.2, 0.5, 0.0]])
    first = np.array([[0.05, 0.8, 0.9], [0.7, 0.3, 0.9]])
    ind = np.array([[0.0, 0.1, 0.0], [0.0, 0.6, 0.0]])
    a = _synthetic(prev, first, ind)
    with language("en"):
        q, line = question.question(a, "previous")
    assert line.heads[line.right] == (0, 0) and len(set(line.heads)) == 4
    assert all(s <= question.GAP * 0.9 for i, s in enumerate(line.shares) if i != line.right)
    assert (1, 1) not in line.heads                                 # 0.5 > GAP × 0.9 is too close to ask
    assert q.correct == q.options[line.right] and "L0H0" in q.reveal
    assert question.question(a, "previous")[1] == line              # the same order every time


def test_shipped_atlas_is_small_and_reads_clean():
    """The stored data for both embedded models: present, under 10 MB, every check passed, ≥ 50,000 tokens read by
    the decoder and the same windows by the encoder, its source and licence named."""
    from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

    size = sum(p.stat().st_size for p in shipped.FOLDER.iterdir())
    assert size <= 10 * 2**20
    dec, enc = shipped.load(EMBEDDED_DECODER), shipped.load(EMBEDDED_ENCODER)
    assert dec.problems == [] and enc.problems == []
    assert dec.n_tokens >= 50_000 and dec.n_windows == enc.n_windows
    assert (dec.n_layers, dec.n_heads, enc.n_layers, enc.n_heads) == (30, 9, 6, 12)
    info = json.loads((shipped.FOLDER / shipped.CORPUS).read_text(encoding="utf-8"))
    assert "fortunes" in info["source"] and "BSD" in info["licence"]


def test_on_demand_pass_is_bounded_and_reads_the_shipped_windows(tiny_loaded):
    from explorer.atlas import on_demand

    atlas = on_demand.atlas_for(tiny_loaded("llama"), max_tokens=300)
    windows = on_demand.corpus_windows()
    assert 300 <= atlas.n_tokens < 300 + 512 and atlas.n_windows < len(windows)
    assert set(atlas.texts) == set(range(atlas.n_windows)) and atlas.texts[0] == windows[0]
    assert atlas.measures == (*head_stats.MEASURES, *head_stats.SHARES) and atlas.problems == []
    found = cards.examples(atlas, "previous", (0, 0))
    assert found and cards.heatmap_link(atlas, found[0], (0, 0))["text"] == windows[found[0].window]
    quick = on_demand.atlas_for(tiny_loaded("llama"), max_seconds=0.0)   # the time bound: one window, then stop
    assert quick.n_windows == 1


def test_profile_says_the_three_shares():
    a = _synthetic([[0.25, 0.0]], [[0.5, 1.0]], [[np.nan, 0.125]])
    with language("en"):
        said = labels.profile(a, (0, 0))
    assert "first token for 50%" in said and "previous token for 25%" in said and "copy for 0%" in said
    with language("en"):
        assert "copy for 12%" in labels.profile(a, (0, 1)) or "copy for 13%" in labels.profile(a, (0, 1))


def test_the_named_heads_are_the_heads_those_lesson_steps_show():
    """labels.NAMED says where the app names a head ("lesson 4 (step 3)"): that step, counted from 1 as the lesson bar
    counts, shows that head of that model (its layer and head, or its heads), and the words name the same places.
    (The first version said "step 2" for the step the bar shows as step 3.)"""
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "lessons"
    files = {int(p.name.split("-")[0]): p for p in root.glob("[0-9]*-*.toml")}
    for where, places, model, layer, head, _role in labels.NAMED:
        said = [(int(a), int(b)) for a, b in re.findall(r"lesson (\d+) \(step (\d+)\)", where)]
        assert said == list(places), where
        for lesson, step in places:
            params = tomllib.loads(files[lesson].read_text(encoding="utf-8"))["step"][step - 1]["params"]
            shown = {(int(params["layer"]), int(params["head"]))} if "layer" in params else \
                {(int(l), int(h)) for l, h in re.findall(r"L(\d+)H(\d+)", params.get("heads", ""))}
            assert params.get("model") == model and (layer, head) in shown, (where, lesson, step, params)


def test_the_measures_strip_names_each_measure_above_its_strip_and_keeps_its_ends_inside():
    """On a 390 px phone the names beside the strips took most of the width; the right end's label was cut."""
    from explorer.plots import atlas as atlas_plots

    values = {"a": np.array([[0.1, 0.5], [0.9, 0.3]]), "b": np.array([[2.0, 1.0], [4.0, 3.0]])}
    fig = atlas_plots.measures_strip(values, {"a": "first <b>", "b": "second"}, (1, 0))
    layout = fig.to_dict()["layout"]
    assert layout["yaxis"]["showticklabels"] is False
    names = [a for a in layout["annotations"] if a["yref"] == "y"]
    assert [(a["text"], a["y"]) for a in names] == [("first &lt;b&gt;", -atlas_plots.NAME_ABOVE),
                                                    ("second", 1 - atlas_plots.NAME_ABOVE)]
    ends = {a["text"]: a["xanchor"] for a in layout["annotations"] if a["yref"] == "paper"}
    assert ends == {"lowest head": "left", "highest head": "right"}
    mine = fig.to_dict()["data"][1]
    assert mine["x"] == [1.0, 1.0] and mine["y"] == [0, 1]   # L1H0 is the highest head on both (scaled to 1)
