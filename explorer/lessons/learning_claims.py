"""What a training run answers (Watch heads learn, lesson 6): the page's prediction questions and the lesson's
checks, each computed from the run on screen (``explorer.learning``), never written by hand.

A run is named by the page's parameters (``tr_layers``, ``tr_heads``, ``tr_task``, ``tr_seed``, ``tr_steps``);
:func:`config_of` reads them through ``config.parse`` (a value out of range is refused in one sentence), and
:func:`run_for` finds the ready-made run trained with that config (a lesson's step measures on it; the page asks
the same questions on the run it shows). The questions: will this model learn to copy, at which step does the loss
on the second copy drop (ranges), which head becomes the induction head.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from explorer.labs.quiz import Question
from explorer.learning import circuits, config, runs
from explorer.learning.train import Run
from explorer.words.i18n import N_, _, ngettext
from explorer.words.numbers import integer, joined, number, percent, signed

from .claims import NotComputable

Params = Mapping[str, str]
TASK_NAMES = {"induction": N_("a repeated segment"), "no-repeat": N_("no repeats")}
# the page's parameters -> the config's fields
FIELDS = {"tr_layers": "n_layers", "tr_heads": "n_heads", "tr_task": "task", "tr_seed": "seed", "tr_steps": "steps"}
COPIES_AT = 0.5   # a run "copies" when its second-copy loss ends at most this share of its first-copy loss
# Near-ties (a question never marks wrong what the page treats as equal): a second-copy loss within this share of
# COPIES_AT of the first's is both "copies" and "does not"; a partner whose knockout costs at least this share of the
# costliest's is as much the partner; a phase change on the step where two ranges meet is in both.
COPY_TIE = 0.05
PARTNER_TIE = 0.9


def config_of(params: Params) -> config.TrainConfig:
    """The run's config from the page's parameters (absent ones: the class's default run); ConfigError (one
    sentence) for a value out of range or not a number."""
    return config.parse({FIELDS[k]: v for k, v in params.items() if k in FIELDS})


def run_for(params: Params) -> Run:
    """The ready-made run trained with the parameters' config; NotComputable when there is none."""
    try:
        cfg = config_of(params)
    except config.ConfigError as err:
        raise NotComputable(str(err)) from err
    name = runs.shipped_for(cfg)
    if name is None:
        raise NotComputable(_("these settings have no ready-made run to measure on"))
    try:
        return runs.shipped(name)
    except OSError as err:
        raise NotComputable(_("the ready-made run {name} is missing from this server").format(name=name)) from err


def copies(run: Run) -> tuple[bool, float, float]:
    """(whether the run ends copying, its last first-copy loss, its last second-copy loss)."""
    last = run.checkpoints[-1]
    return last.loss_second <= COPIES_AT * last.loss_first, last.loss_first, last.loss_second


def _nats(x: float) -> str:
    return number(x, 2)


def copy_question(run: Run) -> Question:
    """Will this model learn to copy the repeated segment?"""
    cfg = run.config
    task = TASK_NAMES[cfg.task]
    yes, no = _("Yes: the second copy becomes much easier than the first"), \
        _("No: no head learns to copy it")
    learned, first, second = copies(run)
    reveal = _("After {steps} steps the loss on the first copy is {first} nats and on the second {second} nats: "
               "{verdict}").format(steps=integer(run.checkpoints[-1].step), first=_nats(first),
                                   second=_nats(second),
                                   verdict=_("the model copies.") if learned else _("the model does not copy."))
    if cfg.n_layers == 1:
        reveal += " " + _("One layer cannot: to find where this token stood before and take the token after it, a "
                          "head needs keys that already carry the token before them, which only an earlier layer "
                          "can write.")
    if not learned and second < 0.95 * first and run.snapshots:
        seen = circuits.seen_tokens(cfg, run.final_weights())
        if seen.mass > seen.share:
            reveal += " " + _("The second copy still gets a little easier without any copying: on it the model puts "
                              "{mass} of its probability on tokens already seen in the sequence, which are {share} of "
                              "the vocabulary. It has learnt that tokens come back, not which one comes next.").format(
                mass=percent(seen.mass), share=percent(seen.share))
    prompt = _("Will this model (layers: {layers}, heads a layer: {heads}, task: {task}) learn to copy the repeated "
               "segment?").format(layers=integer(cfg.n_layers), heads=integer(cfg.n_heads), task=_(task))
    tie = abs(second / first - COPIES_AT) < COPY_TIE if first > 0 else False
    if tie:
        reveal += " " + _("That is close to the line of half the first copy's loss, so both answers count as right.")
    return Question(prompt, (yes, no), yes if learned else no, reveal, also=((no if learned else yes),) if tie else ())


