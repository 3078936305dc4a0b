"""Six explanations of one prediction, side by side: which input words mattered, how far the methods agree, and
which of them is faithful.

The prediction is the measure of the "What heads do" page (``measures.make_probe``): for a decoder the log-odds
of two candidate next words after ``text + ' The word "it" refers to the'``, for an encoder the difference of the
query word's cosine with each candidate's final state. The words scored are the words of ``text`` (a decoder's
question after it is read but not scored; special tokens neither). A word's score is the sum of its tokens'.

| method | from the predicting position (decoder: the last token; encoder: the query word's tokens) |
|---|---|
| last-layer attention | the last layer's weights, mean over heads |
| attention rollout | ``analysis.rollout`` through every layer (residual mixed in), last layer's row |
| attention flow | ``flow.attention_flow``: maximum flow through the same layered graph (bounded in tokens) |
| value-weighted | the last layer's weight × value size (``values.value_weighted``), renormalised, mean of heads |
| gradient × input | ``gradients.gradient_x_input`` at the input embeddings |
| integrated gradients | ``gradients.integrated_gradients`` (Captum) from a blank-text baseline, with its gap |
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from explorer.attention.analysis import find_word, rollout, word_positions
from explorer.attention.result import extract
from explorer.attribution import agreement, faithfulness, flow, gradients
from explorer.heads_do.measures import make_probe
from explorer.heads_do.values import value_weighted
from explorer.model import families
from explorer.model.loading import LoadedModel
from explorer.words.i18n import N_, Later, _

METHODS = ("attention", "rollout", "flow", "value", "grad_input", "ig")
LABELS = {"attention": N_("last-layer attention"), "rollout": N_("attention rollout"), "flow": N_("attention flow"),
          "value": N_("value-weighted (last layer)"), "grad_input": N_("gradient × input"),
          "ig": N_("integrated gradients")}   # in English; ``label()`` says one in the current language
SHORT = {"attention": N_("last-layer attention"), "rollout": N_("rollout"), "flow": N_("flow"),
         "value": N_("value-weighted"), "grad_input": N_("gradient × input"),
         "ig": N_("integrated grad.")}      # figure labels: fit a phone
RANDOM = N_("random order")
MAX_TOKENS = int(os.environ.get("EXPLORER_EXPLAIN_MAX_TOKENS", "64"))   # IG runs the model 2 × steps times
Progress = Callable[[float, object], None]   # (fraction, message: a ``Later``, read in each waiting session's language)


def label(method: str) -> str:
    """A method's name, in the current language."""
    return _(LABELS[method])


@dataclass
class Explanation:
    """One prediction explained six ways.

    ``scores``: ``[method, word]`` in ``METHODS`` order (a row of NaN: that method was not computed, see
    ``notes``). ``spearman``/``kendall``: ``[method, method]`` on ``|scores|``. ``removed``: ``[method + random,
    k]`` the score after removing each method's top-k words (the last row: the mean over seeded random orders),
    ``moved`` the same minus ``score``.
    """
    model: str
    kind: str                  # "next-token" | "representation"
    text: str
    prompt: str                # what the model read
    candidates: list[str]
    score: float               # the prediction: log-odds (decoder) or cosine difference (encoder)
    words: list[str]
    scores: np.ndarray
    spearman: np.ndarray
    kendall: np.ndarray
    removed: np.ndarray
    ks: tuple[int, ...]
    ig: gradients.IGResult
    removal: str               # "deleted" | "masked"
    n_tokens: int
    first_is_sink: bool = False   # a decoder without a start token: the text's first word is its first token
    notes: list = field(default_factory=list)   # texts (``str()`` each where shown: some are ``Later``)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        """The methods' names in the current language (an explanation is computed once for every session; its
        words are made where it is shown)."""
        return [label(m) for m in METHODS]

    @property
    def short_labels(self) -> list[str]:
        return [_(SHORT[m]) for m in METHODS]

    @property
    def moved(self) -> np.ndarray:
        return self.removed - self.score

    def top(self, method: str, k: int = 3) -> list[int]:
        return agreement.top_k(self.scores[METHODS.index(method)], k)

    @property
    def score_name(self) -> str:
        c1, c2 = self.candidates
        if self.kind == "next-token":
            return _("log-odds {first} vs {second}").format(first=c1, second=c2)
        return _("cos difference {first} − {second}").format(first=c1, second=c2)


def _text_tokens(loaded: LoadedModel, text: str, ids: list[int]) -> int:
    """How many of the decoder's input tokens belong to ``text`` (the rest is the question after it)."""
    own = loaded.tokenizer(text.rstrip())["input_ids"]
    if ids[:len(own)] != list(own):
        raise ValueError(Later(N_("The text's tokens change when the question is appended; end the text with a full "
                                  "stop.")))
    return len(own)


