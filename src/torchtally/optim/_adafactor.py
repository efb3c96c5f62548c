"""`Adafactor`: Adam-like steps with a factored (row x column) second moment."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal, cast, final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["Adafactor"]

_ALGORITHMS = ("cerebras", "torch")


def _check_eps(eps: Any, algorithm: str) -> tuple[float | None, float]:
    if not isinstance(eps, (tuple, list)) or len(eps) != 2:
        raise ValueError(
            f"Argument `eps` must be a pair (eps1 or None, eps2). Received: eps={eps!r}"
        )
    if eps[0] is None and algorithm != "torch":
        # Only torch's form has a default for eps1 (the dtype's machine epsilon).
        raise ValueError(
            "Argument `eps` must be a pair of floats (eps1 or None only with "
            f"algorithm='torch'). Received: eps={eps!r}"
        )
    eps1 = None if eps[0] is None else check_float("eps[0]", eps[0], 0.0)
    return eps1, check_float("eps[1]", eps[1], 0.0)


def _rms(x: Tensor) -> Tensor:
    return cast(Tensor, x.norm() / math.sqrt(x.numel()))


def _alias(name: str, value: Any, alias: str, alias_value: Any) -> tuple[str, Any]:
    """Torch's name for an argument (`d`, `beta2_decay`) stands in for Cerebras' name."""
    if alias_value is None:
        return name, value
    return alias, alias_value


@final
class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018), with the signature and update rule of
    `cerebras.pytorch.optim.Adafactor` (Hugging Face's form).

    A matrix (or a batch of them, along the last two dimensions) keeps only the running means
    of its squared gradient's rows and columns; their outer product, divided by the mean row,
    estimates the second moment. Vectors and scalars keep the full second moment. With step
    t: `beta2_t = 1 - t**decay_rate`; `V = beta2_t V + (1 - beta2_t) (g**2 + eps1)` (factored
    for matrices); `U = g / sqrt(V)`, clipped to `U / max(1, RMS(U) / clip_threshold)`; step
    size `a_t = max(eps2, RMS(w)) * lr` (`lr` alone with `scale_parameter=False`); with
    `beta1`, `U` is replaced by its running mean `m = beta1 m + (1 - beta1) a_t U`; then
    `w -= a_t * weight_decay * w` and `w -= a_t U`.

    Cerebras 2.10 refuses `beta1`, `clip_threshold != 1` and `relative_step`; here they do what
    the paper (and Hugging Face) defines: a first moment, another clipping threshold, and the
    relative step `min(lr, 1/sqrt(t))` (`min(1e-6 t, 1/sqrt(t))` with `warmup_init`).

    `algorithm="torch"` is `torch.optim.Adafactor` step for step instead (eps1 floors the
    second moment rather than being added to `g**2`, `eps1=None` is the machine epsilon, and
    decoupled decay multiplies the weights by `1 - lr * weight_decay`); torch always takes the
    relative step, so pass `relative_step=True` and `eps=(None, 1e-3)` for torch's defaults.
    Torch's names `beta2_decay` and `d` are accepted for `decay_rate` and `clip_threshold`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate (the cap on the relative step when one is taken).
        eps: `(eps1, eps2)`: eps1 regularizes the squared gradient; eps2 floors the
            parameter's RMS.
        clip_threshold: Clipping threshold of the update's RMS.
        decay_rate: Exponent of the second-moment decay schedule, <= 0.
        beta1: Decay of the update's running mean, or None for none.
        weight_decay: Weight decay, scaled by the step size.
        scale_parameter: Scale the step by the parameter's RMS.
        relative_step: Use `min(lr, 1/sqrt(t))` as the rate.
        warmup_init: With `relative_step`, use `min(1e-6 t, 1/sqrt(t))`.
        maximize: Maximize the objective instead of minimizing it.
        algorithm: `"cerebras"` (default) or `"torch"`, see above.
        beta2_decay: Torch's name for `decay_rate`.
        d: Torch's name for `clip_threshold` (>= 1, as torch requires).

    Example:
        >>> w = torch.ones(2, 2, requires_grad=True)
        >>> opt = Adafactor([w], lr=0.01)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([[0.9900, 0.9900],
                [0.9900, 0.9900]], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        eps: tuple[float | None, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta1: float | None = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = False,
        warmup_init: bool = False,
        *,
        maximize: bool = False,
        algorithm: Literal["cerebras", "torch"] = "cerebras",
        beta2_decay: float | None = None,
        d: float | None = None,
    ) -> None:
        if algorithm not in _ALGORITHMS:
            raise ValueError(
                f"Argument `algorithm` must be one of {_ALGORITHMS}. Received: "
                f"algorithm={algorithm!r}"
            )
        name, value = _alias("decay_rate", decay_rate, "beta2_decay", beta2_decay)
        decay = check_float(name, value, high=0.0)
        name, value = _alias("clip_threshold", clip_threshold, "d", d)
        clip = check_float(name, value, 1.0) if name == "d" else check_float(name, value, 0.0)
        if clip == 0.0:
            raise ValueError(
                f"Argument `clip_threshold` must be a float > 0. Received: clip_threshold={clip}"
            )
        if beta1 is not None:
            beta1 = check_float("beta1", beta1, 0.0, 1.0, high_open=True)
        if algorithm == "torch" and beta1 is not None:
            raise ValueError(
                "Argument `beta1` must be None with algorithm='torch' (torch's Adafactor has no "
                f"first moment). Received: beta1={beta1}"
            )
        if check_bool("warmup_init", warmup_init) and not check_bool(
            "relative_step", relative_step
        ):
            raise ValueError(
                "Argument `warmup_init` needs relative_step=True. Received: warmup_init=True, "
                "relative_step=False"
            )
        defaults = {
            "lr": lr,
            "eps": _check_eps(eps, algorithm),
            "clip_threshold": clip,
            "decay_rate": decay,
            "beta1": beta1,
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "scale_parameter": check_bool("scale_parameter", scale_parameter),
            "relative_step": check_bool("relative_step", relative_step),
            "warmup_init": warmup_init,
            "maximize": check_bool("maximize", maximize),
            "algorithm": algorithm,
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create zero row and column factors for matrices, a zero second moment otherwise
        (Cerebras' state names and shapes; torch's with `algorithm="torch"`), and the first
        moment when `beta1` is set."""
        for group in self.param_groups:
            torch_form = group["algorithm"] == "torch"
            for p in group["params"]:
                if torch_form:
                    if p.dim() > 1:
                        self.init_state(p, "row_var", lambda q: q.new_zeros((*q.shape[:-1], 1)))
                        self.init_state(
                            p, "col_var", lambda q: q.new_zeros((*q.shape[:-2], 1, q.shape[-1]))
                        )
                    else:
                        self.init_state(p, "variance", torch.zeros_like)
                    continue
                if group["beta1"] is not None:
                    self.init_state(p, "exp_avg", torch.zeros_like)
                if p.dim() > 1:
                    self.init_state(p, "exp_avg_sq_row", lambda q: q.new_zeros(q.shape[:-1]))
                    self.init_state(
                        p, "exp_avg_sq_col", lambda q: q.new_zeros((*q.shape[:-2], q.shape[-1]))
                    )
                else:
                    self.init_state(p, "exp_avg_sq", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """The entries shaped like their parameter: a vector's second moment, the first
        moment; the factors are not."""
        return ["exp_avg", "exp_avg_sq", "variance"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adafactor step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            if group["algorithm"] == "torch":
                self._torch_step(group, p, grad)
            else:
                self._cerebras_step(group, p, grad)
        return loss

    def _rate(self, group: dict[str, Any], p: Tensor, step: Tensor) -> Tensor:
        lr = self.lr_for(group, p)
        if not group["relative_step"]:
            return lr
        cap = step * 1e-6 if group["warmup_init"] else lr
        return torch.minimum(cap, step.rsqrt())

    def _cerebras_step(self, group: dict[str, Any], p: Tensor, grad: Tensor) -> None:
        state = self.state[p]
        step = self.step_for(p)
        eps1, eps2 = group["eps"]
        rate = self._rate(group, p, step)
        size = torch.clamp(_rms(p), min=eps2) * rate if group["scale_parameter"] else rate
        beta2 = (1 - step ** group["decay_rate"]).to(p.dtype)
        squared = grad * grad + eps1
        if p.dim() > 1:
            row, col = state["exp_avg_sq_row"], state["exp_avg_sq_col"]
            row.lerp_(squared.mean(dim=-1), 1 - beta2)
            col.lerp_(squared.mean(dim=-2), 1 - beta2)
            row_factor = (row / row.mean(dim=-1, keepdim=True)).rsqrt().unsqueeze(-1)
            update = row_factor * col.rsqrt().unsqueeze(-2) * grad
        else:
            variance = state["exp_avg_sq"]
            variance.lerp_(squared, 1 - beta2)
            update = variance.rsqrt() * grad
        clip = torch.clamp(_rms(update) / group["clip_threshold"], min=1.0)
        update = update * (size / clip)
        if group["beta1"] is not None:
            update = state["exp_avg"].lerp_(update, 1 - group["beta1"])
        if has_weight_decay(group["weight_decay"]):
            p.sub_(p * (group["weight_decay"] * size))
        p.sub_(update)

    def _torch_step(self, group: dict[str, Any], p: Tensor, grad: Tensor) -> None:
        step = self.step_for(p)
        lr = self.lr_for(group, p)
        eps1, eps2 = group["eps"]
        eps1 = torch.finfo(p.dtype).eps if eps1 is None else eps1
        rho = torch.minimum(lr, step.rsqrt()) if group["relative_step"] else lr
        alpha = torch.clamp(_rms(p), min=eps2) * rho if group["scale_parameter"] else rho
        if has_weight_decay(group["weight_decay"]):
            p.mul_(1 - lr * group["weight_decay"])
        weight = (step ** group["decay_rate"]).to(p.dtype)
        second = self._torch_second_moment(p, grad, weight, eps1)
        update = second.clamp(min=eps1 * eps1).rsqrt() * grad
        clip = torch.clamp(_rms(update) / group["clip_threshold"], min=1.0)
        p.sub_((alpha / clip) * update)

    def _torch_second_moment(self, p: Tensor, grad: Tensor, weight: Tensor, eps1: float) -> Tensor:
        """Fold `grad**2` into the running estimate with weight `1 - beta2_t`; return V_hat."""
        state = self.state[p]
        if p.dim() <= 1:
            variance: Tensor = state["variance"]
            variance.lerp_(grad * grad, weight)
            return variance.clone()
        row_var: Tensor = state["row_var"]
        col_var: Tensor = state["col_var"]
        row_var.lerp_((grad * grad).mean(dim=-1, keepdim=True), weight)
        col_var.lerp_((grad * grad).mean(dim=-2, keepdim=True), weight)
        return (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
