"""The atlas as shipped: one ``.npz`` of numbers per model and ``corpus.json`` (the windows the atlas shows, each
model's tokens of them, the source and licence), in ``assets/atlas/``, written by ``tools/head_atlas.py``.

Everything is checked when read: each array's shape, type and range (a weight share in [0, 1], an entropy in
[0, ln n], a window that exists). What fails a check is left out, with one sentence in ``Atlas.problems``; the page
draws from what is left (a damaged measure drops that measure, a damaged file that model).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.atlas import head_stats
from explorer.atlas.survey import KEYS, TOP, Survey
from explorer.words.i18n import N_, Later

FOLDER = Path(__file__).resolve().parents[2] / "assets" / "atlas"
CORPUS = "corpus.json"
FORMAT = 1
MAX_KEYS = 512   # a window is at most this many tokens: an entropy is at most ln 512 nats


def file_of(model: str) -> str:
    return f"{model}.npz"


@dataclass
class Atlas:
    """One model's atlas as read: ``means``/``counts`` per measure ``[layer, head]`` (only those that passed their
    checks), ``examples[measure]`` as in :class:`survey.Survey`, ``tokens[window]`` (this model's tokens),
    ``texts[window]`` (the window's text), ``problems`` (one sentence per check that failed)."""
    model: str
    kind: str
    n_layers: int
    n_heads: int
    n_tokens: int
    n_windows: int
    means: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]
    examples: dict[str, dict[str, np.ndarray]]
    tokens: dict[int, list[str]]
    texts: dict[int, str]
    source: str
    licence: str
    slice_means: dict[str, np.ndarray] = field(default_factory=dict)
    problems: list[Later] = field(default_factory=list)

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(m for m in (*head_stats.MEASURES, *head_stats.SHARES) if m in self.means)


def save(surveys: list[Survey], texts: list[str], source: str, licence: str, folder: Path = FOLDER) -> None:
    """Write each survey's numbers and the corpus file (only the windows some example or the slice names)."""
    folder.mkdir(parents=True, exist_ok=True)
    shown: set[int] = set(range(min(s.n_windows for s in surveys)))
    for s in surveys:
        for ex in s.examples.values():
            shown |= {int(i) for i in np.unique(ex["window"])}
    shown_list = sorted(i for i in shown if i < len(texts))
    for s in surveys:
        arrays = {f"mean_{k}": v for k, v in s.means.items()}
        arrays |= {f"count_{k}": np.asarray(v, dtype=np.int32) for k, v in s.counts.items()}
        arrays |= {f"slice_{k}": v for k, v in s.slice_means.items()}
        for m, ex in s.examples.items():
            arrays |= {f"ex_{m}_{k}": (v.astype(np.float32) if k in {"value", "key_weights"} else v.astype(np.int32))
                       for k, v in ex.items()}
        info = dict(format=FORMAT, model=s.model, kind=s.kind, n_layers=s.n_layers, n_heads=s.n_heads,
                    n_tokens=s.n_tokens, n_windows=s.n_windows, source=source, licence=licence)
        np.savez_compressed(folder / file_of(s.model), info=np.array(json.dumps(info)), **arrays)
    corpus = dict(format=FORMAT, source=source, licence=licence, n_windows=len(texts),
                  windows={str(i): texts[i] for i in shown_list},
                  tokens={s.model: {str(i): s.tokens[i] for i in shown_list if i in s.tokens} for s in surveys})
    (folder / CORPUS).write_text(json.dumps(corpus, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _bad(model: str, what: str) -> Later:
    return Later(N_("The stored atlas of {model} is damaged ({what}); the page shows what could be read."),
                 model=model, what=what)


def _check_mean(name: str, v: np.ndarray, shape, max_entropy: float) -> bool:
    if v.shape != shape or v.dtype.kind != "f":
        return False
    x = v[~np.isnan(v)]
    if name in head_stats.WEIGHT_MEASURES or name in head_stats.SHARES:
        return bool(np.all((x >= -1e-6) & (x <= 1 + 1e-6)))
    if name == "entropy":
        return bool(np.all((x >= -1e-6) & (x <= max_entropy + 1e-6)))
    return bool(np.all(x >= -1e-6))


def _read_examples(data, shape, n_windows: int, tokens: dict[int, list[str]]) -> dict[str, dict[str, np.ndarray]]:
    out = {}
    for m in head_stats.EXAMPLE_MEASURES:
        try:
            ex = {k: np.asarray(data[f"ex_{m}_{k}"]) for k in ("value", "window", "query", "keys", "key_weights")}
        except (KeyError, ValueError, OSError):
            continue
        ok = (ex["value"].shape == (*shape, TOP) and ex["window"].shape == (*shape, TOP)
              and ex["query"].shape == (*shape, TOP) and ex["keys"].shape == (*shape, TOP, KEYS)
              and ex["key_weights"].shape == (*shape, TOP, KEYS))
        ok = ok and all(int(w) in tokens and 0 < int(q) < len(tokens[int(w)])
                        for w, q in zip(ex["window"].ravel(), ex["query"].ravel()))
        if ok:
            out[m] = ex
    return out


def load(model: str, folder: Path = FOLDER) -> Atlas | None:
    """The stored atlas of ``model`` with every check applied, or None when none is stored. A file that cannot be
    read at all gives an Atlas without measures and one problem sentence."""
    path = folder / file_of(model)
    if not path.exists():
        return None
    problems: list[Later] = []
    corpus = read_corpus(folder)
    if corpus is None:
        problems.append(_bad(model, CORPUS))
        corpus = dict(windows={}, tokens={}, source="", licence="")
    texts = {int(k): v for k, v in corpus.get("windows", {}).items() if isinstance(v, str)}
    tokens = {int(k): list(v) for k, v in corpus.get("tokens", {}).get(model, {}).items() if isinstance(v, list)}
    empty = Atlas(model, "", 0, 0, 0, 0, {}, {}, {}, tokens, texts, corpus.get("source", ""),
                  corpus.get("licence", ""), problems=problems)
    try:
        data = np.load(path, allow_pickle=False)
        info = json.loads(str(data["info"]))
        shape = (int(info["n_layers"]), int(info["n_heads"]))
    except Exception:   # noqa: BLE001 - any damage to the file is the same one sentence
        problems.append(_bad(model, file_of(model)))
        return empty
    means, counts, slices = {}, {}, {}
    max_entropy = float(np.log(MAX_KEYS))
    for name in (*head_stats.MEASURES, *head_stats.SHARES):
        try:
            mean, count = np.asarray(data[f"mean_{name}"]), np.asarray(data[f"count_{name}"])
        except Exception:   # noqa: BLE001
            problems.append(_bad(model, name))
            continue
        if not _check_mean(name, mean, shape, max_entropy) or count.shape != shape or np.any(count < 0):
            problems.append(_bad(model, name))
            continue
        means[name], counts[name] = mean, count
        try:
            slices[name] = np.asarray(data[f"slice_{name}"])
        except Exception:   # noqa: BLE001
            pass
    try:
        examples = _read_examples(data, shape, int(info["n_windows"]), tokens)
    except Exception:   # noqa: BLE001
        examples = {}
    if len(examples) < len(head_stats.EXAMPLE_MEASURES):
        problems.append(_bad(model, "examples"))
    return Atlas(model=model, kind=str(info.get("kind", "")), n_layers=shape[0], n_heads=shape[1],
                 n_tokens=int(info["n_tokens"]), n_windows=int(info["n_windows"]), means=means, counts=counts,
                 examples=examples, tokens=tokens, texts=texts, source=str(info.get("source", "")),
                 licence=str(info.get("licence", "")), slice_means=slices, problems=problems)


def read_corpus(folder: Path = FOLDER) -> dict | None:
    """``corpus.json`` as a dict, or None when it is missing or not valid JSON of the expected shape."""
    try:
        corpus = json.loads((folder / CORPUS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return corpus if isinstance(corpus, dict) and isinstance(corpus.get("windows"), dict) else None


def stored_models(folder: Path = FOLDER) -> list[str]:
    return sorted(p.name[:-4] for p in folder.glob("*.npz"))


def from_survey(s: Survey, texts: dict[int, str], source: str, licence: str) -> Atlas:
    """An atlas held in memory from a pass just run (the on-demand pass for a model without a stored one)."""
    return Atlas(model=s.model, kind=s.kind, n_layers=s.n_layers, n_heads=s.n_heads, n_tokens=s.n_tokens,
                 n_windows=s.n_windows, means=dict(s.means), counts=dict(s.counts), examples=dict(s.examples),
                 tokens=dict(s.tokens), texts={i: texts[i] for i in s.tokens if i in texts}, source=source,
                 licence=licence, slice_means=dict(s.slice_means))