def explain(loaded: LoadedModel, text: str, candidates=("animal", "street"), query: str = "it",
            steps: int = gradients.STEPS, progress: Progress | None = None) -> Explanation:
    """Score the words of ``text`` six ways for the probe's prediction, then compare and test the rankings."""
    report = progress or (lambda fraction, message: None)
    families.require(loaded.model, "explain")
    if not text or not text.strip():
        raise ValueError(Later(N_("The text is empty: type a sentence to explain.")))
    seconds, notes = {}, []

    def timed(name, fn):
        start = time.perf_counter()
        out = fn()
        seconds[name] = time.perf_counter() - start
        return out

    report(0.02, Later(N_("Measuring the prediction and reading attention…")))
    probe = make_probe(loaded, text, list(candidates), query)
    if probe.inputs["input_ids"].shape[1] > MAX_TOKENS:
        raise ValueError(Later(N_("This page explains texts of up to {most} tokens (what the model reads here is "
                                  "{n}): integrated gradients run the model {runs} times over. Shorten the text."),
                               most=MAX_TOKENS, n=probe.inputs['input_ids'].shape[1], runs=2 * steps))
    notes += probe.notes
    no_values = families.refusal(loaded.model, "values")
    if no_values:   # that method's row stays NaN, and the note says why
        notes.append(no_values)
        vw, result = None, timed("attention", lambda: extract(loaded, probe.prompt))
    else:
        vw = timed("attention", lambda: value_weighted(loaded, probe.prompt))
        result = vw.result
    ids = probe.inputs["input_ids"][0].tolist()
    if result.token_ids != ids:
        raise ValueError(Later(N_("The text is longer than {model} reads at once: shorten it."),
                               model=loaded.spec.name))
    n = len(ids)
    if loaded.kind == "decoder":
        n_text, positions = _text_tokens(loaded, text, ids), [n - 1]
    else:
        n_text, positions = n, word_positions(result, find_word(result, query, last=True))
    words = sorted({w for t, w in enumerate(result.word_ids) if w >= 0 and t < n_text})
    word_tokens = [[t for t, w in enumerate(result.word_ids) if w == word and t < n_text] for word in words]
    to_words = np.zeros((len(words), n))
    for i, toks in enumerate(word_tokens):
        to_words[i, toks] = 1.0

    rows = {}
    weights = result.weights
    rows["attention"] = weights[-1].mean(0)[positions].mean(0)
    rows["rollout"] = timed("rollout", lambda: rollout(weights)[-1][positions].mean(0))
    rows["value"] = np.full(n, np.nan) if vw is None else vw.normalised[-1].mean(0)[positions].mean(0)
    report(0.1, Later(N_("Attention flow…")))
    try:
        rows["flow"] = timed("flow", lambda: flow.attention_flow(weights, positions))
    except ValueError as err:
        notes.append(err.args[0] if err.args else str(err))   # a Later: read where shown
        rows["flow"] = np.full(n, np.nan)
    report(0.25, Later(N_("Gradient × input…")))
    rows["grad_input"] = timed("grad_input", lambda: gradients.gradient_x_input(loaded, probe))
    report(0.3, Later(N_("Integrated gradients ({steps} steps)…"), steps=steps))
    attributed = sorted(t for toks in word_tokens for t in toks)
    first_is_sink = loaded.kind == "decoder" and bool(attributed) and attributed[0] == 0
    if first_is_sink:
        attributed = attributed[1:]   # the first token stays in the baseline (see gradients.integrated_gradients)
        notes.append(Later(N_("Integrated gradients keep the first token ({token}) in the baseline, so it gets 0 "
                              "there: this decoder has no start token, its first token becomes the place where "
                              "attention rests, and blanking it makes the path from the baseline jump (the gap grew "
                              "to the size of the prediction itself)."), token=repr(result.tokens[0])))
    ig = timed("ig", lambda: gradients.integrated_gradients(loaded, probe, attributed, steps))
    rows["ig"] = ig.scores
    scores = np.stack([to_words @ np.asarray(rows[m], dtype=np.float64) for m in METHODS])
    rho, tau = agreement.agreement(scores)

    removing = Later(N_("Removing each method's top words…"))
    report(0.75, removing)
    orders = [agreement.top_k(row, len(words)) if not np.isnan(row).all() else [] for row in scores]
    randoms = faithfulness.random_orders(len(words))
    ks = faithfulness.KS
    found = timed("faithfulness", lambda: faithfulness.removal_scores(
        loaded, probe, word_tokens, [o for o in orders if o] + randoms, ks,
        lambda f: report(0.75 + 0.25 * f, removing)))
    removed, it = np.full((len(METHODS) + 1, len(ks)), np.nan), iter(found)
    for i, order in enumerate(orders):
        if order:
            removed[i] = next(it)
    removed[-1] = np.mean(list(it), axis=0)
    report(1.0, Later(N_("Done.")))
    return Explanation(loaded.spec.name, probe.kind, text, probe.prompt, list(candidates),
                       faithfulness.score(loaded, probe),
                       [result.words[w] for w in words], scores, rho, tau, removed, ks, ig,
                       "deleted" if loaded.kind == "decoder" else "masked", n, first_is_sink, notes, seconds)
