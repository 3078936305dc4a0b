"""AppTest of the head atlas page on the stored atlas: every head in the scatter, a head's card with the lesson's
name checked, its examples literal and linked to the heatmap page, the class question folded until answered, and
bad links and a model without an atlas said in one sentence."""
import json
from functools import partial

from pagetest import array, in_app, open_page, texts, unfolded

from explorer.atlas import cards, labels, question, shipped
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

run = partial(open_page, "pages/atlas.py")


def _scatter(at):
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    return next(spec for spec in specs if spec["data"][0].get("name") == "heads")


def test_every_head_of_smollm2_is_one_point_and_l16h0_card_says_what_the_corpus_says():
    at = run(model=EMBEDDED_DECODER, layer=16, head=0, atlas_x="top_first", atlas_y="top_previous")
    atlas = shipped.load(EMBEDDED_DECODER)
    points = _scatter(at)["data"][0]
    assert len(points["customdata"]) == 270
    i = points["customdata"].index([16, 0])
    assert array(points["y"])[i] == atlas.means["top_previous"][16, 0]
    said = texts(at)
    verdict = labels.sentence(labels.verdict(atlas, (16, 0), "previous"))
    assert [s.value for s in at.subheader][0] == "Head L16H0" and verdict.replace("\\", "") in said
    assert "fortunes" in said and "BSD" in said
    # the card's examples: the first one's query token is shown, literal
    first = cards.examples(atlas, "previous", (16, 0))[0]
    query = dict((p, t) for p, t, _r in first.shown)[first.query].strip()
    assert query in said


def test_examples_link_to_the_heatmap_page_with_the_window_and_query():
    from urllib.parse import parse_qs

    at = in_app("pages/atlas.py")   # the page's default: SmolLM2, L0H0, examples of the previous token
    atlas = shipped.load(EMBEDDED_DECODER)
    links = [{k: v[0] for k, v in parse_qs(e.proto.query_string).items()} for e in at.get("page_link")
             if "heatmaps" in e.proto.page]
    expected = [cards.heatmap_link(atlas, ex, (0, 0)) for ex in cards.examples(atlas, "previous", (0, 0))]
    assert links and [{k: v for k, v in link.items() if k != "lang"} for link in links] == expected


def test_a_filter_keeps_the_chosen_layers():
    at = run(model=EMBEDDED_ENCODER)
    at.slider(key="atlas_layers").set_range(2, 3).run()
    points = _scatter(at)["data"][0]
    assert {c[0] for c in points["customdata"]} == {2, 3} and len(points["customdata"]) == 24


def test_which_head_is_this_folds_the_names_until_answered():
    at = run(model=EMBEDDED_DECODER, atlas_ask="previous")
    q, line = question.question(shipped.load(EMBEDDED_DECODER), "previous")
    assert q.prompt in texts(at) and q.reveal.split("  \n")[0] not in texts(at)
    at = unfolded(at)
    assert q.reveal.split("  \n")[0] in texts(at)


def test_bad_links_and_a_model_without_an_atlas_say_one_sentence(monkeypatch):
    from explorer.ui.views import atlas as view

    at = run(model=EMBEDDED_DECODER, layer=99, head=-3, atlas_x="nonsense")
    assert "out of range" in texts(at) and _scatter(at)                   # clamped; the page still draws
    view.stored.memo.clear()
    monkeypatch.setattr(shipped, "load", lambda model, folder=None: None)
    at = run(model=EMBEDDED_ENCODER)
    assert "No atlas is stored for all-MiniLM-L6-v2" in texts(at) and not at.get("plotly_chart")
    assert any(b.label == "Read the corpus with this model" for b in at.button)
    view.stored.memo.clear()


def test_a_damaged_file_says_one_sentence_and_the_page_draws_the_rest(monkeypatch, tmp_path):
    import numpy as np

    from explorer.ui.views import atlas as view

    data = dict(np.load(shipped.FOLDER / shipped.file_of(EMBEDDED_ENCODER)))
    data["mean_top_previous"] = data["mean_top_previous"] + 7.0                 # a share above 1
    np.savez(tmp_path / shipped.file_of(EMBEDDED_ENCODER), **data)
    (tmp_path / shipped.CORPUS).write_bytes((shipped.FOLDER / shipped.CORPUS).read_bytes())
    real = shipped.load
    monkeypatch.setattr(shipped, "load", lambda model, folder=None: real(model, tmp_path))
    view.stored.memo.clear()
    at = run(model=EMBEDDED_ENCODER)
    assert "The stored atlas of all-MiniLM-L6-v2 is damaged (top_previous)" in texts(at)
    assert len(_scatter(at)["data"][0]["customdata"]) == 72                # drawn from the measures left
    view.stored.memo.clear()


