"""What lesson 7 ("Where is the answer carried?") measures on the model: the pair's metric on both texts, the
residual grid's handover from the changed word's position to the last one, the heads that move the answer, the
step's receiver checked as the head that restores most, both directions, and a knockout beside patching. Every
exact run goes through the patching page's shared jobs (``explorer.patching.shared``), so a class and its page
pay for each run once. Same conventions as :mod:`explorer.lessons.claims`.
"""
from __future__ import annotations

import numpy as np
import torch

from explorer.heads_do.knockout import knockout
from explorer.labs.quiz import Question, near_edges
from explorer.model.loading import LoadedModel
from explorer.patching import READY, MinimalPair, Refused, shared
from explorer.patching import predictions as questions
from explorer.words import numbers
from explorer.words.i18n import N_, _

from .claims import NotComputable, Params, param

HALF = questions.HALF
FEW_HEADS = 10      # "a handful": fewer heads than this move the answer by a tenth or more
MOVES = 0.1         # a head "moves the answer" when its patch restores or removes at least this share of it
SAME = 0.1          # a knockout and a patch within this share of the answer count as about the same
KNOCK_OPTIONS = (N_("it loses more than the patch does"), N_("about the same (within a tenth of the answer)"),
                 N_("it loses less than the patch does"))   # shown through _()


def pair_of(params: Params) -> MinimalPair:
    """The step's pair: a ready one by name, or its own texts and answers."""
    name = params.get("pair", "ioi")
    if name in READY:
        return READY[name]
    return MinimalPair(param(params, "text"), param(params, "text_b"), answer=param(params, "pt_ans"),
                       wrong=param(params, "pt_ans_b"))


def receiver(params: Params) -> tuple[int, int]:
    return int(params.get("pt_rl", 0)), int(params.get("pt_rh", 0))


def _wait(job):
    try:
        return job.wait()
    except Refused as err:
        raise NotComputable(str(err)) from err


def contrast_of(loaded: LoadedModel, params: Params):
    return _wait(shared.contrast(loaded, pair_of(params)))


def exact(loaded: LoadedModel, params: Params, level: str, direction: str):
    """The step's exact run of ``level`` in ``direction`` (the page's shared job; its options from the step)."""
    options = {"receiver": receiver(params), "via": params.get("pt_via", "qkv")} if level == "path" else {}
    if level == "heads_at":
        options["position"] = int(params.get("pt_pos", 0))
    return _wait(shared.exact(loaded, pair_of(params), level, direction, **options))


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def best_head(values: np.ndarray, direction: str = "denoise") -> tuple[int, int]:
    moved = np.nan_to_num(values if direction == "denoise" else 1.0 - values, nan=-np.inf)
    layer, head = np.unravel_index(int(np.argmax(moved)), moved.shape)
    return int(layer), int(head)


# ---------------------------------------------------------------------------------------------- checks

