"""What a training run may be: its settings as plain values, their hard limits, and the one sentence that refuses a
setting out of range before anything runs.

The limits keep a run small enough to train on a shared two-core server while a class waits (steps, sizes and
seconds all capped); :func:`parse` reads settings from a link or a form, where every value arrives as text.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

from explorer.words import numbers
from explorer.words.i18n import N_, Later

TASKS = ("induction", "no-repeat")   # sequences with a repeated segment; the contrast: no segment repeats

# hard caps, inclusive: (low, high)
LIMITS = {
    "n_layers": (1, 3),
    "n_heads": (1, 4),
    "d_model": (16, 128),
    "vocab": (8, 128),
    "context": (16, 128),
    "steps": (1, 6000),
    "batch": (1, 256),
    "seed": (0, 2**31 - 1),
    "checkpoint_every": (1, 1000),
    "repeat_min": (2, 64),
    "repeat_max": (2, 64),
}
LR_RANGE = (1e-5, 0.1)          # the learning rate, exclusive of 0
# each setting by the words the page shows it with ("Layers", "Seed"), so that a refusal names what a student sees
LABELS = {"n_layers": N_("Layers"), "n_heads": N_("Heads a layer"), "d_model": N_("Width (d_model)"),
          "vocab": N_("Vocabulary"), "context": N_("Context length"), "task": N_("Task"), "seed": N_("Seed"),
          "steps": N_("Training steps"), "batch": N_("Batch size"), "lr": N_("Learning rate"),
          "layer_norm": N_("Layer norm"), "checkpoint_every": N_("Steps between checkpoints"),
          "repeat_min": N_("Shortest repeat"), "repeat_max": N_("Longest repeat")}
MAX_SECONDS = 120.0             # wall-clock cap of one run, whatever its steps


class ConfigError(ValueError):
    """A setting out of range; ``str()`` is one sentence in the language of whoever reads it (``reason``)."""

    def __init__(self, reason: Later):
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return str(self.reason)


@dataclass(frozen=True)
class TrainConfig:
    """One run: the model (``n_layers`` attention-only layers of ``n_heads`` heads, width ``d_model``, head size
    ``d_model // n_heads``), the task (``vocab`` tokens, sequences of ``context`` positions whose repeated segment is
    ``repeat_min``–``repeat_max`` tokens long), and the loop (``steps`` of AdamW at ``lr`` on ``batch`` sequences,
    recorded every ``checkpoint_every`` steps). The defaults are the class's two-layer run."""
    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 32
    vocab: int = 32
    context: int = 32
    task: str = "induction"
    seed: int = 0
    steps: int = 1500
    batch: int = 32
    lr: float = 1e-2
    layer_norm: bool = False
    checkpoint_every: int = 25
    repeat_min: int = 4
    repeat_max: int = 12

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def key(self) -> tuple:
        """Plain values naming the run: equal keys, equal runs (the shared job's key)."""
        return tuple(asdict(self).items())

    def with_(self, **changes) -> "TrainConfig":
        return replace(self, **changes)


class LocalNumber:
    """A number in a refusal, written the reader's way when the sentence is (``Later`` formats its fields then): a
    whole number grouped ("2.147.483.647"), any other as few digits as say it ("1e-05", "0,1")."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __str__(self) -> str:
        if isinstance(self.x, bool) or not isinstance(self.x, (int, float)):
            return str(self.x)
        return numbers.integer(self.x) if isinstance(self.x, int) else numbers.number(self.x)


def label(name: str) -> Later:
    """Setting ``name`` ("n_layers") as the page shows it ("Layers"), in the reader's language."""
    return Later(LABELS[name])


def _out_of_range(name: str, value, low, high) -> ConfigError:
    return ConfigError(Later(N_("The setting “{name}” must be between {low} and {high}, not {value}."),
                             name=label(name), low=LocalNumber(low), high=LocalNumber(high), value=LocalNumber(value)))


def check(cfg: TrainConfig) -> TrainConfig:
    """``cfg`` if every setting is in range, else :class:`ConfigError` naming the first one that is not."""
    for name, (low, high) in LIMITS.items():
        value = getattr(cfg, name)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise _out_of_range(name, value, low, high)
    if cfg.task not in TASKS:
        raise ConfigError(Later(N_("The task must be one of {tasks}, not {value}."),
                                tasks=", ".join(TASKS), value=cfg.task))
    if not isinstance(cfg.lr, float) or not math.isfinite(cfg.lr) or not LR_RANGE[0] <= cfg.lr <= LR_RANGE[1]:
        raise _out_of_range("lr", cfg.lr, LR_RANGE[0], LR_RANGE[1])
    if cfg.d_model % cfg.n_heads:
        raise ConfigError(Later(N_("The width d_model ({d_model}) must split evenly over the {heads} heads."),
                                d_model=LocalNumber(cfg.d_model), heads=LocalNumber(cfg.n_heads)))
    if cfg.repeat_min > cfg.repeat_max:
        raise ConfigError(Later(N_("The shortest repeat ({low}) is longer than the longest ({high})."),
                                low=LocalNumber(cfg.repeat_min), high=LocalNumber(cfg.repeat_max)))
    if 2 * cfg.repeat_max + 1 > cfg.context:
        raise ConfigError(Later(N_("A context of {context} positions cannot hold a segment of {n} tokens twice after "
                                   "the start token: make the context at least {need}."),
                                context=LocalNumber(cfg.context), n=LocalNumber(cfg.repeat_max),
                                need=LocalNumber(2 * cfg.repeat_max + 1)))
    if cfg.repeat_max >= cfg.vocab:
        raise ConfigError(Later(N_("The repeated segment ({n} tokens) must be shorter than the vocabulary ({vocab})."),
                                n=LocalNumber(cfg.repeat_max), vocab=LocalNumber(cfg.vocab)))
    return cfg


def parse(values: dict[str, object], base: TrainConfig = TrainConfig()) -> TrainConfig:
    """A checked config from ``values`` (text from a link or a form, or plain values) over ``base``; unknown names and
    values that are not numbers are refused in one sentence."""
    known = {f.name: f.type for f in fields(TrainConfig)}
    changes: dict[str, object] = {}
    for name, raw in values.items():
        if name not in known:
            raise ConfigError(Later(N_("{name} is not a setting of a training run."), name=str(name)[:40]))
        default = getattr(base, name)
        text = str(raw).strip()[:40]
        try:
            if isinstance(default, bool):
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                changes[name] = text.lower() in ("true", "1", "yes")
            elif isinstance(default, int):
                changes[name] = int(text)
            elif isinstance(default, float):
                changes[name] = float(text)
            else:
                changes[name] = text
        except ValueError:
            raise ConfigError(Later(N_("The setting “{name}” must be a number, not {value}."), name=label(name),
                                    value=text)) from None
    return check(replace(base, **changes))
