"""The app's pages, in one table: for each page its file, title, icon, navigation section, what a student does
there, the question it answers, the glossary terms it uses (its "Words on this page"), and the URL parameters a
lesson step or a link may set on it. Plain data, no Streamlit.

Everything that lists pages reads ``SECTIONS``: app.py's navigation (one ``st.Page`` per row, in this order), Home's
list of pages (``on_home``), each page's "Words on this page" and the glossary's "On: …" (``terms_of``,
``pages_using``), the lessons' checks (``explorer.lessons.pages``, which reads ``params`` and ``quiz_needs`` and takes
layer and head ranges from the step's model's config) and the class's next step prepared in the background
(``explorer.ui.prefetch``, which reads ``prepare``). A new page is one row here and one file in pages/. A module that
links to one page takes its row by name (``HEATMAPS.file``), never types its path: ``tests/unit/test_page_paths.py``
fails on a page path written anywhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Mapping

from explorer.labs.positions import TABS
from explorer.learning.config import TASKS as TRAINING_TASKS
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER
from explorer.words.glossary import TERMS, Term
from explorer.words.i18n import N_


@dataclass(frozen=True)
class Param:
    """One URL parameter a page reads (through ``explorer.ui.widgets.from_url`` and the pickers).

    ``kind`` is text | word | words | choice | int | number | flag | heads | model; ``choices`` lists a choice's
    values; ``low``/``high`` bound an int or a number, and ``high`` may be "layers" or "heads": the step's model's
    count minus one, read from that model's config (``explorer.model.embedded.layers_and_heads``)."""

    kind: str
    choices: tuple[str, ...] = ()
    low: float = 0
    high: float | str = 0


@dataclass(frozen=True)
class Page:
    file: str                   # the page file, from the repository root: "pages/heatmaps.py"
    title: str                  # as the navigation and Home name it (English, N_: shown through _())
    icon: str                   # a Material Symbol, ":material/grid_on:" (a font Streamlit ships: drawn offline)
    does: str                   # what a student does there (English, N_)
    asks: str                   # the question the page answers (English, N_)
    terms: tuple[str, ...] = ()  # glossary names, in the order a student meets them
    params: Mapping[str, Param] | None = None   # what a lesson step may set; None: no step opens this page
    model_param: str = "model"  # the parameter naming the model (whose layers and heads bound "layer", "head")
    default_model: str = EMBEDDED_ENCODER   # the model the page shows when the link names none
    quiz: str = ""              # the key of the page's own predict-then-reveal question ("": none; a step may use it)
    default: bool = False       # the page the app opens on
    quiz_needs: tuple[str, str] | None = None   # (parameter, value) the page asks its question only with
    prepare: str = ""           # what the page computes on opening beyond its texts' attention: a plan of
    #                             explorer.ui.prefetch.PLANS, run while a class is on the step before ("": none)


@dataclass(frozen=True)
class Section:
    title: str                  # the navigation's heading (English, N_: shown through _())
    on_home: str                # Home's heading for the same pages (English, N_)
    pages: tuple[Page, ...]


TEXT, WORD, WORDS, FLAG = Param("text"), Param("word"), Param("words"), Param("flag")
MODEL, LAYER, HEAD = Param("model"), Param("int", high="layers"), Param("int", high="heads")
WEIGHTING = Param("choice", ("weights", "value"))
ATLAS_MEASURE = Param("choice", ("entropy", "first", "previous", "self", "duplicate", "induction", "punctuation",
                                 "distance", "top_first", "top_previous", "top_induction"))
PATCH_PAIRS = ("ioi", "induction", "factual", "flip", "own")   # the patching page's ready pairs, or the student's
PATCH_LEVELS = ("residual", "heads", "heads_at", "patterns", "path")   # what one patch copies (its granularity)
NONE: Mapping[str, Param] = {}   # a page a step may open, with nothing to set

