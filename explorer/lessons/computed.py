"""Lesson questions answered by the model a step shows, and checks of the claims a lesson writes by hand (no
Streamlit, no plotly here).

A step's question may be *computed*: ``question = { computed = "logit_lens_first_top" }`` names a function of
``COMPUTED`` that runs on the step's model with the step's parameters, through the same core functions its page uses,
and returns the :class:`~explorer.labs.quiz.Question` (options, the right one, an explanation with the measured
numbers). A step whose hand-written question or notes depend on the model names ``check = "rows_sum_to_one"`` (or
a list of names) from ``CHECKS``: each measures the claim on the model and says whether the model agrees.

``ask``/``asked`` run a step's computed question (``asked`` turns a failure into the one sentence a class sees
instead: another model, a prompt too short); ``contradiction`` runs a step's checks and returns None when the model
agrees, else one sentence with the step, the claim and the measured value. The measuring functions are in
``explorer.lessons.claims``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from explorer.labs.quiz import Question
from explorer.model.loading import LoadedModel
from explorer.sitemap import table
from explorer.words.i18n import N_, _

from . import atlas_claims, claims, induction_claims, learning_claims, patching_claims, score_claims
from .claims import NotComputable
from .model import Step
from .pages import STEP_PAGES

Params = Mapping[str, str]


@dataclass(frozen=True)
class Computed:
    """A computed question: ``ask(loaded, params) -> Question`` (NotComputable when it cannot be asked here);
    ``pages`` it reads the parameters of; ``about``: what it asks, before it is computed (the list of steps);
    ``open_page``: the step's page stays open while the question is asked, since what the page does next (a run
    training) is its reveal (the page folds only what says the answer in words)."""
    ask: Callable[[LoadedModel, Params], Question]
    pages: tuple[str, ...]
    about: str
    open_page: bool = False


@dataclass(frozen=True)
class Check:
    """A claim of a lesson, measured: ``measure(loaded, params) -> (the model agrees, what was measured)``;
    ``claim`` as the lesson makes it; ``pages`` it reads the parameters of."""
    measure: Callable[[LoadedModel, Params], tuple[bool, str]]
    claim: str
    pages: tuple[str, ...]


HEATMAPS, FLIP, WRITE, HEADS_DO = table.HEATMAPS.file, table.FLIP.file, table.WRITE.file, table.HEADS_DO.file
COMPARE, LEARN, PATCH = table.COMPARE.file, table.LEARN.file, table.PATCH.file

COMPUTED: dict[str, Computed] = {
    "logit_lens_first_top": Computed(claims.logit_lens_first_top, (WRITE,),
                                     N_("from which layer on the logit lens puts the written token on top")),
    "repeat_loss": Computed(induction_claims.repeat_loss, (HEATMAPS, COMPARE),
                            N_("how the model's loss on the second copy of a repeat compares with the first")),
    "where_head_looks": Computed(induction_claims.where_head_looks, (HEATMAPS,),
                                 N_("where the head looks from the second copy of a repeat")),
    "knockout_repeat_loss": Computed(induction_claims.knockout_repeat_loss, (COMPARE,),
                                     N_("the second copy's loss with the step's heads knocked out")),
    "without_the_scale": Computed(score_claims.without_the_scale, (HEATMAPS,),
                                  N_("whether the cell's weight grows or shrinks without the 1/√d_k scale")),
    "position_part": Computed(score_claims.position_part, (HEATMAPS,),
                              N_("which token or position part of a layer-0 score is largest")),
    "shared_key_head": Computed(score_claims.shared_key_head, (HEATMAPS,),
                                N_("which query heads share the head's key head")),
    "learn_copy": Computed(learning_claims.copy_asked, (LEARN,),
                           N_("whether the model on screen learns to copy the repeated segment"), open_page=True),
    "learn_drop": Computed(learning_claims.drop_asked, (LEARN,),
                           N_("at which step the loss on the second copy drops"), open_page=True),
    "learn_head": Computed(learning_claims.head_asked, (LEARN,), N_("which head becomes the induction head")),
    "learn_partner": Computed(learning_claims.partner_asked, (LEARN,),
                              N_("which head of an earlier layer the induction head needs, by knockout")),
    "learn_ov": Computed(learning_claims.ov_asked, (LEARN,),
                         N_("what the induction head's OV circuit writes for the token it attends to")),
    "patch_word_until": Computed(patching_claims.word_until, (PATCH,),
                                 N_("up to which layer the changed word's own position carries the answer")),
    "patch_path_sender": Computed(patching_claims.path_sender, (PATCH,),
                                  N_("how much of the answer the best single head brings back through the "
                                     "receiver alone")),
    "patch_directions": Computed(patching_claims.directions, (PATCH,),
                                 N_("whether the head that restores most also takes away most in the other "
                                    "direction")),
    "patch_knockout": Computed(patching_claims.knockout_vs_patch, (PATCH,),
                               N_("how much of the answer knocking the head out takes away, against patching it")),
}

CHECKS: dict[str, Check] = {
    "rows_sum_to_one": Check(claims.rows_sum_to_one, N_("every row of attention weights adds up to exactly 1"),
                             (HEATMAPS, FLIP)),
    "recompute_agrees": Check(claims.recompute_agrees, N_("our own recompute of the head agrees with the model's "
                              "weights (the tick under the chart)"), (HEATMAPS,)),
    "encoder_reads_later": Check(claims.encoder_reads_later, N_("the query word reads the words after it too (no "
                                 "causal mask)"), (FLIP,)),
    "some_heads_flip": Check(claims.some_heads_flip, N_("some heads, but not most, move the query's attention from the "
                             "first candidate to the second"), (FLIP,)),
    "causal_upper_zero": Check(claims.causal_upper_zero, N_("no token puts any weight on a later token (exactly 0)"),
                               (HEATMAPS,)),
    "first_token_sinks": Check(claims.first_token_sinks, N_("many heads park most of their attention on the first "
                               "token"), (HEATMAPS,)),
    "temperature_flattens": Check(claims.temperature_flattens, N_("a temperature of 2 instead of 1 flattens the "
                                  "next-token distribution"), (WRITE,)),
    "writers_look_elsewhere": Check(claims.writers_look_elsewhere, N_("a head can push the written token up a lot "
                                    "without attending strongly to one word of the prompt"), (WRITE,)),
    "top_writers_share": Check(claims.top_writers_share, N_("a handful of heads stand out, yet the five that push "
                               "the token up most carry only about half of all the heads' upward push (between a "
                               "third and three fifths; pushes toward the token only)"),
                               (WRITE,)),
    "looking_vs_mattering_weak": Check(claims.looking_vs_mattering_weak, N_("the heads whose attention flips most are "
                                       "not the heads whose knockout matters most (a weak rank correlation of the "
                                       "sizes)"),
                                       (HEADS_DO,)),
    "writes_the_repeat": Check(induction_claims.writes_the_repeat, N_("the model's greedy continuation copies what "
                               "followed the prompt's last token the first time"), (WRITE,)),
    "strongest_previous_token_head": Check(induction_claims.strongest_previous_token_head, N_("this is the model's "
                                           "strongest previous-token head"), (HEATMAPS,)),
    "strongest_induction_head": Check(induction_claims.strongest_induction_head, N_("this is the model's strongest "
                                      "induction head"), (HEATMAPS,)),
    "corpus_previous_token": Check(atlas_claims.corpus_previous_token, N_("on the head atlas's corpus of real text "
                                   "too, no head's top key is the previous token more often"), (HEATMAPS,)),
    "corpus_induction": Check(atlas_claims.corpus_induction, N_("on the head atlas's corpus of real text too, it is "
                              "among the model's strongest induction heads"), (HEATMAPS,)),
    "previous_before_induction": Check(induction_claims.previous_before_induction, N_("the two heads shown are the "
                                       "strongest previous-token head and, in a later layer, the strongest "
                                       "induction head"), (COMPARE,)),
    "split_adds_up": Check(score_claims.split_adds_up, N_("the token and position parts add up to the score exactly"),
                           (HEATMAPS,)),
    "curve_meets_score": Check(score_claims.curve_meets_score, N_("the distance curve at the pair's own distance is "
                               "the heatmap's score"), (HEATMAPS,)),
    "shared_keys_differ": Check(score_claims.shared_keys_differ, N_("query heads that share one key head still "
                                "attend differently"), (HEATMAPS,)),
    "one_layer_does_not_copy": Check(learning_claims.does_not_copy, N_("this run does not learn to copy: no head "
                                     "prefix-matches, and the second copy's loss stays above half the first's"),
                                     (LEARN,)),
    "phase_change_recorded": Check(learning_claims.learns_to_copy, N_("this run learns to copy in a phase change"),
                                   (LEARN,)),
    "knockout_and_composition_agree": Check(learning_claims.pair_agrees, N_("knockout and K-composition name the same "
                                            "partner of the induction head in an earlier layer, and the pair costs "
                                            "more than any one head"), (LEARN,)),
    "patch_pair_right": Check(patching_claims.pair_is_right, N_("the model prefers the clean answer after the "
                              "clean text and the other answer after the corrupted text"), (PATCH,)),
    "patch_word_then_last": Check(patching_claims.word_then_last, N_("early layers carry the answer at the changed "
                                  "word's position, late layers at the last position, and the word's position "
                                  "lets go before the last position takes over"), (PATCH,)),
    "patch_few_heads": Check(patching_claims.few_heads, N_("only a handful of heads (fewer than ten) move the "
                             "answer by a tenth or more when patched alone"), (PATCH,)),
    "patch_receiver_most": Check(patching_claims.receiver_restores_most, N_("the receiver is the head whose clean "
                                 "output restores most of the answer"), (PATCH,)),
    "induction_head_copies": Check(learning_claims.head_copies, N_("the induction head's OV circuit copies (a copying "
                                   "score of 0.7 or more)"), (LEARN,)),
}


def opens_page(step: Step) -> bool:
    """Whether the step's question holds its page open while it is asked (``Computed.open_page``)."""
    return step.computed in COMPUTED and COMPUTED[step.computed].open_page


