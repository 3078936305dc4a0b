"""What lesson 4 ("How a model copies: induction heads") measures on the model: each copy's loss on a text that
ends in a repeat, where a head looks from the second copy, the head-role probe's strongest previous-token and
induction heads (:mod:`explorer.heads_do.roles`), the loss with heads knocked out (:mod:`explorer.heads_do.repeats`)
and the greedy continuation of a repeat. Same conventions as :mod:`explorer.lessons.claims`."""
from __future__ import annotations

import numpy as np

from explorer.attention.heads import parse_heads
from explorer.attention.result import extract
from explorer.generation.sampling import settings_from_params
from explorer.generation.steps import generate
from explorer.heads_do import repeats, roles
from explorer.labs.quiz import Question, near_best, near_edges
from explorer.model.loading import LoadedModel
from explorer.words import numbers
from explorer.words.i18n import N_, _, ngettext

from .claims import NotComputable, Params, param

LOSS_OPTIONS = (N_("higher than on the first copy"), N_("about the same (within a fifth)"),
                N_("lower, but more than half of it"), N_("less than half of it"))   # shown through _()
LOSS_TIE = 0.05     # a second copy's loss within this share of the first's from a band's edge: both bands count
LOOK_TIE = 0.05     # a place the head looks within this share of its attention of the most-looked-at: both count
KNOCK_TIE = 0.1     # nats: a knocked-out loss within this of an option's edge counts for both options
INDUCTION_TOP = 4   # the probe's strongest induction heads that the knockout step compares with (why 4: see there)


def _repeat(loaded: LoadedModel, params: Params):
    result = extract(loaded, param(params, "text"))
    try:
        offset, n = repeats.find_repeat(result.token_ids)
    except ValueError as err:
        raise NotComputable(str(err)) from err
    return result, offset, n


def _losses(loaded: LoadedModel, ids, heads=None) -> repeats.CopyLoss:
    try:
        return repeats.copy_losses(loaded, [int(i) for i in ids], heads)
    except ValueError as err:
        raise NotComputable(str(err)) from err


def loss_label(first: float, second: float) -> str:
    """The option of LOSS_OPTIONS that the second copy's loss takes against the first's."""
    if second > first * 1.2:
        return LOSS_OPTIONS[0]
    if second >= first * 0.8:
        return LOSS_OPTIONS[1]
    return LOSS_OPTIONS[2] if second >= first / 2 else LOSS_OPTIONS[3]


def repeat_loss(loaded: LoadedModel, params: Params) -> Question:
    """"On the second copy the model's loss is…": each copy's mean loss, measured."""
    result, offset, n = _repeat(loaded, params)
    loss = _losses(loaded, result.token_ids)
    prompt = _("The text ends with {n} tokens written twice. On the first copy the model's loss is {first} nats "
               "per token: random words cannot be guessed. On the second copy, which of these four is its loss, from "
               "higher than on the first copy to less than half of it?").format(
                   n=n, first=numbers.number(loss.first, 1))
    reveal = _("Measured: **{second}** nats per token on the second copy against {first} on the first, so the "
               "right next token's probability goes from about {p_first} to {p_second} on average. Nothing in the "
               "model knows these words go together: it copies what followed the same token earlier in the "
               "text.").format(second=numbers.number(loss.second, 2), first=numbers.number(loss.first, 2),
                               p_first=numbers.scientific(np.exp(-loss.first),
                                                          0), p_second=numbers.percent(np.exp(-loss.second)))
    right = loss_label(loss.first, loss.second)   # one of LOSS_OPTIONS, marked with N_()
    also = tuple(_(o) for o in loss_ties(loss.first, loss.second) if o != right)
    if also:
        reveal += " " + _("That is within {margin} of the first copy's loss from where two answers meet, so both "
                          "count as right.").format(margin=numbers.percent(LOSS_TIE))
    return Question(prompt, tuple(_(o) for o in LOSS_OPTIONS), _(right), reveal, also=also)


def loss_ties(first: float, second: float) -> tuple[str, ...]:
    """The options of LOSS_OPTIONS whose band edge (1.2, 0.8 and 0.5 of the first copy's loss) the second copy's loss
    lies within LOSS_TIE of (as a share of the first's): near-ties, each as right."""
    o = LOSS_OPTIONS
    return near_edges(second / first, {1.2: (o[1], o[0]), 0.8: (o[2], o[1]), 0.5: (o[3], o[2])}, LOSS_TIE) \
        if first > 0 else ()


