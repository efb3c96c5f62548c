"""`Muon`: momentum SGD whose matrix updates are orthogonalized by a Newton-Schulz iteration."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast, final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["Muon", "zeropower_via_newtonschulz5"]

# The quintic's coefficients (Jordan et al., 2024), chosen to push every singular value of the
# normalized matrix towards 1 in a few steps.
_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def zeropower_via_newtonschulz5(grad: Tensor, steps: int) -> Tensor:
    """Approximate `U V^T` of `grad = U S V^T` (its nearest semi-orthogonal matrix) in bfloat16.

    Works on the last two dimensions (a batch of matrices is fine). Tall matrices are
    transposed so the Gram matrix `X X^T` is the smaller one.

    Args:
        grad: A tensor with 2 or more dimensions.
        steps: Number of Newton-Schulz iterations.

    Returns:
        A bfloat16 tensor shaped like `grad`.

    Example:
        >>> q = zeropower_via_newtonschulz5(torch.diag(torch.tensor([3.0, 0.5])), 5)
        >>> bool((q.float().diagonal() - 1).abs().max() < 0.35)
        True
    """
    if grad.dim() < 2:
        raise ValueError(
            "Argument `grad` must have 2 or more dimensions (Muon orthogonalizes matrices). "
            f"Received: a tensor of shape {tuple(grad.shape)}"
        )
    a, b, c = _NS_COEFFICIENTS
    x = grad.bfloat16()
    tall = grad.size(-2) > grad.size(-1)
    if tall:
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        gram = x @ x.mT
        poly = b * gram + c * gram @ gram
        x = a * x + poly @ x
    return cast(Tensor, x.mT if tall else x)


@final
class Muon(Optimizer):
    """Muon (Jordan et al., 2024), the update of `cstorch.optim.Muon` on a CPU/GPU backend.

    Per matrix parameter W (a 4-d convolution kernel is flattened to `(out, -1)`):
    `buf = momentum * buf + (1 - momentum) * g`; the direction is
    `g + momentum * buf` (Nesterov) or `buf`; it is orthogonalized by `ns_steps` Newton-Schulz
    iterations in bfloat16; then with `lr' = lr * 0.2 * sqrt(max(rows, cols))`,
    `W *= 1 - lr' * weight_decay` and `W -= lr' * direction`.

    Every parameter must have 2 or more dimensions (as in Cerebras, whose step raises on a
    vector): give biases and norms to another optimizer (e.g. `AdamW`) in a second optimizer.

    Cerebras 2.10's step forms the new momentum buffer but never stores it, so its momentum
    never accumulates: each step uses `(1 - momentum) * g` as the buffer.
    `keep_momentum=False` reproduces that exactly; the default keeps the buffer, as the
    reference algorithm does. The two agree on the first step and whenever `momentum` is 0.

    Args:
        params: Parameters or parameter groups (matrices or higher-rank tensors).
        lr: Learning rate before the shape adjustment.
        weight_decay: Decoupled weight decay, in [0, 1).
        momentum: Momentum factor, in [0, 1).
        nesterov: Use Nesterov momentum.
        ns_steps: Newton-Schulz iterations (>= 0).
        keep_momentum: Accumulate the momentum buffer across steps (False: Cerebras 2.10).

    Example:
        >>> w = torch.eye(2, requires_grad=True)
        >>> opt = Muon([w], lr=0.1, weight_decay=0.0)
        >>> (w * torch.tensor([[1.0, 0.0], [0.0, 2.0]])).sum().backward()
        >>> opt.step()
        >>> bool(w.detach().diagonal().lt(1).all())
        True
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 0.02,
        weight_decay: float = 0.01,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        *,
        keep_momentum: bool = True,
    ) -> None:
        if isinstance(ns_steps, bool) or not isinstance(ns_steps, int) or ns_steps < 0:
            raise ValueError(
                f"Argument `ns_steps` must be an integer >= 0. Received: ns_steps={ns_steps!r}"
            )
        defaults = {
            "lr": lr,
            "weight_decay": check_float("weight_decay", weight_decay, 0.0, 1.0, high_open=True),
            "momentum": check_float("momentum", momentum, 0.0, 1.0, high_open=True),
            "nesterov": check_bool("nesterov", nesterov),
            "ns_steps": ns_steps,
            "keep_momentum": check_bool("keep_momentum", keep_momentum),
        }
        super().__init__(params, defaults)

    def preinitialize(self) -> None:
        """Check every parameter is a matrix (or more) and create its zero momentum buffer."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() < 2:
                    raise ValueError(
                        "Argument `params` must hold tensors with 2 or more dimensions "
                        "(Muon orthogonalizes matrices; give vectors to another optimizer). "
                        f"Received: a parameter of shape {tuple(p.shape)}"
                    )
                self.init_state(p, "momentum_buffer", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """The momentum buffer is shaped like its parameter."""
        return ["momentum_buffer"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Muon step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            momentum = group["momentum"]
            buf = self.state[p]["momentum_buffer"]
            new_buf = buf * momentum + grad * (1 - momentum)
            if group["keep_momentum"]:
                buf.copy_(new_buf)
            direction = grad + new_buf * momentum if group["nesterov"] else new_buf
            if direction.dim() == 4:
                direction = direction.view(len(direction), -1)
            direction = zeropower_via_newtonschulz5(direction, group["ns_steps"])
            direction = direction.contiguous().view_as(p)
            rows, cols = p.shape[:2]
            adjusted_lr = self.lr_for(group, p) * (0.2 * math.sqrt(max(rows, cols)))
            if has_weight_decay(group["weight_decay"]):
                p.mul_(1 - adjusted_lr * group["weight_decay"])
            # The step is rounded to bfloat16 as in Cerebras (a Python-float rate times the
            # bfloat16 direction). A 0-dim float32 rate would itself be rounded to bfloat16
            # first, so the product is formed in float32.
            p.sub_((direction.float() * adjusted_lr).to(direction.dtype))
        return loss
