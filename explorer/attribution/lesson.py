"""What the page says about one explanation: the faithfulness verdict, the IG completeness line, the question."""
from __future__ import annotations

import numpy as np

from explorer.attribution.agreement import summary
from explorer.attribution.explain import LABELS, METHODS, Explanation
from explorer.labs.quiz import Question

AGREE, DISAGREE = "Yes: the same top word", "No: different top words"


def agreement_sentence(e: Explanation) -> str:
    """The agreement map in words: its extremes (``agreement.summary``) and raw attention against integrated
    gradients, the pair the question asks about."""
    a, b = METHODS.index("attention"), METHODS.index("ig")
    rho = e.spearman[a, b]
    pair = ("" if not np.isfinite(rho) else f" Raw attention and integrated gradients: ρ = {rho:+.2f}, "
            + ("they hardly agree on this text." if abs(rho) < 0.3 else "a partial agreement." if rho < 0.7
               else "a close agreement."))
    return summary(e.spearman, e.labels) + pair


def faithfulness_summary(e: Explanation) -> str:
    """Which method's top words move the score most (mean |change| over k), compared with random orders."""
    size = np.array([np.abs(row).mean() if np.isfinite(row).all() else np.nan for row in e.moved])  # (method+1,)
    methods = [i for i in range(len(METHODS)) if np.isfinite(size[i])]
    if not methods:
        return "No method could be tested by removal on this text."
    best = max(methods, key=lambda i: size[i])
    worst = min(methods, key=lambda i: size[i])
    chance = size[-1]
    beaten = [LABELS[METHODS[i]] for i in methods if size[i] <= chance]
    verb = "deleting" if e.removal == "deleted" else "masking"
    out = (f"On this text, {verb} the top words of {LABELS[METHODS[best]]} moves the {e.score_name} most "
           f"({size[best]:.2f} on average over k = {', '.join(map(str, e.ks))}), those of "
           f"{LABELS[METHODS[worst]]} least ({size[worst]:.2f}); words taken in a random order move it by "
           f"{chance:.2f}.")
    if beaten:
        out += f" {', '.join(beaten).capitalize()} did no better than chance here."
    first = [LABELS[METHODS[i]] for i in methods if e.top(METHODS[i], 1) == [0]]
    if e.first_is_sink and first:
        out += (f" Careful with the first word ({', '.join(first)} rank it top): deleting it also deletes the "
                "token where this decoder parks its attention, which shakes the model whatever the word means. "
                "Removal tests judge the model on inputs it never saw.")
    return out


def ig_line(e: Explanation) -> str:
    """Integrated gradients' completeness check in one line: the sum, the difference it should equal, the gap."""
    ig = e.ig
    span = ig.f_input - ig.f_baseline
    return (f"Integrated gradients, {ig.steps} evenly spaced steps from a blank-text baseline: the token scores sum to "
            f"{ig.scores.sum():+.3f}. Completeness says they should sum to f(text) − f(blank), here "
            f"{ig.f_input:+.3f} and {ig.f_baseline:+.3f}, a difference of {span:+.3f}. Gap (convergence delta): "
            f"{ig.delta:+.3f} ({ig.relative_gap:.0%} of the difference)"
            + (": small, so the row is a trustworthy split of the difference." if ig.relative_gap <= 0.1 else
               ": large, so read the integrated-gradients row with care (more steps would shrink it, at a cost)."))


def top_word_question(e: Explanation) -> Question:
    """"Will raw attention and integrated gradients agree on the top word?", answered by this explanation."""
    att, ig = e.top("attention", 1), e.top("ig", 1)
    same = bool(att and ig and att[0] == ig[0])
    words = [e.words[t[0]] if t else "—" for t in (att, ig)]
    reveal = (f"Last-layer attention's top word is **{words[0]}**; integrated gradients' is **{words[1]}**. "
              + ("They agree here, which is not the rule: look at the other rows and at the agreement map."
                 if same else "Where the last layer looks is not what the prediction depends on: attention "
                 "describes one step of the computation, integrated gradients the whole model's sensitivity."))
    return Question("Will raw attention (last layer, mean of heads) and integrated gradients agree on the most "
                    "important word? Of these two: the same top word, or different ones?", (AGREE, DISAGREE),
                    AGREE if same else DISAGREE, reveal)
