"""Every term the pages use, each with a short definition in plain words, grouped by idea.

A ``Term``'s ``name`` is how the pages write it; an abbreviation carries what it stands for in ``expands``, so
that its title spells it out once ("MLP (multilayer perceptron)"). ``also`` lists other ways the pages write the
same idea ("ablation" for knockout, "KV cache" for key/value cache); ``lookup`` finds a term by any of them.

Names, expansions, meanings and group titles are written in English and marked with ``N_``; ``title`` and
``shown_meaning`` give them in the session's language, with the English term beside a translated one
("Aufmerksamkeitsgewicht (attention weight)"), so a student can match it to English texts. ``lookup`` finds a term
by a widget's label in English or in the session's language (a translated label is read back to its English id).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from explorer.words import i18n
from explorer.words.i18n import N_, NP_, _, pgettext

TERM = "glossary"   # the context of the terms' names (NP_("glossary", …), pgettext): their own translations


@dataclass(frozen=True)
class Term:
    name: str                   # as the pages write it: "softmax", "MLP"
    meaning: str                # the definition, one to three plain sentences
    expands: str = ""           # what an abbreviation stands for: "multilayer perceptron"
    also: tuple[str, ...] = ()  # other ways the pages write it (lookup finds the term by these too)

    @property
    def title(self) -> str:
        """The name in the session's language, with what an abbreviation stands for and, when the name was
        translated, the English term: "MLP (multilayer perceptron)", "Schicht (layer)"."""
        name = pgettext(TERM, self.name)
        beside = [_(self.expands)] if self.expands else []
        if name.casefold() != self.name.casefold():
            beside.append(self.name)
        return f"{name} ({'; '.join(beside)})" if beside else name

    @property
    def shown_meaning(self) -> str:
        """The definition in the session's language."""
        return _(self.meaning)

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.name, *((self.expands,) if self.expands else ()), *self.also)

    @property
    def shown_forms(self) -> tuple[str, ...]:
        """The forms in the session's language (the name and expansion translated), for a search box."""
        return (pgettext(TERM, self.name), *((_(self.expands),) if self.expands else ()))