def test_a_model_without_a_stored_atlas_reads_the_corpus_on_demand(monkeypatch):
    from explorer.atlas import on_demand
    from explorer.ui.views import atlas as view

    view.stored.memo.clear()
    monkeypatch.setattr(shipped, "load", lambda model, folder=None: None)
    monkeypatch.setattr(on_demand, "MAX_TOKENS", 400)
    at = run(model=EMBEDDED_ENCODER)
    assert "No atlas is stored for all-MiniLM-L6-v2" in texts(at) and not at.get("plotly_chart")
    [b for b in at.button if b.label == "Read the corpus with this model"][0].click().run()
    assert not at.exception
    assert "Read on demand:" in texts(at) and len(_scatter(at)["data"][0]["customdata"]) == 72
    view.stored.memo.clear()


def test_compare_and_flip_say_what_a_head_does_on_real_text():
    """Where another page shows a head the lessons name (compare: lesson 4's pair), the corpus's verdict is beside
    it; the flip page says what its head does on real text."""
    atlas = shipped.load(EMBEDDED_DECODER)
    at = open_page("pages/compare.py", model=EMBEDDED_DECODER, text="The cat sat on the mat.", heads="L16H0,L18H6")
    said = texts(at)
    for head, role in (((16, 0), "previous"), ((18, 6), "induction")):
        assert "On real text (Head atlas): " + labels.sentence(labels.verdict(atlas, head, role)) in said
    at = open_page("pages/flip.py", model=EMBEDDED_DECODER, layer=16, head=0)
    assert labels.profile(atlas, (16, 0)) in texts(at)


def test_every_page_that_names_a_head_shows_the_corpus_verdict():
    """Issue 56, item 3, page by page: the heatmap page on lesson 4's heads, the flip page on L16H0, the glossary's
    head terms with an example, and Compare heads' table, where each name the head-role probe gives is checked."""
    from explorer.heads_do import pairs
    from explorer.ui.views import value_roles

    atlas = shipped.load(EMBEDDED_DECODER)
    said = {(16, 0): labels.sentence(labels.verdict(atlas, (16, 0), "previous")),
            (18, 6): labels.sentence(labels.verdict(atlas, (18, 6), "induction"))}
    for (layer, head), verdict in said.items():
        at = open_page("pages/heatmaps.py", model=EMBEDDED_DECODER, text="The cat sat on the mat.", layer=layer,
                       head=head)
        assert "On real text (Head atlas): " + verdict in texts(at)
    at = open_page("pages/heatmaps.py", model=EMBEDDED_DECODER, text="The cat sat on the mat.", layer=3, head=1)
    assert "On real text (Head atlas)" not in texts(at)     # a head the app does not name: no verdict
    at = open_page("pages/flip.py", model=EMBEDDED_DECODER, layer=16, head=0)
    assert "On real text (Head atlas): " + said[(16, 0)] in texts(at)
    glossary = texts(open_page("pages/glossary.py"))
    sink = labels.strongest(atlas, "sink")[0]
    where = next(w for w, layer, head, _role in labels.named_heads(EMBEDDED_DECODER) if (layer, head) == (16, 0))
    assert f"Example: L16H0 of {EMBEDDED_DECODER}, named in {where}. On real text: " + said[(16, 0)] in glossary
    assert where == "lesson 4 (step 3) and lesson 6 (step 6)"   # the steps that show it (test_atlas_labels)
    assert f"Example: L{sink[0]}H{sink[1]} of {EMBEDDED_DECODER}, its strongest on real text: " + labels.sentence(
        labels.verdict(atlas, sink, "sink")) in glossary
    at = open_page("pages/compare.py", model=EMBEDDED_DECODER, text="The cat sat on the mat.", heads="L16H0,L18H7")
    table = at.dataframe[0].value
    found = value_roles.head_roles(EMBEDDED_DECODER)[0]
    cells = labels.probe_checked(atlas, found, pairs.ROLE_CUTS)
    for head in ((16, 0), (18, 7)):
        row = table[(table["layer"] == head[0]) & (table["head"] == head[1])]
        i = found.index[(found["layer"] == head[0]) & (found["head"] == head[1])][0]
        assert row["on real text"].iloc[0] == cells[i] != ""
    assert "previous-token: agrees" in cells[found.index[(found["layer"] == 16) & (found["head"] == 0)][0]]
    assert "induction on the probe, mostly sink on real text" in table["on real text"].str.cat()
