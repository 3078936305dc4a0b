"""Lesson claims about a named head checked on the head atlas (the corpus of real text both embedded models read):
the step's head (its ``layer`` and ``head`` parameters) against the stored atlas of the step's model."""
from __future__ import annotations

from explorer.atlas import labels, shipped
from explorer.model.loading import LoadedModel
from explorer.words.i18n import _

from .claims import NotComputable, Params


def _verdict(loaded: LoadedModel, params: Params, role: str) -> labels.Verdict:
    atlas = shipped.load(loaded.spec.name)
    head = (int(params.get("layer", 0)), int(params.get("head", 0)))
    verdict = None if atlas is None else labels.verdict(atlas, head, role)
    if verdict is None:
        raise NotComputable(_("No head atlas is stored for {model}.").format(model=loaded.spec.name))
    return verdict


def corpus_previous_token(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    """The step's head is the model's strongest previous-token head on the corpus too (rank 1)."""
    v = _verdict(loaded, params, "previous")
    return v.rank == 1, labels.sentence(v)


def corpus_induction(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    """The step's head is among the model's strongest induction heads on the corpus (the atlas's agreement rule)."""
    v = _verdict(loaded, params, "induction")
    return v.agrees, labels.sentence(v)