def where_head_looks(loaded: LoadedModel, params: Params) -> Question:
    """"From the second copy, where does this head look most?", among ``repeats.LOOKS``, measured on the text."""
    result, offset, n = _repeat(loaded, params)
    layer, head = int(params.get("layer", 0)), int(params.get("head", 0))
    found = repeats.looks(result.weights[layer, head], offset, n)
    best, tied = near_best(found, LOOK_TIE)
    shares = "; ".join(_(repeats.LOOKS[k]) + ": " + numbers.percent(v)
                       for k, v in sorted(found.items(), key=lambda kv: -kv[1]))
    return Question(_("Layer {layer}, head {head}: from each token of the second copy, where does this head put "
                      "most of its attention? Which of these {n} tokens?").format(layer=layer, head=head,
                                                                                  n=len(repeats.LOOKS)),
                    tuple(_(look) for look in repeats.LOOKS.values()), _(repeats.LOOKS[best]),
                    _("Averaged over the {n} tokens of the second copy: {shares}.").format(n=n, shares=shares)
                    + ("" if not tied else " " + _("The top places are within {margin} of each other, so each of "
                                                   "them counts as right.").format(margin=numbers.percent(LOOK_TIE))),
                    also=tuple(_(repeats.LOOKS[k]) for k in tied))


def _strongest(loaded: LoadedModel, role: str) -> tuple[int, int, float]:
    table = roles.head_roles(loaded)
    row = table.loc[table[role].idxmax()]
    return int(row["layer"]), int(row["head"]), float(row[role])


def _step_heads(params: Params, result) -> list[tuple[int, int]]:
    heads, notes = parse_heads(param(params, "heads"), result.facts.n_layers, result.facts.n_heads)
    if notes or not heads:
        raise NotComputable(" ".join(notes) or _("the step names no heads"))
    return heads


def _plan(heads) -> dict[int, list[int]]:
    """``[(layer, head), …]`` as a knockout plan: layer -> its heads."""
    plan: dict[int, list[int]] = {}
    for layer, head in heads:
        plan.setdefault(int(layer), []).append(int(head))
    return plan


def knockout_repeat_loss(loaded: LoadedModel, params: Params) -> Question:
    """"Knock the step's heads out together: the second copy's loss…", measured, with each head alone and, for
    comparison, the probe's strongest induction heads (``INDUCTION_TOP``) without and with its strongest
    previous-token head."""
    result, offset, n = _repeat(loaded, params)
    chosen = _step_heads(params, result)
    clean, knocked = _losses(loaded, result.token_ids), _losses(loaded, result.token_ids, _plan(chosen))
    alone = "; ".join(_("L{layer}H{head} alone {loss}").format(
        layer=layer, head=head, loss=numbers.number(_losses(loaded, result.token_ids, {layer: [head]}).second, 2))
        for layer, head in chosen)
    # the probe ranks induction heads on one random test sequence (its seed 0); over nine draws its four strongest
    # stayed the same and the fifth changed, so the comparison takes four (tests/integration/test_lessons_real.py)
    four = [(int(a), int(b)) for a, b in
            roles.head_roles(loaded).nlargest(INDUCTION_TOP, "induction")[["layer", "head"]].to_numpy()]
    prev = _strongest(loaded, "previous_token")[:2]
    fours = _losses(loaded, result.token_ids, _plan(four)).second
    with_prev = _losses(loaded, result.token_ids, _plan([*four, prev])).second
    names = ", ".join(f"L{layer}H{head}" for layer, head in chosen)
    rise = knocked.second - clean.second
    options = (_("it hardly moves (less than 0.5 nats)"), _("it rises, but stays under half the first copy's"),
               _("it climbs back to half the first copy's or more"))
    right = options[0] if rise < 0.5 else options[1] if knocked.second < clean.first / 2 else options[2]
    also = tuple(o for o in near_edges(knocked.second, {clean.second + 0.5: options[:2],
                                                        clean.first / 2: options[1:]}, KNOCK_TIE) if o != right)
    reveal = _("Measured: {intact} nats per token intact, **{knocked}** with {names} knocked out ({alone}); the "
               "first copy's is {first}. For comparison, the probe's {k} strongest induction heads ({four}: it ranks "
               "heads on one random test sequence, and these {k} stay the same from draw to draw) knocked out "
               "together give {fours}, and {with_prev} with the previous-token head {prev} as well. Other "
               "induction heads copy too, and all of them read what the previous-token head wrote: knocking out "
               "induction heads alone leaves that half of the circuit in place.").format(
                   intact=numbers.number(clean.second, 2), knocked=numbers.number(knocked.second, 2), names=names,
                   alone=alone, first=numbers.number(clean.first, 2), k=len(four),
                   four=numbers.joined(f"L{a}H{b}" for a, b in four), fours=numbers.number(fours, 2),
                   with_prev=numbers.number(with_prev, 2), prev=f"L{prev[0]}H{prev[1]}")
    return Question(_("Knock out {names} together (their outputs set to 0). The loss on the second copy, {loss} "
                      "nats per token with every head, then: which of these three, from hardly moving to half the "
                      "first copy's or more?").format(names=names, loss=numbers.number(clean.second, 2)),
                    options, right, reveal + ("" if not also else " " + _(
                        "That is within {margin} nats of where two answers meet, so both count as right.").format(
                        margin=numbers.number(KNOCK_TIE, 1))), also=also)


