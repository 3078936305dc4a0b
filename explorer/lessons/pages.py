"""The pages a lesson step may open, and the URL parameters each reads (the view its deep link reopens).

Each page reads its parameters through ``explorer.ui.widgets.from_url`` and the pickers; this table says which
names those are and what values make sense, so a lesson file is checked before anything runs. Layer and head
ranges come from the step's model (only the embedded models: a lesson has to run offline).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.labs.positions import TABS
from explorer.model.registry import EMBEDDED_DECODER, EMBEDDED_ENCODER

TEXT_MAX = 2_000   # longest text a lesson may put in a box (the pages take 20,000; a lesson needs far less)
WORD_MAX = 60
# (layers, heads) of the embedded models, as their registry labels say (a unit test checks them against the configs)
SIZES = {EMBEDDED_ENCODER: (6, 12), EMBEDDED_DECODER: (30, 9)}
_HEAD_ID = re.compile(r"^L(\d{1,3})H(\d{1,3})$")


@dataclass(frozen=True)
class Param:
    """One URL parameter: ``kind`` is text | word | words | choice | int | number | flag | heads | model;
    ``low``/``high`` bound int and number (``high`` may be "layers"/"heads": the model's size minus one)."""

    kind: str
    choices: tuple[str, ...] = ()
    low: float = 0
    high: float | str = 0

    def problem(self, value: str, model: str) -> str | None:
        """Why ``value`` (the text a URL would hold) does not fit, or None."""
        if self.kind == "model":
            return None if value in SIZES else f"{value[:60]!r} is not an embedded model ({', '.join(SIZES)})"
        if self.kind in ("text", "word", "words"):
            longest = TEXT_MAX if self.kind == "text" else WORD_MAX * (2 if self.kind == "words" else 1)
            if not value.strip():
                return "is empty"
            return None if len(value) <= longest else f"is longer than {longest} characters"
        if self.kind == "choice":
            return None if value in self.choices else f"{value[:40]!r} is not one of {', '.join(self.choices)}"
        if self.kind == "flag":
            return None if value in ("0", "1") else "must be 0 or 1"
        if self.kind == "heads":
            return _heads_problem(value, model)
        try:
            number = int(value) if self.kind == "int" else float(value)
        except ValueError:
            return f"{value[:40]!r} is not {'a whole number' if self.kind == 'int' else 'a number'}"
        high = self.high
        if isinstance(high, str):
            high = SIZES[model][0 if high == "layers" else 1] - 1
        if not self.low <= number <= high:
            return f"{value} is out of range ({self.low:g}–{high:g})"
        return None


def _heads_problem(value: str, model: str) -> str | None:
    layers, heads = SIZES[model]
    ids = [v.strip() for v in value.split(",") if v.strip()]
    if not 1 <= len(ids) <= 4:
        return "names 1 to 4 heads, like L4H0,L2H3"
    for one in ids:
        found = _HEAD_ID.match(one)
        if not found or int(found[1]) >= layers or int(found[2]) >= heads:
            return f"{one[:20]!r} is not a head of {model} (L0H0 to L{layers - 1}H{heads - 1})"
    return None


TEXT, WORD, WORDS, FLAG = Param("text"), Param("word"), Param("words"), Param("flag")
MODEL, LAYER, HEAD = Param("model"), Param("int", high="layers"), Param("int", high="heads")
WEIGHTING = Param("choice", ("weights", "value"))


@dataclass(frozen=True)
class PageSpec:
    title: str
    params: dict[str, Param]
    model_key: str = "model"   # the parameter naming the model (for layer and head ranges)
    default_model: str = EMBEDDED_ENCODER


PAGES: dict[str, PageSpec] = {
    "pages/heatmaps.py": PageSpec("Attention heatmaps", {
        "model": MODEL, "text": TEXT, "weighting": WEIGHTING, "layer": LAYER, "head": HEAD,
        "query": Param("int", high=511)}),
    "pages/flip.py": PageSpec("Antecedent flip", {
        "model": MODEL, "text": TEXT, "text_b": TEXT, "query": WORD, "cands": WORDS, "layer": LAYER, "head": HEAD}),
    "pages/compare.py": PageSpec("Compare heads", {
        "model": MODEL, "text": TEXT, "weighting": WEIGHTING, "heads": Param("heads")}),
    "pages/geometry.py": PageSpec("Head geometry", {
        "model": MODEL, "text": TEXT, "layer": LAYER, "head": HEAD, "geo_method": Param("choice", ("pca", "tsne")),
        "geo_colour": Param("choice", ("position", "token", "kind")), "geo_heads": Param("heads")}),
    "pages/heads_do.py": PageSpec("What heads do", {
        "model": MODEL, "text": TEXT, "text_b": TEXT, "ko_query": WORD, "ko_c1": WORD, "ko_c2": WORD,
        "ablation": Param("choice", ("zero", "mean"))}),
    "pages/write.py": PageSpec("Watch it write", {
        "lm": MODEL, "prompt": TEXT, "mode": Param("choice", ("greedy", "sample")), "new": Param("int", low=1, high=64),
        "temp": Param("number", low=0.05, high=5.0), "topk": Param("int", high=1000),
        "topp": Param("number", low=0.01, high=1.0), "seed": Param("int", high=2**31 - 1), "predict": FLAG,
        "step": Param("int", high=63), "layer": LAYER, "head": HEAD, "vtemp": Param("number", low=0.05, high=5.0)},
        model_key="lm", default_model=EMBEDDED_DECODER),
    "pages/explain.py": PageSpec("Which words mattered?", {
        "model": MODEL, "text": TEXT, "ex_query": WORD, "ex_c1": WORD, "ex_c2": WORD},
        default_model=EMBEDDED_DECODER),
    "pages/lab_worked_example.py": PageSpec("Worked example", {}),
    "pages/lab_softmax.py": PageSpec("Softmax saturation", {}),
    "pages/lab_permutation.py": PageSpec("Permutation", {}),
    "pages/lab_positions.py": PageSpec("Positional encodings", {
        "pos_n": Param("int", low=16, high=256), "pos_d": Param("choice", ("16", "32", "64", "128", "256", "512")),
        "pos_at": Param("int", high=255), "pos_tab": Param("choice", TABS)}),
    "pages/lab_masks.py": PageSpec("Masks", {}),
    "pages/lab_block.py": PageSpec("Heads and the block", {}),
    "pages/lab_why_attention.py": PageSpec("Why attention", {}),
}
# the predict-then-reveal question each page asks itself (a step may point to it instead of asking its own)
PAGE_QUESTIONS = {"pages/lab_worked_example.py", "pages/lab_softmax.py", "pages/lab_permutation.py",
                  "pages/lab_masks.py", "pages/lab_block.py", "pages/lab_why_attention.py", "pages/write.py",
                  "pages/explain.py"}


def check_params(page: str, params: dict[str, str]) -> tuple[str, str] | None:
    """(parameter, why) for the first parameter of ``params`` that ``page`` does not take or that is out of range;
    None when all fit. ``page`` must be a key of PAGES."""
    spec = PAGES[page]
    model = params.get(spec.model_key, spec.default_model)
    if spec.model_key in params and spec.model_key in spec.params and model not in SIZES:
        return spec.model_key, MODEL.problem(model, model)
    for name, value in params.items():
        param = spec.params.get(name)
        if param is None:
            known = ", ".join(spec.params) or "none"
            return name, f"this page takes no parameter {name[:40]!r} (it takes: {known})"
        why = param.problem(value, model)
        if why:
            return name, why
    return None


def shareable(page: str, params: dict[str, str]) -> dict[str, str]:
    """The parameters of ``params`` that ``page`` takes and that fit (for a step made from the current view)."""
    spec = PAGES.get(page)
    if spec is None:
        return {}
    kept = {k: str(v) for k, v in params.items() if k in spec.params}
    if kept.get(spec.model_key, spec.default_model) not in SIZES:
        kept.pop(spec.model_key)
    model = kept.get(spec.model_key, spec.default_model)
    return {k: v for k, v in kept.items() if spec.params[k].problem(v, model) is None}
