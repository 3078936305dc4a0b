"""What a lesson step may set on the page it opens, checked before anything runs.

The pages and the URL parameters each reads live in one table, ``explorer.sitemap.table``; here they are checked:
a step may open the pages whose row has ``params`` (``STEP_PAGES``), and each value must fit its ``Param``. Layer
and head ranges come from the step's model's config (``explorer.model.embedded.layers_and_heads``), and only the
embedded models are allowed: a lesson has to run offline.
"""
from __future__ import annotations

import re

from explorer.model.embedded import layers_and_heads
from explorer.model.registry import EMBEDDED, ModelUnavailable
from explorer.sitemap.table import MODEL, PAGES, Page, Param
from explorer.words import numbers
from explorer.words.i18n import N_, Later

TEXT_MAX = 2_000   # longest text a lesson may put in a box (the pages take 20,000; a lesson needs far less)
WORD_MAX = 60
_HEAD_ID = re.compile(r"^L(\d{1,3})H(\d{1,3})$")

# the pages a lesson step may open, by file, in the navigation's order
STEP_PAGES: dict[str, Page] = {file: page for file, page in PAGES.items() if page.params is not None}
# the pages that ask their own predict-then-reveal question (a step may point to it instead of asking its own)
PAGE_QUESTIONS = {file for file, page in STEP_PAGES.items() if page.quiz}


def asks_own(page: str, params: dict[str, str]) -> bool:
    """Whether ``page`` opened with ``params`` asks its own predict-then-reveal question (its row's ``quiz``, with
    its ``quiz_needs`` set: the heatmap's is its score breakdown's, asked while the breakdown is open)."""
    if page not in PAGE_QUESTIONS:
        return False
    needs = STEP_PAGES[page].quiz_needs
    return needs is None or str(params.get(needs[0])) == needs[1]


def problem(param: Param, value: str, model: str) -> Later | None:
    """Why ``value`` (the text a URL would hold) does not fit ``param`` on a page showing ``model``, or None."""
    if param.kind == "model":
        return None if value in EMBEDDED else Later(N_("{value} is not an embedded model ({models})"),
                                                    value=repr(value[:60]), models=", ".join(EMBEDDED))
    if param.kind in ("text", "word", "words"):
        longest = TEXT_MAX if param.kind == "text" else WORD_MAX * (2 if param.kind == "words" else 1)
        if not value.strip():
            return Later(N_("is empty"))
        return None if len(value) <= longest else Later(N_("is longer than {n} characters"), n=longest)
    if param.kind == "choice":
        return None if value in param.choices else Later(N_("{value} is not one of {known}"), value=repr(value[:40]),
                                                         known=", ".join(param.choices))
    if param.kind == "flag":
        return None if value in ("0", "1") else Later(N_("must be 0 or 1"))
    size = (0, 0)
    if param.kind == "heads" or isinstance(param.high, str):   # bounded by the model's layers or heads
        try:
            size = layers_and_heads(model)
        except ModelUnavailable as e:
            return Later(N_("cannot be checked: {error}"), error=str(e))
    if param.kind == "heads":
        return _heads_problem(value, model, size)
    try:
        number = int(value) if param.kind == "int" else float(value)
    except ValueError:
        return Later(N_("{value} is not a whole number") if param.kind == "int" else N_("{value} is not a number"),
                     value=repr(value[:40]))
    high = param.high
    if isinstance(high, str):
        high = size[0 if high == "layers" else 1] - 1
    if not param.low <= number <= high:
        return Later(N_("{value} is out of range ({low}–{high})"), value=value, low=numbers.number(param.low),
                     high=numbers.number(high))
    return None


def _heads_problem(value: str, model: str, size: tuple[int, int]) -> Later | None:
    layers, heads = size
    ids = [v.strip() for v in value.split(",") if v.strip()]
    if not 1 <= len(ids) <= 4:
        return Later(N_("names 1 to 4 heads, like L4H0,L2H3"))
    for one in ids:
        found = _HEAD_ID.match(one)
        if not found or int(found[1]) >= layers or int(found[2]) >= heads:
            return Later(N_("{head} is not a head of {model} (L0H0 to {last})"), head=repr(one[:20]), model=model,
                         last=f"L{layers - 1}H{heads - 1}")
    return None


def check_params(page: str, params: dict[str, str]) -> tuple[str, Later] | None:
    """(parameter, why) for the first parameter of ``params`` that ``page`` does not take or that is out of range;
    None when all fit. ``page`` must be a key of STEP_PAGES."""
    spec = STEP_PAGES[page]
    model = params.get(spec.model_param, spec.default_model)
    if spec.model_param in params and spec.model_param in spec.params and model not in EMBEDDED:
        return spec.model_param, problem(MODEL, model, model)
    for name, value in params.items():
        param = spec.params.get(name)
        if param is None:
            if not spec.params:
                return name, Later(N_("this page takes no parameters ({name} given)"), name=repr(name[:40]))
            return name, Later(N_("this page takes no parameter {name} (it takes: {known})"), name=repr(name[:40]),
                               known=", ".join(spec.params))
        why = problem(param, value, model)
        if why:
            return name, why
    return None


def shareable(page: str, params: dict[str, str]) -> dict[str, str]:
    """The parameters of ``params`` that ``page`` takes and that fit (for a step made from the current view)."""
    spec = STEP_PAGES.get(page)
    if spec is None:
        return {}
    kept = {k: str(v) for k, v in params.items() if k in spec.params}
    if kept.get(spec.model_param, spec.default_model) not in EMBEDDED:
        kept.pop(spec.model_param)
    model = kept.get(spec.model_param, spec.default_model)
    return {k: v for k, v in kept.items() if problem(spec.params[k], v, model) is None}