def step_ranges(steps: int) -> list[tuple[int, int]]:
    """Four even ranges of steps 0 … ``steps`` (the options of the drop question)."""
    edges = np.linspace(0, steps, 5).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def drop_question(run: Run) -> Question:
    """At which step does the loss on the second copy drop (the phase change)?"""
    ranges = step_ranges(run.config.steps)
    labels = [_("between step {a} and {b}").format(a=integer(a), b=integer(b)) for a, b in ranges]
    never = _("it does not drop in this run")
    change = run.phase_change()
    if change is None:
        correct = never
        reveal = _("No recorded step has the best later-layer head's prefix-matching score at {at} or more and the "
                   "second copy's loss at half the first's or less: no phase change in {steps} steps.").format(
            steps=integer(run.config.steps), at=number(0.5, 1))
    else:
        right = drop_ranges(ranges, change)
        correct, also = labels[right[0]], tuple(labels[i] for i in right[1:])
        last = run.checkpoints[[c.step for c in run.checkpoints].index(change)]
        reveal = _("At step {step} the best later-layer head's prefix-matching score reached {score} and the second "
                   "copy's loss fell to {second} nats (the first copy: {first}).").format(
            step=integer(change), score=number(float(last.prefix[1:].max()), 2), second=_nats(last.loss_second),
            first=_nats(last.loss_first))
        if also:
            reveal += " " + _("Step {step} is where two ranges meet, so both count as right.").format(
                step=integer(change))
        return Question(_("At which step will the loss on the second copy drop?"), (*labels, never), correct, reveal,
                        also=also)
    return Question(_("At which step will the loss on the second copy drop?"), (*labels, never), correct, reveal)


def drop_ranges(ranges: list[tuple[int, int]], change: int) -> list[int]:
    """The ranges (indices) whose labels hold the phase change's step ``change``: the first range reaching it, and
    the next one too when ``change`` is exactly where they meet ("between 375 and 750", "between 750 and 1,125")."""
    return [i for i, (a, b) in enumerate(ranges) if a <= change <= b]


def induction_head(run: Run) -> tuple[int, int] | None:
    """The later-layer head with the highest prefix-matching score at the run's last step (None: one layer)."""
    found = circuits.induction_heads(run.checkpoints[-1].prefix)
    return found[0] if found else None


def head_name(head: tuple[int, int]) -> str:
    return f"L{head[0]}H{head[1]}"


def head_question(run: Run) -> Question:
    """Which head will become the induction head? (every head is an option; only a later layer's can be it; every
    head that meets the page's definition, prefix-matching at ``circuits.INDUCTION_AT`` or more, counts as right)"""
    cfg = run.config
    team = circuits.induction_heads(run.checkpoints[-1].prefix)
    if not team:
        raise NotComputable(_("a one-layer model has no later layer for an induction head"))
    names = [f"L{l}H{h}" for l in range(cfg.n_layers) for h in range(cfg.n_heads)]
    prefix = run.checkpoints[-1].prefix
    scores = joined(f"{n} {number(float(prefix[i // cfg.n_heads, i % cfg.n_heads]), 2)}" for i, n in enumerate(names))
    reveal = _("Prefix-matching scores at the last step: {scores}. The highest in a later layer is {head}; a "
               "layer-0 head cannot be an induction head, since its keys carry only their own token and "
               "position.").format(scores=scores, head=head_name(team[0]))
    if len(team) > 1:
        reveal += " " + _("This model has a team of induction heads: {heads} each prefix-match at {at} or more, the "
                          "page's own definition of an induction head, so each of them counts as right.").format(
            heads=joined(f"{head_name(h)} ({number(float(prefix[h]), 2)})" for h in team),
            at=number(circuits.INDUCTION_AT, 1))
    return Question(_("Which head will become the induction head?"), tuple(names), head_name(team[0]), reveal,
                    also=tuple(head_name(h) for h in team[1:]))


QUESTIONS = {"copy": copy_question, "drop": drop_question, "head": head_question}


def question(run: Run, kind: str) -> Question:
    return QUESTIONS[kind](run)


# ---------------------------------------------------------------------------------------------- lesson 6