START = Section(N_("Start"), N_("Teach and look up"), (
    Page("pages/home.py", N_("Home"), ":material/home:",
         N_("Read what the explorer is, start a lesson, and find every page."),
         N_("Where do I start?"), default=True),
    Page("pages/lessons.py", N_("Lessons"), ":material/assignment:",
         N_("Pick a ready-made lesson, print its handout, or build your own from the views you open."),
         N_("What do we look at, in what order, and what do we ask?")),
    Page("pages/classroom.py", N_("Classroom"), ":material/school:",
         N_("Start a class as the teacher, or join one with a code, a link or a QR code and follow along."),
         N_("How do we all look at the same thing?")),
    Page("pages/glossary.py", N_("Glossary"), ":material/book:",
         N_("Look up any word the pages use, in plain words."),
         N_("What does this word mean?")),
))

EXPLORE = Section(N_("Explore real models"), N_("Explore real models"), (
    Page("pages/heatmaps.py", N_("Attention heatmaps"), ":material/grid_on:",
         N_("Type a sentence, pick a layer and a head, and see how much each word attends to every other."),
         N_("Where does this head look?"),
         ("token", "sub-token", "special token", "query", "key", "layer", "head", "attention weight", "softmax",
          "d_k", "fidelity", "rollout", "weight × value size", "encoder", "decoder", "cross-attention", "RoPE"),
         {"model": MODEL, "text": TEXT, "weighting": WEIGHTING, "layer": LAYER, "head": HEAD,
          "query": Param("int", high=511), "key": Param("int", high=511), "breakdown": FLAG},
         quiz="bd_question", quiz_needs=("breakdown", "1")),   # the score breakdown's, asked while it is open
    Page("pages/flip.py", N_("Antecedent flip"), ":material/swap_horiz:",
         N_("Change one word of a sentence (tired to wide) and find the heads whose attention from it moves."),
         N_("Which heads notice what it refers to?"),
         ("minimal pair", "antecedent", "query", "layer", "head", "attention weight", "fidelity", "knockout",
          "log-odds", "decoder"),
         {"model": MODEL, "text": TEXT, "text_b": TEXT, "query": WORD, "cands": WORDS, "layer": LAYER, "head": HEAD},
         prepare="flip"),
    Page("pages/compare.py", N_("Compare heads"), ":material/compare:",
         N_("Put two to four heads side by side and sort every head by a statistic."),
         N_("Which heads behave alike, and which patterns are common?"),
         ("head", "layer", "attention weight", "entropy", "nats", "sink", "previous-token head", "induction head",
          "weight × value size", "fidelity"),
         {"model": MODEL, "text": TEXT, "weighting": WEIGHTING, "heads": Param("heads")}),
    Page("pages/geometry.py", N_("Head geometry"), ":material/scatter_plot:",
         N_("See one head's queries and keys from 200 sentences on one map, and your own text among them."),
         N_("What shape does a head's job have?"),
         ("query", "key", "layer", "head", "attention weight", "PCA", "t-SNE", "RoPE"),
         {"model": MODEL, "text": TEXT, "layer": LAYER, "head": HEAD, "geo_method": Param("choice", ("pca", "tsne")),
          "geo_colour": Param("choice", ("position", "token", "kind")), "geo_heads": Param("heads")}),
    Page("pages/atlas.py", N_("Head atlas"), ":material/hub:",
         N_("See every head across real text as one point, open its card and check the app's names for heads."),
         N_("Does a head do on real text what its name says?"),
         ("head", "layer", "attention weight", "entropy", "nats", "sink", "previous-token head", "induction head"),
         {"model": MODEL, "layer": LAYER, "head": HEAD, "atlas_x": ATLAS_MEASURE, "atlas_y": ATLAS_MEASURE,
          "atlas_ex": Param("choice", ("first", "previous", "self", "duplicate", "induction", "punctuation")),
          "atlas_ask": Param("choice", ("previous", "induction", "sink"))},
         default_model=EMBEDDED_DECODER, quiz="atlas_which"),
    Page("pages/heads_do.py", N_("What heads do"), ":material/content_cut:",
         N_("Knock heads out and watch the model's answer on a pair of sentences move."),
         N_("Do the heads that look at a word also matter for the answer?"),
         ("minimal pair", "knockout", "head", "layer", "log-odds", "cosine similarity", "attention weight",
          "rank correlation", "encoder", "decoder"),
         {"model": MODEL, "text": TEXT, "text_b": TEXT, "ko_query": WORD, "ko_c1": WORD, "ko_c2": WORD,
          "ablation": Param("choice", ("zero", "mean"))}),
    Page("pages/patch.py", N_("Patch activations"), ":material/difference:",
         N_("Copy one activation from a sentence into its minimal pair and see how much of the answer moves with it."),
         N_("Which layer, position or head carries the answer?"),
         ("minimal pair", "residual stream", "layer", "head", "logit", "log-odds", "knockout", "gradient",
          "rank correlation", "decoder", "encoder"),
         {"model": MODEL, "pair": Param("choice", PATCH_PAIRS), "text": TEXT, "text_b": TEXT, "pt_ans": WORD,
          "pt_ans_b": WORD, "pt_level": Param("choice", PATCH_LEVELS),
          "pt_dir": Param("choice", ("denoise", "noise", "both")), "pt_pos": Param("int", high=511),
          "pt_rl": LAYER, "pt_rh": HEAD, "pt_via": Param("choice", ("q", "k", "v", "qkv")), "pt_ask": FLAG},
         default_model=EMBEDDED_DECODER, quiz="patch_where", prepare="patch"),
    Page("pages/write.py", N_("Watch it write"), ":material/edit:",
         N_("Let a decoder write a few tokens, guess each next one, and open any step."),
         N_("How does a model choose its next word?"),
         ("decoder", "token", "causal mask", "KV cache", "greedy", "sampling", "temperature", "top-k", "top-p",
          "seed", "logit", "logit lens", "residual stream", "layer norm", "unembedding", "direct effect", "MLP",
          "output projection", "GQA"),
         {"lm": MODEL, "prompt": TEXT, "mode": Param("choice", ("greedy", "sample")),
          "new": Param("int", low=1, high=64), "temp": Param("number", low=0.05, high=5.0),
          "topk": Param("int", high=1000), "topp": Param("number", low=0.01, high=1.0),
          "seed": Param("int", high=2**31 - 1), "predict": FLAG, "step": Param("int", high=63), "layer": LAYER,
          "head": HEAD, "vtemp": Param("number", low=0.05, high=5.0)},
         model_param="lm", default_model=EMBEDDED_DECODER, quiz="write_next"),
    Page("pages/explain.py", N_("Which words mattered?"), ":material/troubleshoot:",
         N_("Compare six explanations of one prediction and test which one is faithful."),
         N_("Is attention an explanation?"),
         ("attribution", "attention weight", "rollout", "attention flow", "weight × value size", "gradient",
          "gradient × input", "integrated gradients", "faithfulness", "log-odds", "decoder"),
         {"model": MODEL, "text": TEXT, "ex_query": WORD, "ex_c1": WORD, "ex_c2": WORD},
         default_model=EMBEDDED_DECODER, quiz="explain_top_word", prepare="explain"),
))

