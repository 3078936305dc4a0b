"""Lesson 4's sentences about real text say what the stored atlas says, in every language, and the checks that
guard them agree with it."""
import re
import tomllib
from pathlib import Path

import pytest

from explorer.atlas import labels, shipped
from explorer.model.registry import EMBEDDED_DECODER

ROOT = Path(__file__).resolve().parents[2]
LESSON = "4-how-a-model-copies.toml"


def _notes(lang: str) -> list[str]:
    path = ROOT / "lessons" / ("" if lang == "en" else lang) / LESSON
    return [step["notes"] for step in tomllib.loads(path.read_text(encoding="utf-8"))["step"]]


def _percent(x: float) -> str:
    return rf"\b{round(100 * x)}\s?%"


@pytest.mark.parametrize("lang", ["en", "de", "es"])
def test_lesson_4_numbers_on_real_text_are_the_atlas_numbers(lang):
    atlas = shipped.load(EMBEDDED_DECODER)
    notes = _notes(lang)
    prev = labels.verdict(atlas, (16, 0), "previous")
    ind = labels.verdict(atlas, (18, 6), "induction")
    first = labels.strongest(atlas, "induction")[0]
    tokens = f"{atlas.n_tokens:,}".replace(",", "[,\u202f]")   # 52,021 in English, 52 021 (thin space) in de/es
    assert prev.rank == 1 and re.search(_percent(prev.share), notes[2]) and re.search(tokens, notes[2])
    assert ind.rank == 2 and re.search(_percent(ind.share), notes[3])
    assert f"L{first[0]}H{first[1]}" in notes[3]
    assert re.search(_percent(float(atlas.means["top_induction"][first])), notes[3])
    assert len(notes) == 7   # the last step: "Which head is this?"


def test_lesson_4_checks_the_names_on_the_corpus():
    from explorer.lessons import atlas_claims

    class Loaded:   # the checks read only the model's name
        class spec:
            name = EMBEDDED_DECODER
    assert atlas_claims.corpus_previous_token(Loaded, {"layer": 16, "head": 0})[0]
    assert atlas_claims.corpus_induction(Loaded, {"layer": 18, "head": 6})[0]
    assert not atlas_claims.corpus_previous_token(Loaded, {"layer": 18, "head": 6})[0]


@pytest.mark.parametrize("lang", ["en", "de", "es"])
def test_lesson_6_says_how_its_pair_fares_on_real_text(lang):
    """Lesson 6's last step names SmolLM2's pair: its note gives the atlas's numbers for both names, in every
    language (the previous-token share, the induction share, the stronger L17H5's, and the sink share)."""
    atlas = shipped.load(EMBEDDED_DECODER)
    path = ROOT / "lessons" / ("" if lang == "en" else lang) / "6-watch-a-circuit-grow.toml"
    note = tomllib.loads(path.read_text(encoding="utf-8"))["step"][-1]["notes"]
    prev = labels.verdict(atlas, (16, 0), "previous")
    ind = labels.verdict(atlas, (18, 6), "induction")
    first = labels.strongest(atlas, "induction")[0]
    assert prev.rank == 1 and ind.rank == 2 and labels.mostly(ind) == "sink"
    for share in (prev.share, ind.share, float(atlas.means["top_induction"][first]), ind.instead_share):
        assert re.search(_percent(share), note), (share, note)
    assert f"L{first[0]}H{first[1]}" in note and "L16H0" in note and "L18H6" in note
