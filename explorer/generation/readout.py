"""Reading a step's residual stream: the logit lens, and each part's direct effect on the picked token's logit.

The final norm is where linearity breaks. RMSNorm is ``g ⊙ x · s`` with ``s = 1/√(mean(x²) + ε)``; LayerNorm is
``g ⊙ (x − mean x) · s + b`` with ``s = 1/√(var x + ε)``. ``s`` depends on the whole residual ``x`` at that
position, so the logit is *not* a sum over the parts of ``x`` in general. Taking ``s`` as fixed at its value for
this position (as the direct-logit-attribution literature does), the logit is linear in ``x``:

    logit(t) = d · x + W_U[t]·b + b_U[t],   d = (W_U[t] ⊙ g) · s   (LayerNorm: d minus its mean, the centring)

and ``x`` is exactly the sum of the embeddings, every head's output through its slice of W_O, every output
projection's bias and every MLP's output. So the parts add up to the logit: ``direct_effect`` shows the sum
beside the model's logit. A head's part is its *direct* effect only: what it adds to the logit through later
heads and MLPs (indirect effects) is counted in theirs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.generation import taps
from explorer.generation.steps import Generation
from explorer.heads_do.measures import output_embedding
from explorer.model import anatomy, families
from explorer.model.anatomy import attention_layers
from explorer.model.loading import LoadedModel
from explorer.words.i18n import N_, Later


def _norm_parts(model: torch.nn.Module, norm: torch.nn.Module,
                x: torch.Tensor) -> tuple[torch.Tensor, float, torch.Tensor | None, bool]:
    """``(g, s, b, centred)`` of the final norm at residual ``x`` (float32), of the kind its family states
    (``families.Family.norm``), checked against the module itself."""
    gain, bias, eps = anatomy.norm_parts(model, norm)
    g = torch.ones_like(x) if gain is None else gain.to(x.device)
    centred = families.family_of(model).norm == "layernorm"
    if centred:
        s = float(1.0 / torch.sqrt(x.var(unbiased=False) + eps))
        ours = g * (x - x.mean()) * s + (0 if bias is None else bias.to(x.device))
    else:
        s = float(1.0 / torch.sqrt(x.pow(2).mean() + eps))
        ours = g * x * s
    with torch.inference_mode():
        theirs = norm(x.to(next(model.parameters()))[None])[0].float().cpu()
    if not torch.allclose(ours, theirs, rtol=1e-4, atol=1e-4 * float(theirs.abs().max())):
        kind = families.family_of(model).norm
        raise families.Unsupported(Later(N_("The final norm ({norm}) does not compute what a {kind} computes: its "
                                            "direct effects cannot be read here."), norm=type(norm).__name__,
                                         kind=kind))
    return g, s, bias if centred else None, centred


@dataclass(frozen=True)
class DirectEffect:
    """Parts of the picked token's logit at one step: ``heads[layer, head]``, ``mlps[layer]``, ``embeddings``,
    ``biases`` (output projections' biases, the final norm's bias, the unembedding's bias), their ``total``, the
    model's ``logit``, and the norm's scale ``s`` held fixed."""
    token: int
    heads: np.ndarray
    mlps: np.ndarray
    embeddings: float
    biases: float
    total: float
    logit: float
    scale: float
    note: str = ""             # what the MLP parts are, where the family's MLPs are mixtures of experts

    @property
    def gap(self) -> float:
        return abs(self.total - self.logit)


def direct_effect(loaded: LoadedModel, gen: Generation, step: int, token: int | None = None) -> DirectEffect:
    """Each part's direct effect on ``token``'s logit (default: the token picked) at ``step``."""
    model = loaded.model
    families.require(model, "direct_effects")
    token = gen.picked(step) if token is None else int(token)
    w_u, b_u = (None if t is None else t.detach().float().cpu() for t in output_embedding(loaded))
    resid = torch.tensor(gen.resid[step])                   # (layer + 1, d_model)
    g, s, norm_bias, centred = _norm_parts(model, taps.final_norm(model), resid[-1])
    d = w_u[token] * g.cpu() * s         # (d_model,)
    if centred:
        d = d - d.mean()
    _, projs = attention_layers(model)
    r = families.residual_scale(model)     # Granite scales each sublayer's output before the residual sum
    heads, layer_biases = [], np.zeros(len(projs))
    for layer, proj in enumerate(projs):
        w_o, b_o = taps.output_projection(proj)                 # (n_heads·d_head, d_model)
        per_head = (w_o.cpu() @ d * r).reshape(gen.n_heads, gen.d_head)
        heads.append((torch.tensor(gen.heads[step, layer]) * per_head).sum(-1))
        if b_o is not None:
            layer_biases[layer] = float(b_o.cpu() @ d) * r
    heads = torch.stack(heads).numpy().astype(np.float64)
    biases = float(layer_biases.sum())
    if gen.mlp is not None:
        mlps = (torch.tensor(gen.mlp[step]) @ d * r).numpy().astype(np.float64)
    else:   # the block's update minus its attention's (heads and the projection's bias): what is left is the MLP's
        update = (resid[1:] - resid[:-1]) @ d
        mlps = update.numpy().astype(np.float64) - heads.sum(-1) - layer_biases
    if norm_bias is not None:
        biases += float(norm_bias.cpu() @ w_u[token])
    if b_u is not None:
        biases += float(b_u[token])
    embeddings = float(resid[0] @ d)
    total = float(heads.sum() + mlps.sum() + embeddings + biases)
    logit = float(gen.logits[step, token]) if token < gen.logits.shape[1] else float("nan")
    return DirectEffect(token, heads, mlps, embeddings, biases, total, logit, s, families.mlp_note(model) or "")


@dataclass(frozen=True)
class Lens:
    """The logit lens at one step: ``ids[layer, k]`` and ``probs[layer, k]``, the top tokens when the residual
    after block ``layer`` goes through the final norm and the unembedding; ``picked_prob[layer]`` and
    ``picked_rank[layer]`` (0 = top) of the token the model finally picked."""
    ids: np.ndarray
    probs: np.ndarray
    picked_prob: np.ndarray
    picked_rank: np.ndarray
    logits_last: np.ndarray     # the last layer's lens logits (equal to the model's logits)


def logit_lens(loaded: LoadedModel, gen: Generation, step: int, k: int = 5) -> Lens:
    """Read the residual stream after every block at ``step`` as if it were the last one."""
    families.require(loaded.model, "logit_lens")
    w_u, b_u = output_embedding(loaded)
    norm = taps.final_norm(loaded.model)
    with torch.inference_mode():
        x = torch.tensor(gen.resid[step, 1:]).to(w_u)       # (layer, d_model)
        logits = families.final_logits(loaded.model, norm(x) @ w_u.T + (0 if b_u is None else b_u))  # (layer, vocab)
        probs = torch.softmax(logits.double(), dim=-1)
        top = probs.topk(k, dim=-1)
        picked = gen.picked(step)
        p_picked = probs[:, picked]
        rank = (probs > p_picked[:, None]).sum(-1)
    return Lens(top.indices.cpu().numpy(), top.values.cpu().numpy(), p_picked.cpu().numpy(),
                rank.cpu().numpy(), logits[-1].float().cpu().numpy())