CONCEPTS = Section(N_("Concepts"), N_("Concepts: the labs"), (
    Page("pages/lab_worked_example.py", N_("Worked example"), ":material/edit_note:",
         N_("Follow three tokens through queries, keys, scores, softmax and values, every number by hand."),
         N_("What exactly does one head compute?"),
         ("token", "query", "key", "value", "score", "d_k", "softmax", "attention weight"),
         NONE, quiz="worked"),
    Page("pages/lab_softmax.py", N_("Softmax saturation"), ":material/thermostat:",
         N_("Grow d_k and the temperature and watch the softmax turn to one winner."),
         N_("Why are the scores divided by √d_k?"),
         ("score", "query", "key", "d_k", "softmax", "saturation", "temperature", "entropy", "layer", "head"),
         NONE, quiz="softmax", prepare="softmax"),
    Page("pages/lab_permutation.py", N_("Permutation"), ":material/shuffle:",
         N_("Shuffle a sentence's tokens and compare what attention gives back, with and without positions."),
         N_("Does attention know word order by itself?"),
         ("token", "permutation", "attention weight", "positional encoding", "embedding"),
         NONE, quiz="perm", prepare="permutation"),
    Page("pages/lab_positions.py", N_("Positional encodings"), ":material/place:",
         N_("Explore sinusoidal, learned and rotary positions, and the distances real heads prefer."),
         N_("How does a model know where a word stands?"),
         ("positional encoding", "RoPE", "d_model", "query", "key", "layer", "head"),
         {"pos_n": Param("int", low=16, high=256), "pos_d": Param("choice", ("16", "32", "64", "128", "256", "512")),
          "pos_at": Param("int", high=255), "pos_tab": Param("choice", TABS)}),
    Page("pages/lab_masks.py", N_("Masks"), ":material/visibility_off:",
         N_("Compare an encoder's and a decoder's attention, and see what padding does."),
         N_("Who may look at whom?"),
         ("mask", "causal mask", "padding mask", "score", "softmax", "encoder", "decoder", "layer", "head"),
         NONE, quiz="padding", prepare="masks"),
    Page("pages/lab_block.py", N_("Heads and the block"), ":material/layers:",
         N_("Split the model's width into heads and build one layer from scratch, norm first or last."),
         N_("What happens around attention in a layer?"),
         ("transformer", "head", "d_model", "output projection", "residual stream", "layer norm", "MLP", "layer"),
         NONE, quiz="heads"),
    Page("pages/lab_why_attention.py", N_("Why attention"), ":material/route:",
         N_("Count the steps between two words in a recurrent network and in attention, and the cost of each."),
         N_("What does attention buy over reading word by word?"),
         ("RNN", "path length", "attention weight", "layer", "head"),
         NONE, quiz="why"),
    Page("pages/learn.py", N_("Watch heads learn"), ":material/model_training:",
         N_("Train a tiny transformer on a copying task, watch its heads learn, and take the trained model apart."),
         N_("How does a model come to look where it looks?"),
         ("token", "layer", "head", "attention weight", "seed", "nats", "previous-token head", "induction head",
          "knockout", "logit", "MLP"),
         {"tr_layers": Param("choice", ("1", "2", "3")), "tr_heads": Param("choice", ("1", "2", "4")),
          "tr_task": Param("choice", TRAINING_TASKS), "tr_seed": Param("int", high=2**31 - 1),
          "tr_steps": Param("int", low=1, high=6000), "tr_step": Param("int", high=6000),
          "tr_head": Param("choice", tuple(f"L{l}H{h}" for l in (1, 2) for h in range(4))), "tr_train": FLAG,
          "tr_play": Param("choice", ("0", "1", "2", "5")),
          "tr_ask": Param("choice", ("copy", "drop", "head", "none"))}),
))

