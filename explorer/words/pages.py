"""Every page of the app in plain words: what a student does there, the question it answers, and the glossary
terms it uses (its "Words on this page"). Home lists the pages from here, in ``SECTIONS`` order.

``title`` repeats the page's title in app.py's navigation, and a test checks that every page registered there
has its guide here with the same title, so a new page cannot be missing from Home.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from explorer.words.glossary import TERMS, Term


@dataclass(frozen=True)
class PageGuide:
    path: str                   # the page file, from the repository root: "pages/heatmaps.py"
    title: str                  # as app.py's navigation names it
    icon: str                   # as app.py's navigation draws it
    does: str                   # what a student does there
    asks: str                   # the question the page answers
    terms: tuple[str, ...] = ()  # glossary names, in the order a student meets them


G = PageGuide
SECTIONS: dict[str, tuple[PageGuide, ...]] = {
    "Explore real models": (
        G("pages/heatmaps.py", "Attention heatmaps", ":material/grid_on:",
          "Type a sentence, pick a layer and a head, and see how much each word attends to every other.",
          "Where does this head look?",
          ("token", "sub-token", "special token", "query", "key", "layer", "head", "attention weight", "softmax",
           "d_k", "fidelity", "rollout", "weight × value size", "encoder", "decoder", "cross-attention", "RoPE")),
        G("pages/flip.py", "Antecedent flip", ":material/swap_horiz:",
          "Change one word of a sentence (tired to wide) and find the heads whose attention from it moves.",
          "Which heads notice what it refers to?",
          ("minimal pair", "antecedent", "query", "layer", "head", "attention weight", "fidelity", "knockout",
           "log-odds", "decoder")),
        G("pages/compare.py", "Compare heads", ":material/compare:",
          "Put two to four heads side by side and sort every head by a statistic.",
          "Which heads behave alike, and which patterns are common?",
          ("head", "layer", "attention weight", "entropy", "nats", "sink", "previous-token head", "induction head",
           "weight × value size", "fidelity")),
        G("pages/geometry.py", "Head geometry", ":material/scatter_plot:",
          "See one head's queries and keys from 200 sentences on one map, and your own text among them.",
          "What shape does a head's job have?",
          ("query", "key", "layer", "head", "attention weight", "PCA", "t-SNE", "RoPE")),
        G("pages/heads_do.py", "What heads do", ":material/content_cut:",
          "Knock heads out and watch the model's answer on a pair of sentences move.",
          "Do the heads that look at a word also matter for the answer?",
          ("minimal pair", "knockout", "head", "layer", "log-odds", "cosine similarity", "attention weight",
           "rank correlation", "encoder", "decoder")),
        G("pages/write.py", "Watch it write", ":material/edit:",
          "Let a decoder write a few tokens, guess each next one, and open any step.",
          "How does a model choose its next word?",
          ("decoder", "token", "causal mask", "KV cache", "greedy", "sampling", "temperature", "top-k", "top-p",
           "seed", "logit", "logit lens", "residual stream", "layer norm", "unembedding", "direct effect", "MLP",
           "output projection", "GQA")),
        G("pages/explain.py", "Which words mattered?", ":material/troubleshoot:",
          "Compare six explanations of one prediction and test which one is faithful.",
          "Is attention an explanation?",
          ("attribution", "attention weight", "rollout", "attention flow", "weight × value size", "gradient",
           "gradient × input", "integrated gradients", "faithfulness", "log-odds", "decoder")),
    ),
    "Concepts: the labs": (
        G("pages/lab_why_attention.py", "Why attention", ":material/route:",
          "Count the steps between two words in a recurrent network and in attention, and the cost of each.",
          "What does attention buy over reading word by word?",
          ("RNN", "path length", "attention weight", "layer", "head")),
        G("pages/lab_worked_example.py", "Worked example", ":material/edit_note:",
          "Follow three tokens through queries, keys, scores, softmax and values, every number by hand.",
          "What exactly does one head compute?",
          ("token", "query", "key", "value", "score", "d_k", "softmax", "attention weight")),
        G("pages/lab_softmax.py", "Softmax saturation", ":material/thermostat:",
          "Grow d_k and the temperature and watch the softmax turn to one winner.",
          "Why are the scores divided by √d_k?",
          ("score", "query", "key", "d_k", "softmax", "saturation", "temperature", "entropy", "layer", "head")),
        G("pages/lab_permutation.py", "Permutation", ":material/shuffle:",
          "Shuffle a sentence's tokens and compare what attention gives back, with and without positions.",
          "Does attention know word order by itself?",
          ("token", "permutation", "attention weight", "positional encoding", "embedding")),
        G("pages/lab_positions.py", "Positional encodings", ":material/place:",
          "Explore sinusoidal, learned and rotary positions, and the distances real heads prefer.",
          "How does a model know where a word stands?",
          ("positional encoding", "RoPE", "d_model", "query", "key", "layer", "head")),
        G("pages/lab_masks.py", "Masks", ":material/visibility_off:",
          "Compare an encoder's and a decoder's attention, and see what padding does.",
          "Who may look at whom?",
          ("mask", "causal mask", "padding mask", "score", "softmax", "encoder", "decoder", "layer", "head")),
        G("pages/lab_block.py", "Heads and the block", ":material/layers:",
          "Split the model's width into heads and build one layer from scratch, norm first or last.",
          "What happens around attention in a layer?",
          ("transformer", "head", "d_model", "output projection", "residual stream",
           "layer norm", "MLP", "layer")),
    ),
    "Teach and look up": (
        G("pages/lessons.py", "Lessons", ":material/assignment:",
          "Pick a ready-made lesson, print its handout, or build your own from the views you open.",
          "What do we look at, in what order, and what do we ask?"),
        G("pages/classroom.py", "Classroom", ":material/school:",
          "Start a class as the teacher, or join one with a code, a link or a QR code and follow along.",
          "How do we all look at the same thing?"),
        G("pages/glossary.py", "Glossary", ":material/book:",
          "Look up any word the pages use, in plain words.",
          "What does this word mean?"),
    ),
}
del G

GUIDES: dict[str, PageGuide] = {g.path: g for guides in SECTIONS.values() for g in guides}


def guide_for(page_file: str) -> PageGuide | None:
    """The guide of the page whose file is ``page_file`` (any path ending in pages/<name>.py), or None."""
    name = PurePosixPath(str(page_file).replace("\\", "/")).name
    return next((g for g in GUIDES.values() if PurePosixPath(g.path).name == name), None)


def terms_of(page_file: str) -> list[Term]:
    """The glossary terms the page uses, in its order ([] for a page without a guide)."""
    guide = guide_for(page_file)
    return [TERMS[name] for name in guide.terms] if guide else []


def pages_using(name: str) -> list[PageGuide]:
    """The pages whose words include the term ``name``."""
    return [g for g in GUIDES.values() if name in g.terms]
