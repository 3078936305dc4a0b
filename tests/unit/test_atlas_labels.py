"""The app's names for heads checked on real text (issue 56, item 3): the verdict rule worked by hand on a made-up
atlas, the head-role probe's badges turned into verdicts, and every verdict the app shows on the embedded models
recomputed here from the stored atlas's arrays (an independent sort, not ``labels.verdict``)."""
import math

import numpy as np
import pandas as pd
import pytest

from explorer.atlas import labels, shipped
from explorer.heads_do import pairs
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.words.i18n import language


def _atlas(prev, first, ind) -> shipped.Atlas:
    shape = np.asarray(prev).shape
    means = {"top_previous": np.asarray(prev, dtype=np.float32), "top_first": np.asarray(first, dtype=np.float32),
             "top_induction": np.asarray(ind, dtype=np.float32)}
    return shipped.Atlas("m", "decoder", *shape, 100, 3, means, {}, {}, {}, {}, "", "")


# 2 layers × 4 heads = 8 heads: the top 5 % is below 1 head, so a name holds in the top 3 or on most tokens
PREV = [[0.9, 0.1, 0.05, 0.4], [0.2, 0.3, 0.0, 0.35]]
FIRST = [[0.05, 0.8, 0.9, 0.55], [0.7, 0.6, 0.95, 0.6]]
IND = [[0.0, 0.0, 0.2, 0.0], [0.0, 0.3, 0.1, 0.25]]


def test_a_sink_is_judged_by_its_share_and_a_rare_role_by_its_rank():
    a = _atlas(PREV, FIRST, IND)
    sink = labels.verdict(a, (0, 3), "sink")   # 0.55: rank 7 of 8, yet its top key is the first token for most
    assert (sink.rank, sink.agrees) == (7, True)
    prev = labels.verdict(a, (0, 3), "previous")   # 0.4: rank 2 of 8, in the top 3
    assert (prev.rank, prev.agrees, prev.instead, labels.mostly(prev)) == (2, True, "sink", "sink")
    prev = labels.verdict(a, (1, 0), "previous")   # 0.2: rank 5, its first-token share 0.7 is most tokens
    assert (prev.rank, prev.agrees, labels.mostly(prev)) == (5, False, "sink")
    assert math.isclose(prev.instead_share, 0.7, rel_tol=1e-6)
    ind = labels.verdict(a, (1, 3), "induction")   # 0.25: rank 2 of 8; its sink share 0.6 is most tokens
    with language("en"):
        agrees, mostly = labels.sentence(ind), labels.sentence(prev)
        assert agrees.endswith(": the corpus agrees, though for most tokens (60%) its top key is the first token.")
        assert mostly.endswith(": on real text its top key for most tokens (70%) is the first token.")
        assert labels.probe_words(prev) == "previous-token on the probe, mostly sink on real text (70%)"
        assert labels.probe_words(sink) == "sink: agrees, 55% (rank 7 of 8)"
    low = labels.verdict(_atlas([[0.1, 0.9, 0.8, 0.7]], [[0.2, 0.0, 0.0, 0.0]], [[0.3, 0.0, 0.0, 0.0]]), (0, 0),
                         "previous")   # rank 4 of 4 and no role on most tokens: "mostly" is not said
    assert not low.agrees and labels.mostly(low) is None
    with language("en"):
        assert labels.probe_words(low) == "previous-token on the probe, rank 4 of 4 on real text (10%)"


def test_the_probes_badges_become_verdicts_strongest_first():
    a = _atlas(PREV, FIRST, IND)
    roles = pd.DataFrame({"layer": [0, 1, 1, 5], "head": [0, 1, 2, 0], "previous_token": [0.6, 0.1, 0.0, 0.9],
                          "first_token": [0.0, 0.6, 0.9, 0.9], "broad": [0.9, 0.9, 0.9, 0.9],
                          "duplicate": [0.0, 0.0, 0.0, 0.0], "induction": [0.0, 0.9, 0.1, 0.0]})
    found = labels.probe_verdicts(a, roles, pairs.ROLE_CUTS)
    assert [[v.role for v in f] for f in found] == [["previous"], ["induction", "sink"], ["sink"], []]
    # row 1: induction 0.9/0.3 = 3 before first token 0.6/0.5 = 1.2; its induction share 0.3 is the highest of 8
    assert found[1][0].rank == 1 and found[1][0].agrees and found[1][1].agrees
    with language("en"):
        cells = labels.probe_checked(a, roles, pairs.ROLE_CUTS)
    assert cells[0] == "previous-token: agrees, 90% (rank 1 of 8)" and cells[3] == ""   # L5H0: not in the atlas
    assert cells[1].startswith("induction: agrees, 30% (rank 1 of 8); sink: agrees, 60%")


def _recomputed(atlas, head, role):
    """``(share, rank, agrees, mostly)`` by a plain descending sort of the stored array."""
    values = atlas.means[labels.ROLE_SHARE[role]].astype(np.float64)
    share = float(values[head])
    ordered = sorted((x for x in values.ravel() if np.isfinite(x)), reverse=True)
    rank = ordered.index(share) + 1
    top = max(3, math.ceil(0.05 * len(ordered)))
    others = {r: float(atlas.means[s][head]) for r, s in labels.ROLE_SHARE.items()}
    best = max(others, key=lambda r: (others[r], r == role))
    return share, rank, rank <= top or share >= 0.5, best if best != role and others[best] >= 0.5 else None


@pytest.mark.parametrize("model", [EMBEDDED_DECODER, EMBEDDED_ENCODER])
def test_every_verdict_the_app_shows_is_the_stored_atlas_recomputed(model):
    atlas = shipped.load(model)
    shown = [((layer, head), role) for _where, layer, head, role in labels.named_heads(model)]
    shown += [labels.example(atlas, role)[:1] + (role,) for role in labels.GLOSSARY_ROLES.values()]
    for head, role in shown:
        v = labels.verdict(atlas, head, role)
        assert (v.share, v.rank, v.agrees, labels.mostly(v)) == _recomputed(atlas, head, role), (head, role)


def test_smollm2s_named_heads_on_real_text():
    """The facts the lessons and pages now say: L16H0 is the strongest previous-token head; L18H6 is second on
    induction and a sink on most tokens; L18H7, which the probe calls induction, is mostly a sink on real text."""
    atlas = shipped.load(EMBEDDED_DECODER)
    prev, ind = labels.verdict(atlas, (16, 0), "previous"), labels.verdict(atlas, (18, 6), "induction")
    assert prev.rank == 1 and prev.share > 0.95 and labels.mostly(prev) is None
    assert ind.rank == 2 and ind.agrees and labels.mostly(ind) == "sink" and ind.instead_share > 0.85
    l18h7 = labels.verdict(atlas, (18, 7), "induction")
    assert not l18h7.agrees and labels.mostly(l18h7) == "sink"
    assert labels.example(atlas, "previous") == ((16, 0), labels.NAMED[0][0])
    assert labels.example(atlas, "sink") == (labels.strongest(atlas, "sink")[0], None)
