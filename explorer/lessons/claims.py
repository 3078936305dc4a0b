"""What a lesson's computed questions and checks measure on a model (``explorer.lessons.computed`` holds the
registry): each function takes the loaded model and the step's page parameters (the link's strings) and runs the
core functions that page runs, so the number measured is the number the class sees on the page.

A computed question returns a :class:`~explorer.labs.quiz.Question`; a check returns ``(the model agrees, what was
measured)`` in words. Both raise :class:`NotComputable` (one sentence) when the step cannot be measured on this
model: a missing text, an encoder asked to write, a prompt too short to have layers to read.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from explorer.attention import analysis
from explorer.attention.result import extract
from explorer.generation import readout
from explorer.generation.sampling import Settings, process, settings_from_params
from explorer.generation.steps import Generation, generate
from explorer.heads_do import knockout, pairs
from explorer.labs.quiz import Question
from explorer.model.loading import LoadedModel
from explorer.words import i18n, numbers
from explorer.words.i18n import _, ngettext

Params = Mapping[str, str]
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


class NotComputable(ValueError):
    """This step cannot be measured on this model; ``str()`` is one sentence for the class."""


def param(params: Params, name: str) -> str:
    """The step's parameter ``name``, stripped; NotComputable when the step gives none."""
    value = str(params.get(name, "")).strip()
    if not value:
        raise NotComputable(_("the step gives no {name} to measure on").format(name=repr(name)))
    return value


def unescaped(text: str) -> str:
    """Markdown text of a computed question as plain text (the handout prints it as it reads)."""
    return re.sub(r"\\([^\w\s])", r"\1", text)


def shown(tokenizer, token_id: int) -> str:
    """A token as the page writes it, quoted so a leading space shows (“␣Paris”), markdown characters escaped."""
    text = tokenizer.decode([int(token_id)]).replace(" ", "␣").replace("\n", "⏎")
    return "“" + _MARKDOWN.sub(r"\\\1", text) + "”"


