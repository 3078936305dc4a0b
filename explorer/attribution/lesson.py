"""What the page says about one explanation: the faithfulness verdict, the IG completeness line, the question."""
from __future__ import annotations

import numpy as np

from explorer.attribution import agreement
from explorer.attribution.explain import METHODS, Explanation, label
from explorer.labs.quiz import Question
from explorer.words import numbers
from explorer.words.i18n import N_, _

AGREE, DISAGREE = N_("Yes: the same top word"), N_("No: different top words")   # the question's options, in English
TOP_TIE = 0.05   # words whose score's size comes within this share of a method's top word's are as much its top word


def agreement_sentence(e: Explanation) -> str:
    """The agreement map in words: its extremes (``agreement.summary``) and raw attention against integrated
    gradients, the pair the question asks about."""
    a, b = METHODS.index("attention"), METHODS.index("ig")
    rho = e.spearman[a, b]
    if e.first_is_sink:   # as the question: without the first word, which integrated gradients score 0 by construction
        rho = agreement.spearman(np.abs(e.scores[a, 1:]), np.abs(e.scores[b, 1:]))
    if not np.isfinite(rho):
        return agreement.summary(e.spearman, e.labels)
    if abs(rho) < 0.3:
        pair = _("Raw attention and integrated gradients: ρ = {rho}, they hardly agree on this text.")
    elif rho < 0.7:
        pair = _("Raw attention and integrated gradients: ρ = {rho}, a partial agreement.")
    else:
        pair = _("Raw attention and integrated gradients: ρ = {rho}, a close agreement.")
    said = agreement.summary(e.spearman, e.labels) + " " + pair.format(rho=numbers.signed(rho, 2))
    if e.first_is_sink:
        said += " " + _("That pair is compared without the first word, {word}: integrated gradients keep it in their "
                        "baseline (0 by construction), and this decoder's attention rests on it.").format(
            word=e.words[0])
    return said


def faithfulness_summary(e: Explanation) -> str:
    """Which method's top words move the score most (mean |change| over k), compared with random orders."""
    size = np.array([np.abs(row).mean() if np.isfinite(row).all() else np.nan for row in e.moved])  # (method+1,)
    methods = [i for i in range(len(METHODS)) if np.isfinite(size[i])]
    if not methods:
        return _("No method could be tested by removal on this text.")
    best = max(methods, key=lambda i: size[i])
    worst = min(methods, key=lambda i: size[i])
    chance = size[-1]
    beaten = [label(METHODS[i]) for i in methods if size[i] <= chance]
    if e.removal == "deleted":
        said = _("On this text, deleting the top words of {best} moves the {score} most ({best_size} on average over "
                 "k = {ks}), those of {worst} least ({worst_size}); words taken in a random order move it by "
                 "{chance}.")
    else:
        said = _("On this text, masking the top words of {best} moves the {score} most ({best_size} on average over "
                 "k = {ks}), those of {worst} least ({worst_size}); words taken in a random order move it by "
                 "{chance}.")
    out = said.format(best=label(METHODS[best]), score=e.score_name, best_size=numbers.number(size[best], 2),
                      ks=", ".join(map(str, e.ks)), worst=label(METHODS[worst]),
                      worst_size=numbers.number(size[worst], 2), chance=numbers.number(chance, 2))
    if beaten:
        out += " " + _("{methods} did no better than chance here.").format(methods=", ".join(beaten).capitalize())
    first = [label(METHODS[i]) for i in methods if e.top(METHODS[i], 1) == [0]]
    if e.first_is_sink and first:
        out += " " + _("Careful with the first word ({methods} rank it top): deleting it also deletes the token where "
                       "this decoder parks its attention, which shakes the model whatever the word means. Removal "
                       "tests judge the model on inputs it never saw.").format(methods=", ".join(first))
    return out