T = Term
GROUPS: dict[str, tuple[Term, ...]] = {
    N_("Text and tokens"): (
        T(NP_("glossary", "token"),
          N_("The unit a model reads: a word, a piece of a word or a punctuation mark, each with a "
                   "number in the model's vocabulary. Text is cut into tokens before anything else happens."),
          also=("tokens",)),
        T(NP_("glossary", "sub-token"),
          N_("A piece of a word. A word the vocabulary does not hold is split into several tokens "
                       "(BERT marks the later pieces with two hash signs). Merging sub-tokens gives one row per word "
                       "again."),
          also=("sub-tokens", "subword", "word piece")),
        T(NP_("glossary", "special token"),
          N_("A token the model adds that is not in your text, such as [CLS] and [SEP] in BERT "
                           "or a start-of-text token. Many heads park spare attention on them."),
          also=("special tokens", "[CLS]", "[SEP]")),
        T(NP_("glossary", "embedding"),
          N_("The vector a token starts as: one learned row of a table, one row per vocabulary entry. "
                       "Tokens that are used alike end up with similar rows."), also=("embeddings",)),
        T(NP_("glossary", "unembedding"),
          N_("The decoder's last matrix: it turns the final vector at a position into one logit for "
                         "every token of the vocabulary, the scores for what comes next.")),
        T(NP_("glossary", "positional encoding"),
          N_("Information about where a token stands, added to its vector: fixed sine and "
                                 "cosine waves, or a table learned in training. Attention itself ignores word "
                                 "order, so without it a sentence is a bag of words."),
          also=("positional encodings", "position embedding", "sinusoidal", "learned table", "positions")),
        T(NP_("glossary", "RoPE"),
          N_("Instead of adding positions to the input, every query and key is turned by an angle that "
                  "grows with its position. A query-key score then depends on how far apart the two tokens are, not on "
                  "where they are."), expands=N_("rotary position embedding"), also=("rotary",)),
    ),
    N_("Inside one attention head"): (
        T(NP_("glossary", "query"),
          N_("What a token is looking for: its vector times a learned matrix (W_Q). The query is compared "
                   "with every key to decide where the token looks."), also=("queries", "query token", "query word")),
        T(NP_("glossary", "key"),
          N_("What a token offers to be found by: its vector times a learned matrix (W_K). The better a key "
                 "matches a query, the more attention it gets."), also=("keys",)),
        T(NP_("glossary", "value"),
          N_("What a token passes on when it is looked at: its vector times a learned matrix (W_V). A "
                   "head's output for a query is the weighted average of the values."), also=("values",)),
        T(NP_("glossary", "score"),
          N_("A query's dot product with one key, divided by √d_k: how well the two match, before the "
                   "softmax. Any real number; the pages call these pre-softmax scores."), also=("scores",)),
        T(NP_("glossary", "d_k"),
          N_("The length of a head's query and key vectors. Scores are divided by √d_k because a dot "
                 "product of d_k random parts grows like √d_k; without the scaling the softmax would saturate."),
          also=("√d_k", "scaling", "head size")),
        T(NP_("glossary", "softmax"),
          N_("Turns a row of numbers into positive shares that add up to 1: take e to the power of each "
                     "number, then divide by their total. Large gaps give one share close to 1.")),
        T(NP_("glossary", "saturation"),
          N_("A softmax is saturated when one weight is almost 1 and the rest almost 0. Then small "
                        "changes of the scores barely move the weights, and learning through it stalls."),
          also=("saturated", "softmax saturation")),
        T(NP_("glossary", "attention weight"),
          N_("A score after the softmax: the share, between 0 and 1, of a query's attention "
                              "that goes to one key. A query's weights add up to 1; heatmaps show them."),
          also=("attention weights", "weight", "weights")),
        T(NP_("glossary", "mask"),
          N_("A yes/no table over query-key pairs. Where it says no, the score is set to minus infinity "
                  "before the softmax, so that weight comes out exactly 0."), also=("masks", "masked")),
        T(NP_("glossary", "causal mask"),
          N_("A decoder's mask: each token may look at itself and earlier tokens, never later ones, "
                         "since while writing the later ones do not exist yet."), also=("causal",)),
        T(NP_("glossary", "padding mask"),
          N_("Sentences run together in a batch are filled up to one length with [PAD] tokens; the "
                          "padding mask stops every token from looking at them, so they change nothing."),
          also=("padding", "[PAD]")),
        T(NP_("glossary", "head"),
          N_("One attention unit with its own query, key and value matrices, so its own pattern of "
                  "weights. A layer runs several heads side by side and joins their outputs."), also=("heads",)),
        T(NP_("glossary", "multi-head attention"),
          N_("Several heads in one layer, each working in a slice of the model's width, "
                                  "their outputs placed side by side and mixed by the output projection. "
                                  "Different heads can follow different relations."), also=("multi-head",)),
        T(NP_("glossary", "output projection"),
          N_("The matrix that takes the joined outputs of a layer's heads back to the model's "
                               "width before they are added to the residual stream. Each head owns a slice of it."),
          also=("W_O", "W^O")),
        T(NP_("glossary", "entropy"),
          N_("How spread out a query's attention is, in nats: 0 when all the weight sits on one key, "
                     "ln n when it is shared evenly by n keys.")),
        T(NP_("glossary", "sink"),
          N_("A key, often the first token or a special token, that takes a large share of many queries' "
                  "attention while passing on little. Heads use it as a place to put attention they do not need."),
          also=("attention sink",)),
        T(NP_("glossary", "previous-token head"),
          N_("A head whose queries put most of their weight on the token just before them."),
          also=("previous token",)),
        T(NP_("glossary", "induction head"),
          N_("A head that finds an earlier copy of the current token and looks at the token that "
                            "came after it, so the model can continue a pattern it has seen."),
          also=("induction",)),
    ),
    N_("The model around attention"): (
        T(NP_("glossary", "transformer"),
          N_("A model built from layers of attention and MLPs around a residual stream. BERT-style "
                         "encoders and GPT-style decoders are both transformers.")),
        T(NP_("glossary", "layer"),
          N_("One step of the model's stack: attention with all its heads, then an MLP, each added onto "
                   "the residual stream. Early layers sit near the input, late ones near the output."),
          also=("layers", "block")),
        T(NP_("glossary", "residual stream"),
          N_("The running vector at each position that every layer reads and adds to. Outputs "
                             "are added onto it rather than replacing it, so information can pass layers "
                             "unchanged."), also=("residual", "residuals")),
        T(NP_("glossary", "MLP"),
          N_("The part of each layer after attention: two or three weight matrices with a nonlinearity "
                 "between them, applied to each position on its own. Attention mixes between tokens; the MLP "
                 "works within one."), expands=N_("multilayer perceptron"),
          also=("MLPs", "feed-forward", "FFN")),
        T(NP_("glossary", "layer norm"),
          N_("Rescales each position's vector to a standard size, then applies learned scales, so "
                        "numbers stay in range from layer to layer. LayerNorm also centres the vector at 0; "
                        "RMSNorm only divides by its root mean square."),
          also=("LN", "LayerNorm", "RMSNorm", "final norm", "norm")),
        T(NP_("glossary", "d_model"),
          N_("The model's width: how many numbers describe each token in the residual stream (384 for "
                     "all-MiniLM-L6-v2, 576 for SmolLM2-135M)."), also=("model width",)),
        T(NP_("glossary", "encoder"),
          N_("A model that reads the whole text at once, each token seeing every other in both "
                     "directions. It makes vectors for understanding text, not new text; all-MiniLM-L6-v2 is one."),
          also=("encoders",)),
        T(NP_("glossary", "decoder"),
          N_("A model that writes text one token at a time, each token seeing only what came before it "
                     "(a causal mask). SmolLM2-135M is one."), also=("decoders",)),
        T(NP_("glossary", "cross-attention"),
          N_("In an encoder-decoder model, the decoder's queries look at the encoder's keys and "
                             "values: how the writing side reads the input."), also=("cross",)),
        T(NP_("glossary", "GQA"),
          N_("Several query heads share one key head and one value head, which keeps the key/value cache "
                 "small. SmolLM2-135M has 9 query heads sharing 3 key/value heads."),
          expands=N_("grouped-query attention"), also=("key/value heads",)),
        T(NP_("glossary", "KV cache"),
          N_("While writing, a decoder keeps the keys and values of the tokens so far instead of "
                      "computing them again: each new token computes only its own, then looks at all the stored "
                      "ones."), expands=N_("key/value cache"), also=("cache",)),
        T(NP_("glossary", "logit"),
          N_("The raw score the model gives one candidate next token, before the softmax turns the scores "
                   "into probabilities. Only differences between logits matter."), also=("logits",)),
        T(NP_("glossary", "logit lens"),
          N_("Reading the residual stream after a middle layer as if it were the last (through the "
                        "final norm and the unembedding), to watch the answer form layer by layer.")),
        T(NP_("glossary", "direct effect"),
          N_("How much one head or MLP adds to a logit straight through the residual stream, "
                           "leaving out what it does through later layers. With the final norm's scale held "
                           "fixed, the parts add up to the logit."), also=("direct effects",)),
    ),
    N_("Writing text"): (
        T(NP_("glossary", "greedy"), N_("Always writing the single most likely next token: the same text every time."),
          also=("most likely",)),
        T(NP_("glossary", "sampling"),
          N_("Drawing the next token at random by the model's probabilities: likely tokens come often, "
                      "unlikely ones now and then."), also=("sample", "draw")),
        T(NP_("glossary", "temperature"),
          N_("A number the logits (or scores) are divided by before the softmax. Below 1 sharpens "
                         "the choice towards the top token, above 1 flattens it; 1 leaves the model as it is.")),
        T(NP_("glossary", "top-k"), N_("When sampling, keep only the k most likely tokens and draw among them.")),
        T(NP_("glossary", "top-p"),
          N_("When sampling, keep the most likely tokens until their probabilities add up to p (say 0.9) "
                   "and draw among those: few when the model is sure, many when it is not."),
          also=("nucleus sampling",)),
        T(NP_("glossary", "seed"),
          N_("The starting number of the random draws: the same seed gives the same sampled text.")),
        T(NP_("glossary", "log-odds"),
          N_("The log of one probability minus the log of the other, ln P(first) − ln P(second): "
                      "above 0 when the model prefers the first, 0 when it has no preference. A change of 1 means the "
                      "ratio of the two grew or shrank by e ≈ 2.72."),
          also=("log odds",)),
        T(NP_("glossary", "nats"),
          N_("The unit of entropy and log-odds with natural logarithms (ln): one nat is a factor of "
                  "e ≈ 2.72.")),
    ),
    N_("Measuring and explaining"): (
        T(NP_("glossary", "fidelity"),
          N_("Our check that the attention shown is the model's: each head's weights recomputed from "
                      "scratch from the model's own queries and keys, softmax(QKᵀ/√d_k), and the largest "
                      "difference shown.")),
        T(NP_("glossary", "rollout"),
          N_("Attention rollout: in each layer average the heads, add the residual path and rescale, "
                     "then multiply the layers together. An estimate of how much each input token reaches each "
                     "position."), also=("attention rollout",)),
        T(NP_("glossary", "attention flow"),
          N_("Treats each layer's averaged attention as pipes and computes the most that can "
                            "flow from an input token to the output. Like rollout, an estimate of which inputs count."),
          also=("flow",)),
        T(NP_("glossary", "weight × value size"),
          N_("An attention weight times the size of what that key sends through the head "
                                 "(‖W_O v‖). A key can get much weight and send almost nothing; this shows what "
                                 "moves the output."), also=("value size", "value-weighted")),
        T(NP_("glossary", "knockout"),
          N_("Removing a head while the model runs and measuring what changes. Zero ablation sets its "
                      "output to 0; mean ablation puts its average output in its place."),
          also=("ablation", "knock out", "knocked out", "knock heads out")),
        T(NP_("glossary", "attribution"),
          N_("A score for each input word: how much a prediction depended on it. Methods disagree, "
                         "so a faithfulness test checks which to trust."),
          also=("attributions", "explanation", "explanations")),
        T(NP_("glossary", "gradient"),
          N_("How fast an output would change if an input moved a little. Gradient methods use it to "
                      "find the inputs a prediction is sensitive to."), also=("gradients",)),
        T(NP_("glossary", "gradient × input"),
          N_("An attribution: each input's gradient times the input itself, summed over its "
                              "vector. A first guess at what removing that input would cost."),
          also=("grad × input", "gradient x input")),
        T(NP_("glossary", "integrated gradients"),
          N_("An attribution: gradients averaged along a straight path from a baseline "
                                  "input (say all zeros) to the real one, times the difference. Ideally the "
                                  "scores add up to the output's change along the path (completeness)."),
          also=("IG",)),
        T(NP_("glossary", "faithfulness"),
          N_("Whether an explanation reflects what the model really used. One test: remove the "
                          "words it ranks highest and see whether the prediction moves more than when random "
                          "words go."), also=("faithful", "comprehensiveness")),
        T(NP_("glossary", "rank correlation"),
          N_("How far two rankings agree: 1 the same order, 0 unrelated, −1 reversed. "
                              "Spearman's ρ compares ranks, not values."), also=("Spearman",)),
        T(NP_("glossary", "cosine similarity"),
          N_("How alike two vectors point, from −1 to 1, whatever their length: 1 the same "
                               "direction, 0 unrelated."), also=("cosine", "cos")),
        T(NP_("glossary", "minimal pair"),
          N_("Two sentences that differ in a single word, to see what that one word changes inside "
                          "the model."), also=("pair",)),
        T(NP_("glossary", "antecedent"),
          N_("The word a pronoun points back to: in “the animal didn't cross the street because it "
                        "was too tired”, the antecedent of it is the animal."), also=("candidate antecedents",)),
        T(NP_("glossary", "PCA"),
          N_("Finds the directions in which a cloud of points spreads most and lays the cloud flat on the "
                 "two widest. Exact and instant."), expands=N_("principal component analysis")),
        T(NP_("glossary", "t-SNE"),
          N_("Places points on a map so that neighbours stay neighbours: good for seeing clusters, but "
                   "the distances between clusters mean little."),
          expands=N_("t-distributed stochastic neighbour embedding")),
        T(NP_("glossary", "permutation"),
          N_("A reordering of the tokens. Without positions, attention reorders its output in just "
                         "the same way, so word order is invisible to it."), also=("shuffle", "shuffled")),
        T(NP_("glossary", "RNN"),
          N_("A model that reads one token per step and carries what it knows in a single state from step "
                 "to step, so news from a distant word passes through every step in between."),
          expands=N_("recurrent neural network"), also=("recurrent network", "recurrence")),
        T(NP_("glossary", "path length"),
          N_("How many steps information takes from one word to another: as many as the words "
                         "between them in an RNN, one attention step in a transformer."), also=("path",)),
    ),
}
del T