def partner_question(run: Run) -> Question:
    """Which head of an earlier layer does the induction head need? (named by knockout, with its previous-token
    score; every earlier head whose knockout costs at least PARTNER_TIE of the costliest's counts as right)"""
    cfg = run.config
    head = induction_head(run)
    if head is None:
        raise NotComputable(_("a one-layer model has no later layer for an induction head"))
    ko = circuits.knockouts(cfg, run.final_weights(), run.checkpoints[-1].prefix)
    earlier = circuits.earlier_heads(head, cfg.n_heads)
    names = tuple(head_name(e) for e in earlier)
    top = float(ko.single[ko.partner])
    tied = [e for e in earlier if e != ko.partner and top > 0 and float(ko.single[e]) >= PARTNER_TIE * top]
    costs = joined(f"{head_name(e)} {signed(float(ko.single[e]), 2)}" for e in earlier)
    previous = float(run.checkpoints[-1].previous[ko.partner])
    reveal = _("Knocked out alone, the earlier heads add this much loss on the second copy: {costs} nats. The "
               "partner is {partner}; its previous-token score is {previous}.").format(
        costs=costs, partner=head_name(ko.partner), previous=number(previous, 2))
    if tied:
        reveal += " " + ngettext("Knocking out {heads} costs nearly as much (at least {share} of the costliest "
                                 "knockout), so it counts as right too.",
                                 "Knocking out each of {heads} costs nearly as much (at least {share} of the "
                                 "costliest knockout), so each counts as right too.", len(tied)).format(
            heads=joined(head_name(e) for e in tied), share=percent(PARTNER_TIE))
    prompt = (_("Which layer-0 head does the induction head need most? Knock each out and compare.") if head[0] == 1
              else _("Which head of an earlier layer does the induction head need most? Knock each out and "
                     "compare."))
    return Question(prompt, names, head_name(ko.partner), reveal, also=tuple(head_name(e) for e in tied))


def ov_question(run: Run) -> Question:
    """What does the induction head do with the token it attends to? (its OV circuit's copying score)"""
    head = induction_head(run)
    if head is None:
        raise NotComputable(_("a one-layer model has no later layer for an induction head"))
    weights = run.final_weights()
    partner = circuits.composition(run.config, weights).best_writer(head)
    found = circuits.circuits(run.config, weights, head, partner)
    copy, lower, other = (_("it raises that same token's logit: it copies"),
                          _("it lowers that same token's logit"), _("it raises some other token's logit"))
    correct = copy if found.copying > 0.5 and found.ov_diagonal >= 0.5 else \
        lower if found.copying < -0.5 else other
    reveal = _("The OV circuit of L{layer}H{head}: its copying score is {copying}, and for {share} of the tokens the "
               "logit it raises most is the token it read.").format(layer=head[0], head=head[1],
                                                                    copying=number(found.copying, 2),
                                                                    share=percent(found.ov_diagonal))
    return Question(_("What does the induction head write when it attends to a token?"), (copy, lower, other),
                    correct, reveal)


def copy_asked(_loaded, params: Params) -> Question:
    return copy_question(run_for(params))


def drop_asked(_loaded, params: Params) -> Question:
    return drop_question(run_for(params))


def head_asked(_loaded, params: Params) -> Question:
    return head_question(run_for(params))


def partner_asked(_loaded, params: Params) -> Question:
    return partner_question(run_for(params))


def ov_asked(_loaded, params: Params) -> Question:
    return ov_question(run_for(params))


def does_not_copy(_loaded, params: Params) -> tuple[bool, str]:
    learned, first, second = copies(run := run_for(params))
    best = float(run.checkpoints[-1].prefix.max())   # any head, the first layer's too
    return not learned and best < circuits.INDUCTION_AT, _(
        "the second copy's loss ends at {second} nats against {first} on the first").format(
        second=_nats(second), first=_nats(first))


def learns_to_copy(_loaded, params: Params) -> tuple[bool, str]:
    run = run_for(params)
    change = run.phase_change()
    return change is not None, (_("the phase change comes at step {step}").format(step=integer(change))
                                if change is not None else _("no phase change was recorded"))


def pair_agrees(_loaded, params: Params) -> tuple[bool, str]:
    """The knockout's partner is the earlier head that K-composes most with the induction head, and the pair costs
    more than any single head."""
    run = run_for(params)
    weights = run.final_weights()
    ko = circuits.knockouts(run.config, weights, run.checkpoints[-1].prefix)
    comp = circuits.composition(run.config, weights)
    head = ko.induction[0]
    by_composition = comp.best_writer(head)
    agrees = ko.partner is not None and ko.partner == by_composition and ko.pair > ko.intact + ko.single.max()
    return agrees, _("knockout names {ko}, composition {k} ({score} against a baseline of {baseline}); the "
                     "pair costs {pair} nats").format(ko=head_name(ko.partner) if ko.partner else "–",
                                                      k=head_name(by_composition),
                                                      score=number(comp.of(by_composition, head), 2),
                                                      baseline=number(comp.baseline, 2),
                                                      pair=_nats(ko.pair - ko.intact))


def head_copies(_loaded, params: Params) -> tuple[bool, str]:
    run = run_for(params)
    ko_head = induction_head(run)
    weights = run.final_weights()
    partner = circuits.composition(run.config, weights).best_writer(ko_head)
    found = circuits.circuits(run.config, weights, ko_head, partner)
    return found.copying >= 0.7, _("its OV copying score is {score}").format(score=number(found.copying, 2))
