"""`Adam` and `AdamW`: adaptive moments, with L2 or decoupled weight decay."""

from __future__ import annotations

import functools
from abc import ABC
from collections.abc import Callable
from typing import Any, final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import decay_weights, has_weight_decay, update_moments

__all__ = ["Adam", "AdamW"]


class _AdamBase(Optimizer, ABC):
    """The Adam update shared by `Adam` and `AdamW`, which differ only in their defaults."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor,
        betas: tuple[float, float],
        eps: float,
        weight_decay: float,
        amsgrad: bool,
        *,
        maximize: bool,
        decoupled_weight_decay: bool,
        correct_bias: bool,
        eps_placement: str,
    ) -> None:
        if eps_placement not in ("cerebras", "torch"):
            raise ValueError(
                'Argument `eps_placement` must be "cerebras" or "torch". '
                f"Received: eps_placement={eps_placement!r}"
            )
        defaults: dict[str, Any] = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "amsgrad": check_bool("amsgrad", amsgrad),
            "maximize": check_bool("maximize", maximize),
            "decoupled_weight_decay": check_bool("decoupled_weight_decay", decoupled_weight_decay),
            "correct_bias": check_bool("correct_bias", correct_bias),
            "eps_placement": eps_placement,
        }
        super().__init__(params, defaults)

    def preinitialize(self) -> None:
        """Create the zero moment estimates (and the running maximum with `amsgrad`), and with
        `correct_bias` the running powers `beta1**t`, `beta2**t` (Cerebras' state layout)."""
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                self.init_state(p, "exp_avg", torch.zeros_like)
                self.init_state(p, "exp_avg_sq", torch.zeros_like)
                if group["amsgrad"]:
                    self.init_state(p, "max_exp_avg_sq", torch.zeros_like)
                if group["correct_bias"]:
                    self.init_state(p, "beta1_power", functools.partial(_power, beta1))
                    self.init_state(p, "beta2_power", functools.partial(_power, beta2))

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict of ours, of Cerebras' Adam/AdamW, or of `torch.optim.Adam(W)`:
        a torch state's step count becomes the bias-correction powers.

        Args:
            state_dict: As returned by `state_dict()`.
        """
        groups_of = {
            index: group for group in state_dict["param_groups"] for index in group["params"]
        }
        converted = dict(state_dict)
        converted["state"] = {}
        for index, state in state_dict["state"].items():
            state = dict(state)
            group = groups_of.get(index, {})
            if "step" in state and "beta1_power" not in state:
                step = float(torch.as_tensor(state.pop("step")))
                beta1, beta2 = group.get("betas", self.defaults["betas"])
                if group.get("correct_bias", self.defaults["correct_bias"]):
                    # The powers held are those of the next step, t + 1. (Cerebras converts to
                    # beta**t, which repeats the last step's correction once.)
                    state["beta1_power"] = torch.tensor(beta1 ** (step + 1), dtype=torch.float32)
                    state["beta2_power"] = torch.tensor(beta2 ** (step + 1), dtype=torch.float32)
            converted["state"][index] = state
        # Cerebras' Adam keeps its L2 rate under this name (and `weight_decay` at 0).
        converted["param_groups"] = [
            _from_cerebras_group(group, self.defaults["decoupled_weight_decay"])
            for group in state_dict["param_groups"]
        ]
        super().load_state_dict(converted)

    def weight_decay_key(self, group: dict[str, Any]) -> str:
        """With an L2 `weight_decay` (Adam's default), a weight-decay scheduler sets a separate
        decoupled decay, `scheduled_weight_decay`, as Cerebras' Adam does (it keeps the L2 rate
        as `l2_regularization_rate` and schedules `weight_decay`, applied like AdamW's).

        Args:
            group: A parameter group.

        Returns:
            `"weight_decay"` for a decoupled group, else `"scheduled_weight_decay"`.
        """
        return "weight_decay" if group["decoupled_weight_decay"] else "scheduled_weight_decay"

    def state_names_to_sparsify(self) -> list[str]:
        """The moment estimates are shaped like their parameter."""
        return ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adam step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            lr, weight_decay = self.lr_for(group, p), group["weight_decay"]
            beta1, beta2 = group["betas"]
            decoupled = group["decoupled_weight_decay"]
            if not decoupled:
                grad = decay_weights(p, grad, lr, weight_decay, decoupled=False)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
            second = exp_avg_sq
            if group["amsgrad"]:
                second = state["max_exp_avg_sq"]
                second.copy_(torch.maximum(second, exp_avg_sq))
            # Cerebras' placement of eps: added to sqrt(v) before the bias correction, which
            # then scales the whole update (torch adds eps to the corrected sqrt(v_hat)).
            if group["correct_bias"]:
                beta1_power, beta2_power = state["beta1_power"], state["beta2_power"]
                root2 = (1 - beta2_power).sqrt()
                if group["eps_placement"] == "torch":
                    update = (exp_avg / (second.sqrt() / root2 + group["eps"])) / (1 - beta1_power)
                else:
                    update = exp_avg / (second.sqrt() + group["eps"]) * (root2 / (1 - beta1_power))
                beta1_power.mul_(beta1)
                beta2_power.mul_(beta2)
            else:
                update = exp_avg / (second.sqrt() + group["eps"])
            if decoupled and has_weight_decay(weight_decay):
                update = update + weight_decay * p
            scheduled = group.get("scheduled_weight_decay", 0.0)
            if has_weight_decay(scheduled):
                update = update + scheduled * p
            p.sub_(lr * update)
        return loss


def _power(beta: float, p: Tensor) -> Tensor:
    # float32 as Cerebras (a float64 parameter's corrections are formed in float64 in `step`).
    return torch.tensor(beta, dtype=Optimizer.scalar_dtype(p), device=p.device)


def _from_cerebras_group(group: dict[str, Any], decoupled: bool) -> dict[str, Any]:
    group = dict(group)
    if "l2_regularization_rate" not in group:
        return group
    l2 = group.pop("l2_regularization_rate")
    if not decoupled:
        # Cerebras' Adam: the L2 rate under its own name, its (scheduled) decoupled decay
        # under `weight_decay`; ours keeps them as `weight_decay` and `scheduled_weight_decay`.
        decoupled_decay = group.get("weight_decay", 0.0)
        group["weight_decay"] = l2
        if isinstance(decoupled_decay, Tensor) or decoupled_decay:
            group["scheduled_weight_decay"] = decoupled_decay
    return group


@final
class Adam(_AdamBase):
    """Adam (Kingma & Ba, 2015), step for step equal to `cstorch.optim.Adam`.

    Cerebras' form of the update: `w -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) *
    m / (sqrt(v) + eps)`, with the powers kept as running products (`beta1_power`,
    `beta2_power`) and eps 1e-6 by default. torch adds eps after the correction
    (`sqrt(v_hat) + eps`), i.e. its eps is this one divided by `sqrt(1 - beta2**t)`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Weight decay; an L2 penalty on the gradient unless decoupled.
        amsgrad: Use the running maximum of the second moment (AMSGrad).
        maximize: Maximize the objective instead of minimizing it.
        decoupled_weight_decay: Decay the weights directly, as AdamW does.
        correct_bias: Divide the moments by their bias corrections (cstorch's option).
        eps_placement: "cerebras" (default): eps is added to `sqrt(v)`; "torch": to the
            bias-corrected `sqrt(v_hat)`, as `torch.optim` does.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Adam([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
        correct_bias: bool = True,
        eps_placement: str = "cerebras",
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay,
            correct_bias=correct_bias,
            eps_placement=eps_placement,
        )


@final
class AdamW(_AdamBase):
    """AdamW (Loshchilov & Hutter, 2019), step for step equal to `cstorch.optim.AdamW`.

    Cerebras' defaults (eps 1e-6, weight_decay 0.0, `correct_bias` before `amsgrad`) and its
    placement of eps (see `Adam`).

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Decoupled weight decay: each step multiplies the weights by
            `1 - lr * weight_decay`.
        amsgrad: Use the running maximum of the second moment (AMSGrad).
        maximize: Maximize the objective instead of minimizing it.
        correct_bias: Divide the moments by their bias corrections (cstorch's option).
        eps_placement: "cerebras" (default): eps is added to `sqrt(v)`; "torch": to the
            bias-corrected `sqrt(v_hat)`, as `torch.optim` does.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = AdamW([w], lr=0.1, weight_decay=0.0)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        correct_bias: bool = True,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        eps_placement: str = "cerebras",
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
            correct_bias=correct_bias,
            eps_placement=eps_placement,
        )