TERMS: dict[str, Term] = {term.name: term for terms in GROUPS.values() for term in terms}


def _plain(text: str) -> str:
    """``text`` lower-cased, without a trailing parenthesis or symbol ("Top-k (0: off)" → "top-k",
    "Temperature T" → "temperature"), spaces collapsed."""
    text = re.sub(r"\s*\(.*\)\s*$", "", text.strip().lower())
    text = re.sub(r"\s+[a-z]$", "", text)
    return re.sub(r"\s+", " ", text)


_BY_FORM = {_plain(form): term for term in TERMS.values() for form in reversed(term.forms)}
_BY_FORM.update({_plain(term.name): term for term in TERMS.values()})   # a name wins over another term's alias


@lru_cache(maxsize=len(i18n.LANGUAGES))
def _by_translated_form(lang: str) -> dict[str, Term]:
    """``lang``'s names and expansions of the terms -> term (a widget label that is a term's translated name)."""
    with i18n.language(lang):
        return {_plain(form): term for term in reversed(TERMS.values()) for form in term.shown_forms}


def lookup(word: str) -> Term | None:
    """The term ``word`` names (its name, expansion or another form, any case), or None. ``word`` may be in the
    session's language: a widget label translated from English ("Schicht", "Top-k (0: aus)") is read back to
    the English text it translates, and a term's translated name is found as itself."""
    found = _BY_FORM.get(_plain(word))
    lang = i18n.current()
    if found is not None or lang == i18n.SOURCE:
        return found
    english = i18n.source_text(word, lang)
    if english is not None and (found := _BY_FORM.get(_plain(english))) is not None:
        return found
    return _by_translated_form(lang).get(_plain(word))


def matching(query: str) -> list[Term]:
    """Terms whose name, forms or meaning contain ``query`` (any case), in English or the session's language, in
    glossary order; all for ''."""
    q = query.strip().lower()
    return [t for t in TERMS.values()
            if not q or any(q in f.lower() for f in (*t.forms, t.meaning, *t.shown_forms, t.shown_meaning))]
