"""The training loop a reader follows in one screen (nanoGPT's ``train.py`` habit): seeded, bounded, and recording
what a class scrubs back through.

Every ``checkpoint_every`` steps (and at step 0 and the last step) the run evaluates a fixed batch and keeps a
:class:`Checkpoint`: the loss overall and on each copy of the repeated segment, every head's previous-token and
prefix-matching scores, and every head's attention on one probe sequence. It keeps the weights at a few steps too
(:attr:`Run.snapshots`, thinned to at most ``SNAPSHOTS``). The same config and seed give the same run, bit for bit, on
the same machine with one intra-op thread (as :mod:`explorer.jobs.training`'s child process trains; with two,
torch's parallel sums on this machine were measured to differ from run to run): all randomness comes from the run's
own generators (:func:`explorer.learning.data.generator`).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from explorer.learning import data, metrics
from explorer.learning.config import MAX_SECONDS, TrainConfig, check
from explorer.learning.network import AttentionOnly, next_token_losses

EVAL_SIZE = 128   # sequences in the fixed evaluation batch
SNAPSHOTS = 16    # weights kept at most at this many checkpoints (every other one dropped when full)


@dataclass(frozen=True)
class Checkpoint:
    """One recorded step. ``previous``, ``prefix``: ``[layer, head]``; ``probe``: ``[layer, head, query, key]``."""
    step: int
    loss: float          # mean next-token loss over all positions, nats
    loss_first: float    # on the first copy of the segment (after its first token)
    loss_second: float   # on the second copy: low once the model copies
    previous: np.ndarray
    prefix: np.ndarray
    probe: np.ndarray


@dataclass
class Run:
    """What a run recorded so far (appended while it trains; a reader takes ``checkpoints[:n]``)."""
    config: TrainConfig
    probe_tokens: np.ndarray
    checkpoints: list[Checkpoint] = field(default_factory=list)
    snapshots: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)   # step -> weights
    stopped: str | None = None    # None: all steps ran; "nan", "time" or "cancelled": why it ended early
    seconds: float = 0.0

    @property
    def steps(self) -> np.ndarray:
        return np.array([c.step for c in self.checkpoints])

    def series(self, name: str) -> np.ndarray:
        """One recorded quantity over the checkpoints, e.g. ``series("prefix")`` → ``[checkpoint, layer, head]``."""
        return np.stack([np.asarray(getattr(c, name)) for c in self.checkpoints])

    def best_prefix(self) -> np.ndarray:
        """``[checkpoint]``: the best prefix-matching score among the heads of layers after the first."""
        prefix = self.series("prefix")
        return prefix[:, 1:].max(axis=(1, 2)) if prefix.shape[1] > 1 else np.zeros(len(prefix))

    def phase_change(self) -> int | None:
        """The step where the induction circuit has formed (:func:`explorer.learning.metrics.phase_change`)."""
        if not self.checkpoints:
            return None
        return metrics.phase_change(self.steps, self.best_prefix(), self.series("loss_first"),
                                    self.series("loss_second"))

    def final_weights(self) -> dict[str, np.ndarray]:
        return self.snapshots[max(self.snapshots)]


LAYERED = ("W_Q", "W_K", "W_V", "W_O")   # a tensor per layer in the state_dict ("W_Q.0"), stacked here by layer


def weights_of(model: AttentionOnly) -> dict[str, np.ndarray]:
    """The model's ``state_dict`` as plain arrays, each layer's ``W_Q``/``W_K``/``W_V`` stacked to ``[layer, head,
    d_model, d_head]`` and ``W_O`` to ``[layer, head, d_head, d_model]``; ``W_E``, ``W_pos``, ``W_U`` and the norms'
    ``norms.{i}.weight``/``.bias`` as the state_dict names them."""
    state = {name: tensor.detach().numpy().copy() for name, tensor in model.state_dict().items()}
    stacked = {name: np.stack([state.pop(f"{name}.{layer}") for layer in range(model.cfg.n_layers)])
               for name in LAYERED}
    return {**state, **stacked}


def model_from(cfg: TrainConfig, weights: dict[str, np.ndarray]) -> AttentionOnly:
    """An :class:`AttentionOnly` holding ``weights`` (as :func:`weights_of` gives them), in eval mode; a weight
    missing or left over is an error (``load_state_dict``, strict), never a freshly initialised one."""
    model = AttentionOnly(cfg, torch.Generator().manual_seed(0))
    state = {name: torch.from_numpy(np.asarray(value)) for name, value in weights.items() if name not in LAYERED}
    for name in LAYERED:
        state.update({f"{name}.{layer}": torch.from_numpy(np.asarray(weights[name][layer]))
                      for layer in range(cfg.n_layers)})
    model.load_state_dict(state)
    return model.eval()


@torch.inference_mode()
def evaluate(model: AttentionOnly, held: data.Batch, probe: data.Batch, step: int) -> Checkpoint:
    """The checkpoint of ``model`` at ``step`` on the evaluation batch ``held`` and the ``probe`` sequence."""
    logits, patterns = model(held.tokens, keep_patterns=True)
    losses = torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), held.tokens[:, 1:], reduction="none")
    first, second = held.copy_masks()
    rows, queries, keys = held.prefix_targets()
    weights = torch.stack(patterns, dim=1)                                   # (B, layer, head, T, T)
    previous = metrics.previous_token_score(weights.numpy()).mean(axis=0)    # (layer, head)
    prefix = weights[rows, :, :, queries, keys].mean(dim=0).numpy()          # (layer, head)
    _, probe_patterns = model(probe.tokens, keep_patterns=True)
    return Checkpoint(step=step, loss=float(losses.mean()), loss_first=float(losses[first].mean()),
                      loss_second=float(losses[second].mean()), previous=previous.astype(np.float32),
                      prefix=prefix.astype(np.float32),
                      probe=torch.stack(probe_patterns)[:, 0].numpy().astype(np.float16))


def _keep_snapshot(run: Run, step: int, model: AttentionOnly) -> None:
    run.snapshots[step] = weights_of(model)
    if len(run.snapshots) > SNAPSHOTS:   # drop every other kept step, never the first or the newest
        kept = sorted(run.snapshots)
        for s in kept[1:-1:2]:
            del run.snapshots[s]


def train(cfg: TrainConfig, on_checkpoint: Callable[[Run], None] | None = None,
          cancel: threading.Event | None = None, max_seconds: float = MAX_SECONDS) -> Run:
    """Train a fresh model on ``cfg`` and return what it recorded. ``on_checkpoint(run)`` is called after each
    checkpoint (the run so far); the run ends early, saying why in ``Run.stopped``, if the loss becomes NaN, if
    ``max_seconds`` pass, or if ``cancel`` is set."""
    check(cfg)
    model = AttentionOnly(cfg, data.generator(cfg.seed, 0)).train()
    stream, held, probe = data.generator(cfg.seed, 1), data.batch(cfg, EVAL_SIZE, data.generator(cfg.seed, 2)), \
        data.probe(cfg)
    run = Run(cfg, probe_tokens=probe.tokens[0].numpy().copy())
    optimiser = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01, foreach=False)
    start = time.perf_counter()

    def record(step: int) -> None:
        model.eval()
        run.checkpoints.append(evaluate(model, held, probe, step))
        _keep_snapshot(run, step, model)
        model.train()
        run.seconds = time.perf_counter() - start
        if on_checkpoint is not None:
            on_checkpoint(run)

    record(0)
    for step in range(1, cfg.steps + 1):
        loss = next_token_losses(model, data.batch(cfg, cfg.batch, stream).tokens).mean()
        if not torch.isfinite(loss):
            run.stopped = "nan"
            break
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            record(step)
        if cancel is not None and cancel.is_set():
            run.stopped = "cancelled"
            break
        if time.perf_counter() - start > max_seconds:
            run.stopped = "time"
            break
    if run.stopped is not None and run.checkpoints[-1].step != step and run.stopped != "nan":
        record(step)
    run.seconds = time.perf_counter() - start
    return run