def pair_is_right(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    """The model prefers the clean answer after the clean text and the other one after the corrupted text."""
    pair, c = pair_of(params), contrast_of(loaded, params)
    said = _("the metric, logit(“{answer}”) − logit(“{wrong}”), is {clean} on the clean text and {corrupted} on "
             "the corrupted one").format(answer=pair.answer, wrong=pair.wrong, clean=numbers.signed(c.clean, 2),
                                         corrupted=numbers.signed(c.corrupted, 2))
    return c.clean > 0 > c.corrupted, said


def handover(values: np.ndarray, changed: list[int]) -> tuple[int | None, int | None]:
    """(the last layer at which the changed tokens' positions carry at least half of the answer, the first layer
    at which the last position does), from a denoising residual grid ``[layer, position]``."""
    at_word = np.nanmax(values[:, changed], axis=1) >= HALF
    word_layers = np.flatnonzero(at_word)
    return (int(word_layers[-1]) if word_layers.size else None), questions.first_across(values[:, -1], HALF)


def word_then_last(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    """Patched at the changed word's position, early layers bring the answer back; at the last position, only
    late layers do, and the word's position stops carrying it before or as the last position starts."""
    c = contrast_of(loaded, params)
    values = exact(loaded, params, "residual", "denoise").values
    last_word, first_last = handover(values, c.positions)
    said = _("the changed word's position carries half of the answer or more up to layer {word}, the last "
             "position from layer {last} on").format(word="—" if last_word is None else last_word,
                                                      last="—" if first_last is None else first_last)
    ok = last_word is not None and first_last is not None and values[0, c.positions].max() >= HALF \
        and first_last > 0 and last_word <= first_last
    return ok, said


def few_heads(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    """Fewer than FEW_HEADS heads, patched alone, move the answer by MOVES or more."""
    values = exact(loaded, params, "heads", "denoise").values
    n = int((np.abs(np.nan_to_num(values)) >= MOVES).sum())
    said = _("{n} of its {total} heads move the answer by a tenth or more when patched alone").format(
        n=numbers.integer(n), total=numbers.integer(values.size))
    return 0 < n < FEW_HEADS, said


def receiver_restores_most(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    """The step's receiver is the head whose clean output restores most of the answer."""
    values = exact(loaded, params, "heads", "denoise").values
    best = best_head(values)
    said = _("the head that restores most is {head} ({value}); the step's receiver is {receiver}").format(
        head=head_name(*best), value=numbers.percent(float(values[best])), receiver=head_name(*receiver(params)))
    return best == receiver(params), said


# ---------------------------------------------------------------------------------------------- questions

def word_until(loaded: LoadedModel, params: Params) -> Question:
    """"Up to which layer does the changed word's own position carry at least half of the answer?", among the
    layer ranges of the page's layer question, with its near-ties (a layer within ``RANGE_TIE`` of the line)."""
    c = contrast_of(loaded, params)
    values = exact(loaded, params, "residual", "denoise").values
    column = np.nanmax(values[:, c.positions], axis=1)
    ranges = questions.bands(len(column))
    names = [questions.band_name(b) for b in ranges]

    def option(layer: int) -> str:
        return next(n for n, (a, b) in zip(names, ranges) if a <= layer <= b)

    def last_at(line: float) -> int | None:
        hits = np.flatnonzero(np.nan_to_num(column, nan=-np.inf) >= line)
        return int(hits[-1]) if hits.size else None
    last = last_at(HALF)
    if last is None:
        raise NotComputable(_("no layer's patch at the changed word brings back half of the answer"))
    sure, maybe = last_at(HALF + questions.RANGE_TIE), last_at(HALF - questions.RANGE_TIE)
    start = sure if sure is not None else 0
    tied = {option(layer) for layer in range(start, maybe + 1) if column[layer] >= HALF - questions.RANGE_TIE}
    right = option(last)
    words = numbers.joined(c.tokens["clean"][p].strip() for p in c.positions)
    prompt = _("Look at the column of the changed word (“{words}”). Up to which layer does copying the clean residual "
               "stream there, alone, still bring back at least half of the answer? Which of these {n}?").format(
        words=words, n=numbers.integer(len(names)))
    after = min(last + 1, len(column) - 1)
    reveal = _("Measured: up to layer {last} ({value}); at layer {next} it gives {after}.").format(
        last=numbers.integer(last), value=numbers.percent(float(column[last])), next=numbers.integer(after),
        after=numbers.percent(float(column[after])))
    first = questions.first_across(values[:, -1], HALF)
    reveal += " " + (_("The last position never reaches half.") if first is None else
                     _("The last position reaches half from layer {first} on.").format(first=numbers.integer(first)))
    also = tuple(n for n in names if n in tied and n != right)
    if also:
        reveal += " " + _("Some layers lie within {margin} of the half-way line, so every answer they could make "
                          "right counts.").format(margin=numbers.percent(questions.RANGE_TIE))
    return Question(prompt, tuple(names), right, reveal, also=also)


PATH_OPTIONS = (N_("more than half of the answer"), N_("between a tenth and half of it"),
                N_("less than a tenth of it"))   # shown through _()
PATH_TIE = 0.02     # a best sender within this share of a band's edge: both bands count


def path_sender(loaded: LoadedModel, params: Params) -> Question:
    """"How much of the answer does the best single sender bring back through the receiver alone?", from the
    step's path patching run (denoising)."""
    values = exact(loaded, params, "path", "denoise").values
    layer, head = receiver(params)
    best = best_head(values)
    share = float(values[best])
    alone = float(exact(loaded, params, "heads", "denoise").values[layer, head])
    options = tuple(_(o) for o in PATH_OPTIONS)
    right = options[0] if share > HALF else options[2] if share < MOVES else options[1]
    also = tuple(o for o in near_edges(share, {HALF: options[:2], MOVES: options[1:]}, PATH_TIE) if o != right)
    second = sorted(np.nan_to_num(values, nan=-np.inf).ravel())[-2]
    prompt = _("{head}'s own clean output brings back {alone} of the answer. Now send each earlier head's clean "
               "output only into {head}'s queries, keys and values, every other path as in the corrupted run. The "
               "best single sender brings back…").format(head=head_name(layer, head), alone=numbers.percent(alone))
    reveal = _("Measured: the best sender is {best} with {share}, the next {second}. No single earlier head feeds "
               "{head} the name: what it reads comes through other paths (many heads together, the MLPs, the "
               "name's own position read directly), not through a few strong heads as in the textbook's circuit "
               "for GPT-2.").format(
        best=head_name(*best), share=numbers.percent(share), second=numbers.percent(float(second)),
        head=head_name(layer, head)) if share < MOVES else _(
        "Measured: the best sender is {best} with {share} of the answer, the next {second}.").format(
        best=head_name(*best), share=numbers.percent(share), second=numbers.percent(float(second)))
    return Question(prompt, options, right, reveal, also=also)


def directions(loaded: LoadedModel, params: Params) -> Question:
    """"Does the head that restores most when denoising also take away most when noising?"."""
    enough = exact(loaded, params, "heads", "denoise").values
    needed = exact(loaded, params, "heads", "noise").values
    best = best_head(enough)
    lost = 1.0 - needed
    worst = best_head(needed, "noise")
    options = (_("yes: it takes away the most"), _("it takes away some, but another head takes more"),
               _("it takes away almost nothing (less than a tenth)"))
    mine = float(lost[best])
    right = options[0] if worst == best else options[2] if mine < MOVES else options[1]
    also = tuple(o for o in near_edges(mine, {MOVES: options[1:]}, 0.02) if o != right and right != options[0])
    if right != options[0] and float(lost[worst]) - mine < questions.HEAD_TIE:
        also += (options[0],)
    if right == options[0] and np.sort(np.nan_to_num(lost, nan=-np.inf).ravel())[-2] > mine - questions.HEAD_TIE:
        also += (options[1],)   # another head within the page's near-tie: "another head takes more" counts too
    prompt = _("Denoising: {head}'s clean output, copied alone into the corrupted run, brings back {share} of the "
               "answer, more than any other head. Now noise: copy each head's corrupted output into the clean run. "
               "Does {head} take away the most?").format(head=head_name(*best), share=numbers.percent(enough[best]))
    reveal = _("Measured: {head} takes away {mine}; the head that takes away most is {worst} ({most}).").format(
        head=head_name(*best), mine=numbers.percent(mine), worst=head_name(*worst),
        most=numbers.percent(float(lost[worst])))
    return Question(prompt, options, right, reveal, also=tuple(dict.fromkeys(also)))


def knockout_vs_patch(loaded: LoadedModel, params: Params) -> Question:
    """Knock the step's head out in the clean run (output 0) against patching in its corrupted output."""
    c = contrast_of(loaded, params)
    layer, head = receiver(params)
    noised = float(1.0 - exact(loaded, params, "heads", "noise").values[layer, head])
    with c.loaded.lock, torch.inference_mode(), knockout(c.loaded.model, {layer: [head]}):   # the model c runs on
        knocked = float(c.run("clean", 1, 0)[0])
    lost = float(1.0 - c.normalise(knocked))
    options = tuple(_(o) for o in KNOCK_OPTIONS)
    gap = lost - noised
    right = options[1] if abs(gap) <= SAME else options[0] if gap > 0 else options[2]
    also = tuple(o for o in near_edges(gap, {SAME: options[:2], -SAME: options[1:]}, 0.03) if o != right)
    prompt = _("Knock {head} out in the clean run: its output set to 0 at every position. Patching in its "
               "corrupted output took away {noised} of the answer. And knocking it out?").format(
        head=head_name(layer, head), noised=numbers.percent(noised))
    reveal = _("Measured: knocked out, the metric goes from {clean} to {knocked}, so {lost} of the answer is lost, "
               "against {noised} by patching. A knockout asks what happens without the head at all, a state the "
               "model never meets; patching swaps in what the head does on the other sentence, so it measures only "
               "the difference the pair makes.").format(
        clean=numbers.signed(c.clean, 2), knocked=numbers.signed(knocked, 2), lost=numbers.percent(lost),
        noised=numbers.percent(noised))
    return Question(prompt, options, right, reveal, also=also)