def ordinal(n: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th", 23 -> "23rd" (German "1.", Spanish "1.º")."""
    if i18n.current() == "de":
        return numbers.integer(n) + "."
    if i18n.current() == "es":
        return numbers.integer(n) + ".º"
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return numbers.integer(n) + tail


def written(loaded: LoadedModel, params: Params) -> tuple[Generation, int]:
    """The generation the "Watch it write" page runs for these parameters (prompt, mode, new, temp, topk, topp,
    seed) and the step it shows (``step``)."""
    gen = generate(loaded, param(params, "prompt"), settings_from_params(params), check=False)
    step = int(params.get("step", 0))
    if step >= gen.steps:
        raise NotComputable(ngettext("the model stopped after {n} token, before step {step}",
                                     "the model stopped after {n} tokens, before step {step}", gen.steps).format(
            n=gen.steps, step=step))
    return gen, step


# ---------------------------------------------------------------------------------------------- computed questions

def layer_ranges(n_layers: int) -> list[tuple[int, int]]:
    """Options for "from which layer on": the last layer alone, the ones before it in up to three even runs."""
    before = [(int(part[0]), int(part[-1])) for part in np.array_split(np.arange(n_layers - 1), 3) if len(part)]
    return [*before, (n_layers - 1, n_layers - 1)]


def _range_label(low: int, high: int, last: int) -> str:
    if low == high == last:
        return _("only after the last layer, {last}").format(last=last)
    return (_("after layer {layer}").format(layer=low) if low == high
            else _("after one of layers {low}–{high}").format(low=low, high=high))


def logit_lens_first_top(loaded: LoadedModel, params: Params) -> Question:
    """"From which layer on is the written token the logit lens's top guess?", read as the page's logit lens reads
    it: the residual after each block through the final norm and the unembedding (``readout.logit_lens``); the
    options are runs of layers that cover them all, the right one holds the first layer from which the token stays
    on top."""
    gen, step = written(loaded, params)
    lens = readout.logit_lens(loaded, gen, step, k=1)
    ranks, n = lens.picked_rank, len(lens.picked_rank)
    token = shown(loaded.tokenizer, gen.picked(step))
    if n < 2:
        raise NotComputable(_("the model has a single layer: there is no layer before the last to compare"))
    if ranks[-1] != 0:
        raise NotComputable(_("the token written, {token}, was sampled: it is not the lens's top guess even after "
                              "the last layer").format(token=token))
    first = n - 1
    while first > 0 and ranks[first - 1] == 0:
        first -= 1
    ranges = layer_ranges(n)
    labels = [_range_label(low, high, n - 1) for low, high in ranges]
    right = next(label for (low, high), label in zip(ranges, labels) if low <= first <= high)
    earlier = sorted({x for x in (first - 1, first - 2, first - 6, n // 2, 0) if 0 <= x < first}, reverse=True)
    before = "; ".join(_("after layer {layer} it is {rank} (p = {p}; top: {top})").format(
        layer=x, rank=ordinal(int(ranks[x]) + 1), p=numbers.scientific(lens.picked_prob[x], 1),
        top=shown(loaded.tokenizer, lens.ids[x, 0])) for x in earlier)
    reveal = ((_("{token} is the lens's top guess from layer **{layer}** on (the last), with p = {p} there.")
               if first == n - 1 else
               _("{token} is the lens's top guess from layer **{layer}** on, with p = {p} there.")).format(
                   token=token, layer=first, p=numbers.number(lens.picked_prob[first], 3))
              + " " + (_("Before that: {before}.").format(before=before) + " " if before else "")
              + _("The lens reads each layer's residual as if it were the last one (the final norm, then the "
                  "unembedding)."))
    context = _MARKDOWN.sub(r"\\\1", loaded.tokenizer.decode(gen.ids[:gen.n_prompt + step])[-80:])
    prompt = _("“…{context}”: the model writes {token} next. Reading the residual stream after each of its {n} "
               "layers (0–{last}) with the logit lens, from which layer on is {token} the top guess? Which of these "
               "{runs} runs of layers, from layer 0 to the last, {last}?").format(
                   context=context, token=token, n=n, last=n - 1, runs=len(labels))
    return Question(prompt, tuple(labels), right, reveal)


# ---------------------------------------------------------------------------------------------- checks

def rows_sum_to_one(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    result = extract(loaded, param(params, "text"))
    worst = float(np.abs(result.weights.astype(np.float64).sum(-1) - 1).max())
    layers, heads = result.weights.shape[:2]
    return worst <= 1e-4, _("the rows of its {layers}×{heads} heads differ from 1 by at most {worst}").format(
        layers=layers, heads=heads, worst=numbers.scientific(worst, 1))


def recompute_agrees(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    result = extract(loaded, param(params, "text"))
    if result.fidelity is None:
        raise NotComputable(_("this model's queries and keys cannot be captured, so nothing is recomputed"))
    layer, head = int(params.get("layer", 0)), int(params.get("head", 0))
    diff = float(result.fidelity[layer, head])
    return diff < 1e-5, _("our recompute of {head} differs from the model's weights by at most {diff} (the page's "
                          "tick needs less than 1e-5)").format(head=f"L{layer}H{head}",
                                                               diff=numbers.scientific(diff, 1))


def _query_rows(result, params: Params, name: str = "query") -> list[int]:
    return analysis.query_rows(result, params.get(name, "it"))


def encoder_reads_later(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    result = extract(loaded, param(params, "text"))
    rows = _query_rows(result, params)
    later = [p for p, w in enumerate(result.word_ids) if p > max(rows) and w >= 0]
    if not later:
        raise NotComputable(_("no word comes after {query}").format(query=repr(params.get("query", "it"))))
    on_later = result.weights[:, :, rows][..., later].sum(-1).mean(-1)   # (layer, head)
    word = params.get("query", "it")
    said = _("{word} puts {mean} of its attention on the words after it on average over the heads (up to {most} in "
             "one head)").format(word=repr(word), mean=numbers.percent(on_later.mean()),
                                 most=numbers.percent(on_later.max()))
    return (not result.facts.causal) and float(on_later.max()) > 0.01, said


def _flip(loaded: LoadedModel, params: Params, text="text", text_b="text_b", query="query", cands=None):
    words = cands or [w.strip() for w in params.get("cands", "animal,street").split(",") if w.strip()]
    a, b, q, _w = pairs.flip_texts(loaded.kind, param(params, text), param(params, text_b), params.get(query, "it"))
    return analysis.flip(extract(loaded, a), extract(loaded, b), q, words), words


def some_heads_flip(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    found, words = _flip(loaded, params)
    n, total = int(found.table["flips"].sum()), len(found.table)
    return 1 <= n <= total / 2, ngettext(
        "{n} of {total} heads leans to {first} in the first sentence and to {second} in the second",
        "{n} of {total} heads lean to {first} in the first sentence and to {second} in the second", n).format(
        n=n, total=total, first=repr(words[0]), second=repr(words[1]))


def causal_upper_zero(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    weights = extract(loaded, param(params, "text")).weights
    upper = float(np.triu(weights, k=1).max())    # (layer, head, query, key): keys after the query
    return upper == 0.0, _("the largest weight any head puts on a later token is {upper}").format(
        upper=numbers.scientific(upper, 1))


def first_token_sinks(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    weights = extract(loaded, param(params, "text")).weights
    on_first = weights[:, :, 1:, 0].mean(-1)    # (layer, head): averaged over the queries after the first token
    many, total = int((on_first > 0.5).sum()), on_first.size
    return many >= total / 3, _("{many} of {total} heads put more than half of their attention (averaged over the "
                                "later tokens) on the first token").format(many=many, total=total)


def temperature_flattens(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    gen = generate(loaded, param(params, "prompt"), Settings(1), check=False)
    at_1, at_2 = process(gen.logits[0], 1.0), process(gen.logits[0], 2.0)
    entropy = [float(-(p[p > 0] * np.log(p[p > 0])).sum()) for p in (at_1, at_2)]
    said = _("the most likely next token's probability goes from {p1} to {p2} and the entropy from {h1} to {h2} "
             "nats").format(p1=numbers.percent(at_1.max(), 1), p2=numbers.percent(at_2.max(), 1),
                            h1=numbers.number(entropy[0], 2), h2=numbers.number(entropy[1], 2))
    return bool(entropy[1] > entropy[0] and at_2.max() < at_1.max()), said


def writers_look_elsewhere(loaded: LoadedModel, params: Params, top: int = 5) -> tuple[bool, str]:
    gen, step = written(loaded, params)
    effect = readout.direct_effect(loaded, gen, step).heads      # (layer, head)
    order = np.argsort(-effect.ravel())[:top]
    if gen.query(step) < 2:
        raise NotComputable(_("the prompt is too short to have words between its first token and the last"))
    # each strong writer's largest weight on one prompt token between the first token and the one being read
    middle = {int(i): float(gen.row(step, *divmod(int(i), gen.n_heads))[1:-1].max()) for i in order}
    calm = min(middle, key=middle.get)
    layer, head = divmod(calm, gen.n_heads)
    said = ngettext("of the {top} head that pushes {token} up most, {head} (direct effect {effect}) puts at most "
                    "{share} of its attention on any one word between the first token and the one being read",
                    "of the {top} heads that push {token} up most, {head} (direct effect {effect}) puts at most "
                    "{share} of its attention on any one word between the first token and the one being read",
                    len(order)).format(top=len(order), token=shown(loaded.tokenizer, gen.picked(step)),
                                       head=f"L{layer}H{head}", effect=numbers.signed(effect[layer, head], 2),
                                       share=numbers.percent(middle[calm]))
    return middle[calm] < 0.5, said


def top_writers_share(loaded: LoadedModel, params: Params, top: int = 5) -> tuple[bool, str]:
    """The ``top`` heads that push the written token up most, as a share of all the heads' upward push: pushes
    toward the token only (a head that pushes it down is not counted, neither in the top nor in the total)."""
    gen, step = written(loaded, params)
    effects = readout.direct_effect(loaded, gen, step).heads.ravel()
    up = np.sort(effects[effects > 0])[::-1]   # each head's push toward the token, largest first
    share = float(up[:top].sum() / up.sum()) if up.size else float("nan")
    said = ngettext("the {top} heads that push {token} up most carry {share} of the upward push of the {n} head "
                    "that pushes it up (of {total})",
                    "the {top} heads that push {token} up most carry {share} of the upward push of the {n} heads "
                    "that push it up (of {total})", up.size).format(
        top=top, token=shown(loaded.tokenizer, gen.picked(step)), share=numbers.percent(share), n=up.size,
        total=effects.size)
    return 0.35 <= share <= 0.6, said


def looking_vs_mattering_weak(loaded: LoadedModel, params: Params) -> tuple[bool, str]:
    cands = [param(params, "ko_c1"), param(params, "ko_c2")]
    found, _words = _flip(loaded, params, query="ko_query", cands=cands)
    query = params.get("ko_query", "it")
    swept = knockout.sweep(loaded, param(params, "text"), param(params, "text_b"), params.get("ablation", "zero"),
                           candidates=cands, query=query)
    rho = knockout.size_spearman(knockout.flip_map(found.table), swept.effect)   # sizes: why, see there
    return bool(np.isfinite(rho)) and abs(rho) < 0.4, _("the rank correlation between the sizes of the heads' "
                                                        "attention flips and of their knockout effects is ρ = "
                                                        "{rho}").format(rho=numbers.signed(rho, 2))
