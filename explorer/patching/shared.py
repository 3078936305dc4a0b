"""Patching shared by every session of a server: the pair prepared, its attribution preview and each exact run,
each a job of the keepers table (``explorer.jobs.keepers``: ``contrasts``, ``previews``, ``patches``) keyed by
plain values only (the model's name, the pair's fields, the granularity, the direction and its options), never by
the language or a session. Thirty students asking for one pair start one computation; one who leaves the page
stops nothing; a lesson's computed question (``explorer.lessons.patching_claims``) reads the same jobs as the
page, so a class pays for each run once. Every sentence a job leaves (its progress, a refusal) is a ``Later``, read
in the language of the page that shows it.
"""
from __future__ import annotations

from dataclasses import astuple

from explorer.jobs import keepers
from explorer.jobs.worker import Job
from explorer.model.loading import LoadedModel
from explorer.patching.minimal_pairs import MinimalPair
from explorer.words.i18n import N_, Later

CONTRASTS, PREVIEWS, EXACT = "contrasts", "previews", "patches"   # rows of the keepers table


def pair_key(model: str, pair: MinimalPair) -> tuple:
    """The plain values that name a pair on a model."""
    return (model, *astuple(pair))


def exact_key(model: str, pair: MinimalPair, granularity: str, direction: str, position: int | None = None,
              receiver: tuple[int, int] | None = None, via: str = "qkv") -> tuple:
    """The plain values that name one exact run (options a granularity does not read are left out)."""
    return (*pair_key(model, pair), granularity, direction,
            position if granularity == "heads_at" else None,
            tuple(receiver) if granularity == "path" and receiver is not None else None,
            via if granularity == "path" else None)


def contrast(loaded: LoadedModel, pair: MinimalPair) -> Job:
    """The job preparing ``pair`` on ``loaded`` (``explorer.patching.prepare``; its error: ``Refused``)."""
    from explorer.patching.contrast import prepare
    return keepers.jobs(CONTRASTS).run(pair_key(loaded.spec.name, pair), lambda progress: prepare(loaded, pair),
                                       "patching pair")


def preview(loaded: LoadedModel, pair: MinimalPair, direction: str = "denoise") -> Job:
    """The job computing the pair's attribution preview in ``direction`` (residual grid and every head)."""
    from explorer.patching import attribution

    def work(progress):
        return attribution.preview(contrast(loaded, pair).wait(), direction)
    return keepers.jobs(PREVIEWS).run((*pair_key(loaded.spec.name, pair), direction), work, "patching preview")


def exact(loaded: LoadedModel, pair: MinimalPair, granularity: str, direction: str, position: int | None = None,
          receiver: tuple[int, int] | None = None, via: str = "qkv") -> Job:
    """The job running exact patching of ``granularity`` in ``direction``, with its progress."""
    from explorer.patching.exact import patch

    def work(progress):
        def step(done: int, total: int) -> None:
            progress(done / max(total, 1), Later(N_("Patching: batch {done} of {total}"), done=done, total=total))
        return patch(contrast(loaded, pair).wait(), granularity, direction, position=position, receiver=receiver,
                     via=via, progress=step)
    key = exact_key(loaded.spec.name, pair, granularity, direction, position, receiver, via)
    return keepers.jobs(EXACT).run(key, work, "exact patching")


def started(model: str, pair: MinimalPair, granularity: str, direction: str, position: int | None = None,
            receiver: tuple[int, int] | None = None, via: str = "qkv") -> Job | None:
    """The exact job for these values if any session has started it (a failed one is forgotten), else None."""
    return keepers.jobs(EXACT).peek(exact_key(model, pair, granularity, direction, position, receiver, via))