# ---------------------------------------------------------------------------------------------- checks

def _shows_the_strongest(loaded: LoadedModel, params: Params, role: str) -> tuple[bool, dict]:
    """Whether the step's head (its ``layer`` and ``head`` parameters) is the probe's strongest of ``role``, and
    the words to say so with: that head ("L1H2") and its score as a share."""
    layer, head, score = _strongest(loaded, role)
    mine = (int(params.get("layer", 0)), int(params.get("head", 0)))
    return mine == (layer, head), {"head": f"L{layer}H{head}", "share": numbers.percent(score)}


def strongest_previous_token_head(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    ok, said = _shows_the_strongest(loaded, params, "previous_token")
    return ok, _("the head-role probe's strongest previous-token head is {head} ({share} of its attention on the "
                 "token before, over three sample texts)").format(**said)


def strongest_induction_head(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    ok, said = _shows_the_strongest(loaded, params, "induction")
    return ok, _("the head-role probe's strongest induction head is {head} ({share} of its attention on the token "
                 "after the earlier copy, on 20 random tokens twice)").format(**said)


def previous_before_induction(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    chosen = _step_heads(params, extract(loaded, param(params, "text")))
    prev, induction = _strongest(loaded, "previous_token"), _strongest(loaded, "induction")
    said = _("the probe's strongest previous-token head is {prev} and its strongest induction head {induction}; the "
             "step shows {shown}").format(prev=f"L{prev[0]}H{prev[1]}", induction=f"L{induction[0]}H{induction[1]}",
                                          shown=", ".join(f"L{a}H{b}" for a, b in chosen))
    return chosen == [prev[:2], induction[:2]] and prev[0] < induction[0], said


def writes_the_repeat(loaded: LoadedModel, params: Params, most: int = 4) -> tuple[bool, str]:
    prompt = param(params, "prompt")
    gen = generate(loaded, prompt, settings_from_params(params), check=False)
    ids = [int(i) for i in gen.ids[:gen.n_prompt]]
    last = ids[-1]
    earlier = [p for p in range(len(ids) - 1) if ids[p] == last]
    if not earlier:
        raise NotComputable(_("the prompt's last token does not appear earlier in it"))
    expected = ids[earlier[-1] + 1:earlier[-1] + 1 + most]
    wrote = [int(gen.picked(s)) for s in range(min(len(expected), gen.steps))]
    same = sum(a == b for a, b in zip(wrote, expected))
    said = ngettext("its first {k} greedy token is {wrote}; the earlier copy goes on {expected} ({same} of {n} the "
                    "same)",
                    "its first {k} greedy tokens are {wrote}; the earlier copy goes on {expected} ({same} of {n} the "
                    "same)", len(wrote)).format(k=len(wrote), wrote=repr(loaded.tokenizer.decode(wrote)),
                                                expected=repr(loaded.tokenizer.decode(expected)), same=same,
                                                n=len(expected))
    return same == len(expected), said