def ig_line(e: Explanation) -> str:
    """Integrated gradients' completeness check in one line: the sum, the difference it should equal, the gap."""
    ig = e.ig
    span = ig.f_input - ig.f_baseline
    if ig.relative_gap <= 0.1:
        said = _("Integrated gradients, {steps} evenly spaced steps from a blank-text baseline: the token scores sum "
                 "to {total}. Completeness says they should sum to f(text) − f(blank), here {f_text} and {f_blank}, a "
                 "difference of {span}. Gap (convergence delta): {gap} ({share} of the difference): small, so the "
                 "row is a trustworthy split of the difference.")
    else:
        said = _("Integrated gradients, {steps} evenly spaced steps from a blank-text baseline: the token scores sum "
                 "to {total}. Completeness says they should sum to f(text) − f(blank), here {f_text} and {f_blank}, a "
                 "difference of {span}. Gap (convergence delta): {gap} ({share} of the difference): large, so read "
                 "the integrated-gradients row with care (more steps would shrink it, at a cost).")
    return said.format(steps=ig.steps, total=numbers.signed(ig.scores.sum(), 3),
                       f_text=numbers.signed(ig.f_input, 3),
                       f_blank=numbers.signed(ig.f_baseline,
                                              3), span=numbers.signed(span, 3), gap=numbers.signed(ig.delta, 3),
                       share=numbers.percent(ig.relative_gap))


def top_word(e: Explanation, method: str) -> int | None:
    """``method``'s top word (an index into ``e.words``) as the question compares it: in a decoder whose first word
    is its first token (``e.first_is_sink``) that word is left out, since integrated gradients keep it in their
    baseline (it scores 0 there by construction) and attention rests on it whatever it means (the attention sink)."""
    skip = 1 if e.first_is_sink else 0
    order = [i for i in e.top(method, skip + 1) if i >= skip]
    return order[0] if order else None


def tied_top(e: Explanation, method: str) -> set[int]:
    """``method``'s top word (as :func:`top_word` picks it) and every word whose score's size comes within TOP_TIE of
    it (the first word left out where :func:`top_word` leaves it out)."""
    top = top_word(e, method)
    if top is None:
        return set()
    sizes = np.abs(e.scores[METHODS.index(method)])
    skip = 1 if e.first_is_sink else 0
    return {i for i in range(skip, len(sizes)) if sizes[i] >= (1 - TOP_TIE) * sizes[top]} | {top}


def top_word_question(e: Explanation) -> Question:
    """"Will raw attention and integrated gradients agree on the top word?", answered by this explanation, the
    first word left out of both where integrated gradients cannot score it (``top_word``)."""
    att, ig = top_word(e, "attention"), top_word(e, "ig")
    same = att is not None and att == ig
    words = [e.words[t] if t is not None else "—" for t in (att, ig)]
    if same:
        reveal = _("Last-layer attention's top word is **{first}**; integrated gradients' is **{second}**. They agree "
                   "here, which is not the rule: look at the other rows and at the agreement map.")
    else:
        reveal = _("Last-layer attention's top word is **{first}**; integrated gradients' is **{second}**. Where the "
                   "last layer looks is not what the prediction depends on: attention describes one step of the "
                   "computation, integrated gradients the whole model's sensitivity.")
    reveal = reveal.format(first=words[0], second=words[1])
    prompt = _("Will raw attention (last layer, mean of heads) and integrated gradients agree on the most "
               "important word? Of these two: the same top word, or different ones?")
    if e.first_is_sink:
        prompt = _("Will raw attention (last layer, mean of heads) and integrated gradients agree on the most "
                   "important word, the first word left out of both? Of these two: the same top word, or different "
                   "ones?")
        reveal += " " + _("Both leave out the first word, **{word}**, to be fair to each: integrated gradients keep it "
                          "in their blank-text baseline, so it scores 0 there by construction, while this decoder's "
                          "attention rests on it whatever it means (the attention sink: {share} of the last layer's "
                          "attention from the predicting token goes to it here).").format(
            word=e.words[0], share=numbers.percent(e.scores[METHODS.index('attention'), 0]))
    agree, disagree = _(AGREE), _(DISAGREE)
    att_tied, ig_tied = tied_top(e, "attention"), tied_top(e, "ig")
    either = bool(att_tied & ig_tied) and not (len(att_tied) == len(ig_tied) == 1 and same)
    if either:
        reveal += " " + _("A method's top word here wins by less than {margin} of its score over another word, so "
                          "both answers count as right.").format(margin=numbers.percent(TOP_TIE))
    return Question(prompt, (agree, disagree), agree if same else disagree, reveal,
                    also=((disagree if same else agree),) if either else ())