SECTIONS: tuple[Section, ...] = (START, EXPLORE, CONCEPTS)   # the navigation's order
PAGES: dict[str, Page] = {page.file: page for section in SECTIONS for page in section.pages}

# The rows other modules link to, by name: a page file renamed is renamed in this module only.
HOME = PAGES["pages/home.py"]
LESSONS = PAGES["pages/lessons.py"]
CLASSROOM = PAGES["pages/classroom.py"]
GLOSSARY = PAGES["pages/glossary.py"]
HEATMAPS = PAGES["pages/heatmaps.py"]
FLIP = PAGES["pages/flip.py"]
WRITE = PAGES["pages/write.py"]
HEADS_DO = PAGES["pages/heads_do.py"]
COMPARE = PAGES["pages/compare.py"]
LEARN = PAGES["pages/learn.py"]
GEOMETRY = PAGES["pages/geometry.py"]
ATLAS = PAGES["pages/atlas.py"]
PATCH = PAGES["pages/patch.py"]
LAB_SOFTMAX = PAGES["pages/lab_softmax.py"]
LAB_POSITIONS = PAGES["pages/lab_positions.py"]


def on_home() -> list[tuple[str, tuple[Page, ...]]]:
    """Home's list: (heading, pages) per section, what to explore first and the Start pages last, without the
    page the app opens on (Home itself)."""
    return [(s.on_home, tuple(p for p in s.pages if not p.default)) for s in (EXPLORE, CONCEPTS, START)]


def guide_for(page_file: str) -> Page | None:
    """The row of the page whose file is ``page_file`` (any path ending in pages/<name>.py), or None."""
    name = PurePosixPath(str(page_file).replace("\\", "/")).name
    return next((p for p in PAGES.values() if PurePosixPath(p.file).name == name), None)


def terms_of(page_file: str) -> list[Term]:
    """The glossary terms the page uses, in its order ([] for a page without terms or not in the table)."""
    page = guide_for(page_file)
    return [TERMS[name] for name in page.terms] if page else []


def pages_using(name: str) -> list[Page]:
    """The pages whose words include the term ``name``, in the navigation's order."""
    return [p for p in PAGES.values() if name in p.terms]
