"""The worked example's question (pages/lab_worked_example.py): what skipping the division by √d_k does to one
weight, answered by the example's own numbers (``steps``: ``maths.attention_steps``' dict, its ``raw`` scores and
``weights``)."""
from __future__ import annotations

from explorer import maths
from explorer.labs.notation import format_list
from explorer.labs.quiz import Question, compare_option
from explorer.words import numbers
from explorer.words.i18n import _


def scale_question(steps: dict) -> Question:
    """"Without the division by √d_k, is token 1's weight on token 2 larger, smaller or unchanged?"; the answer
    compares the softmax of the raw scores with the scaled one (a tie within 5e-4 is "unchanged")."""
    unscaled = maths.softmax(steps["raw"])
    w, w_raw = steps["weights"][0, 1], unscaled[0, 1]
    shown, shown_raw = numbers.number(w, 3), numbers.number(w_raw, 3)
    return Question(
        prompt=_("Skip step 2 (no division by √d_k). Token 1's weight on token 2 is {w} now; without the "
                 "division, which of these three would it be: larger, smaller or unchanged?").format(w=shown),
        options=(_("larger"), _("smaller"), _("unchanged")),
        correct=compare_option(w_raw, w, _("larger"), _("smaller"), _("unchanged"), tol=5e-4),
        reveal=_("Without the division, token 1's row is softmax({raw}) = {weights}: weight **{w_raw}** instead "
                 "of **{w}**. Bigger gaps between scores make softmax pick harder, so the low-scoring keys lose "
                 "weight and the high-scoring ones gain it.").format(raw=format_list(steps["raw"][0]),
                                                                     weights=format_list(unscaled[0]),
                                                                     w_raw=shown_raw, w=shown))