def known(table: Mapping[str, object]) -> str:
    return ", ".join(sorted(table))


def step_model(step: Step) -> str:
    """The model the step's page shows: its model parameter, else the page's default."""
    spec = STEP_PAGES[step.page]
    return step.params.get(spec.model_param, spec.default_model)


def measured_on(step: Step) -> str:
    """What a step's question and checks measure, as its sentences name it: the model, or for a training step
    (pages/learn.py, whose measures read a ready-made run, not the loaded model) that run."""
    return _("the ready-made run of its settings") if step.page == LEARN else step_model(step)


def ask(step: Step, loaded: LoadedModel) -> Question:
    """The step's computed question on ``loaded``; NotComputable (one sentence) when it cannot be asked."""
    try:
        return COMPUTED[step.computed].ask(loaded, step.params)
    except NotComputable:
        raise
    except ValueError as err:   # a page's own refusal (an encoder asked to write, a word not in the text)
        raise NotComputable(str(err)) from err


def asked(step: Step, loaded: LoadedModel) -> Question | str:
    """The step's computed question, or the one sentence the step shows instead when it cannot be computed."""
    try:
        return ask(step, loaded)
    except NotComputable as err:
        return unavailable(step, str(err))


def unavailable(step: Step, why: str) -> str:
    """The sentence a step shows in place of a question it could not compute on its model."""
    return _("This step's question is measured on {model}, and here it could not be: {why}.").format(
        model=measured_on(step), why=why.rstrip("."))


def contradiction(step: Step, number: int, loaded: LoadedModel) -> str | None:
    """None when ``loaded`` agrees with every claim the step checks; else one sentence per claim it contradicts (or
    cannot measure), naming step ``number`` (from 1), the claim and the measured value."""
    found = []
    for name in step.checks:
        check = CHECKS[name]
        try:
            agrees, measured = check.measure(loaded, step.params)
        except ValueError as err:   # NotComputable included
            agrees, measured = False, _("it could not be measured ({why})").format(why=str(err).rstrip("."))
        if not agrees:
            found.append(_("Step {n} (“{title}”) says {claim}, but on {model} {measured}.").format(
                n=number, title=step.title, claim=_(check.claim), model=measured_on(step), measured=measured))
    return " ".join(found) or None


__all__ = ["CHECKS", "COMPUTED", "Check", "Computed", "NotComputable", "ask", "asked", "contradiction", "known",
           "measured_on", "opens_page", "step_model", "unavailable"]
