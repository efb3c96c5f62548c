"""`GradScaler`: cstorch's loss scaler, static or dynamic, with no host reads.

Dynamic loss scaling (as in cstorch 2.10): every `update` counts a step since the last rescale,
and an overflow when the global gradient norm `sqrt(sum(g * g))` is not finite (so finite but
huge gradients whose squares overflow count too). When the fraction of overflow steps since the
last rescale exceeds `overflow_tolerance`, the scale halves and both counters reset; once the
count exceeds `steps_per_increase` (the (steps_per_increase + 1)-th clean step), it doubles and
the counters reset.
The scale stays within `[min_loss_scale, max_loss_scale]`. A step with an overflow is skipped
by `torch.where` on the parameters and optimizer state, never by a Python branch on a value.
"""

from __future__ import annotations

from typing import Any, final

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.amp._clip import clip_grad_norm, grads_of
from torchtally.amp._conditional import step_where
from torchtally.amp._precision import get_half_dtype_str

__all__ = ["GradScaler"]

_DEFAULT_SCALE = 2.0**15
_DEFAULT_SCALE_CBFLOAT16 = 2.0**31
_DEFAULT_MIN = 2.0**-14
_DEFAULT_STEPS_PER_INCREASE = 2000
_UNSCALED, _STEPPED = "unscaled", "stepped"


@final
class GradScaler:
    """Scale the loss before backward and unscale the gradients before the optimizer step.

    Args:
        loss_scale: "dynamic" for dynamic loss scaling, or a fixed positive scale.
            None or 0.0 (the default) means no scaling.
        init_scale: The initial scale of dynamic scaling. Default: 2**15 (2**31 when the
            half dtype is cbfloat16).
        steps_per_increase: Steps since the last rescale after which dynamic scaling doubles
            the scale. Default: 2000.
        min_loss_scale: The smallest scale dynamic scaling may choose. Default: 2**-14.
        max_loss_scale: The largest scale dynamic scaling may choose. Default: as init_scale.
        overflow_tolerance: The largest fraction of steps with non-finite gradients (since the
            last rescale) tolerated before the scale halves. Default: 0.0 (any overflow).
        max_gradient_norm: Dynamic scaling only: clip each optimizer's unscaled gradients to
            this global norm (cstorch's "DLS + GCC"). Default: None.

    Example:
        >>> from torchtally.optim import SGD
        >>> model = torch.nn.Linear(2, 1)
        >>> optimizer = SGD(model.parameters(), lr=0.1)
        >>> loss = model(torch.ones(4, 2)).pow(2).mean()
        >>> scaler = GradScaler(loss_scale="dynamic", init_scale=8.0, steps_per_increase=2)
        >>> scaler.scale(loss).backward()
        >>> scaler.step(optimizer)  # skipped (by tensor ops) if a gradient is inf/nan
        >>> scaler.update()
        >>> scaler.get_scale()
        tensor(8.)
    """

    def __init__(
        self,
        loss_scale: str | float | None = None,
        init_scale: float | None = None,
        steps_per_increase: int | None = None,
        min_loss_scale: float | None = None,
        max_loss_scale: float | None = None,
        overflow_tolerance: float = 0.0,
        max_gradient_norm: float | None = None,
    ) -> None:
        self.dynamic = loss_scale == "dynamic"
        static = _static_scale(loss_scale)
        self.steps_per_increase = _default(steps_per_increase, _DEFAULT_STEPS_PER_INCREASE)
        check_int("steps_per_increase", self.steps_per_increase, 1)
        self.min_loss_scale = _positive("min_loss_scale", _default(min_loss_scale, _DEFAULT_MIN))
        if self.dynamic and self.min_loss_scale < _DEFAULT_MIN:
            raise ValueError(
                "Argument `min_loss_scale` must be >= 2**-14 for dynamic loss scaling. "
                f"Received: min_loss_scale={self.min_loss_scale}"
            )
        top = _DEFAULT_SCALE_CBFLOAT16 if get_half_dtype_str() == "cbfloat16" else _DEFAULT_SCALE
        self.max_loss_scale = _positive("max_loss_scale", _default(max_loss_scale, top))
        if self.min_loss_scale > self.max_loss_scale:
            raise ValueError(
                "Argument `min_loss_scale` must be <= max_loss_scale "
                f"({self.max_loss_scale}). Received: min_loss_scale={self.min_loss_scale}"
            )
        self.overflow_tolerance = _fraction("overflow_tolerance", overflow_tolerance)
        self.max_gradient_norm = (
            None if max_gradient_norm is None else _positive("max_gradient_norm", max_gradient_norm)
        )
        init = _positive("init_scale", _default(init_scale, top))
        self._static_scale = static  # a Python float, so `is_enabled` never reads a tensor
        first = min(self.max_loss_scale, init) if self.dynamic else static
        self._loss_scale = torch.tensor(first, dtype=torch.float32)
        self._steps_since_rescale = torch.zeros((), dtype=torch.int64)
        self._overflows_since_rescale = torch.zeros((), dtype=torch.int64)
        self._num_skipped_steps = torch.zeros((), dtype=torch.int64)
        self._non_clamped_loss_scale: Tensor | None = None
        # Sum of the squared unscaled gradients of this iteration (all optimizers).
        self._sum_squares: Tensor | None = None
        self._isfinite: Tensor | None = None
        self._stages: dict[int, str] = {}

    # ------------------------------------------------------------------------ the step

    def is_enabled(self) -> bool:
        """Whether any scaling happens (dynamic, or a static scale other than 1)."""
        return self.dynamic or self._static_scale != 1.0

    def get_scale(self) -> Tensor:
        """The current loss scale (a 0-d float32 tensor on the gradients' device)."""
        return self._loss_scale

    def get_non_clamped_scale(self) -> Tensor:
        """The dynamic scale before the last clamp to `min_loss_scale` (else the scale)."""
        if self.dynamic and self._non_clamped_loss_scale is not None:
            return self._non_clamped_loss_scale
        return self._loss_scale

    def get_num_skipped_steps(self) -> Tensor:
        """How many optimizer steps were skipped for non-finite gradients (a 0-d int64 tensor;
        always 0 without dynamic scaling)."""
        if self.dynamic:
            return self._num_skipped_steps
        return torch.zeros((), dtype=torch.int64)

    @property
    def num_skipped_steps(self) -> Tensor:
        """Same as `get_num_skipped_steps()`."""
        return self.get_num_skipped_steps()

    def scale(self, loss: Tensor) -> Tensor:
        """Multiply `loss` by the loss scale.

        Args:
            loss: The loss to call `backward` on.

        Returns:
            The scaled loss (in float32), or `loss` itself when no scaling is configured.
        """
        if not isinstance(loss, Tensor):
            raise TypeError(f"Argument `loss` must be a tensor. Received: loss={loss!r}")
        if not self.is_enabled():
            return loss
        self._to_device(loss.device)
        return loss.float() * self._loss_scale

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of `optimizer`'s parameters by the loss scale, in place.

        With dynamic scaling this also records whether every gradient is finite and, with
        `max_gradient_norm`, clips the unscaled gradients. Calling it twice for one optimizer
        before `update` is a no-op.

        Args:
            optimizer: The optimizer whose gradients to unscale.
        """
        stage = self._stages.get(id(optimizer))
        if stage == _UNSCALED:
            return
        if stage == _STEPPED:
            raise RuntimeError("unscale_() was called after step(); call update() first.")
        self._stages[id(optimizer)] = _UNSCALED
        if not self.is_enabled():
            return
        grads = grads_of(p for group in optimizer.param_groups for p in group["params"])
        if not grads:
            return
        self._to_device(grads[0].device)
        inverse = self._loss_scale.reciprocal()
        for g in grads:
            g.detach().mul_(inverse.to(g.device))
        if self.dynamic:
            self._record_finite(grads)
            if self.max_gradient_norm is not None:
                clip_grad_norm(grads, self.max_gradient_norm)

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (if not done yet) and step `optimizer`, skipping the step on inf/nan.

        Args:
            optimizer: The optimizer to step.
            *args: Passed to `optimizer.step`.
            **kwargs: Passed to `optimizer.step`.

        Returns:
            What `optimizer.step` returns.
        """
        if self._stages.get(id(optimizer)) == _STEPPED:
            raise RuntimeError("step() was already called for this optimizer since update().")
        self.unscale_(optimizer)
        self._stages[id(optimizer)] = _STEPPED
        if self.dynamic and self._isfinite is None and self._sum_squares is not None:
            # Judged once per iteration, on every optimizer unscaled so far (as cstorch).
            self._isfinite = self._sum_squares.sqrt() < float("inf")
        if not self.dynamic or self._isfinite is None:
            return optimizer.step(*args, **kwargs)
        self._num_skipped_steps.add_((~self._isfinite).long())
        return step_where(self._isfinite, optimizer, *args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Update the dynamic loss scale after all optimizers stepped; start a new iteration.

        Args:
            new_scale: Not supported (as in cstorch); must be None.
        """
        if new_scale is not None:
            raise ValueError(
                "Argument `new_scale` is not supported by GradScaler; the scale is managed by "
                f"dynamic loss scaling. Received: new_scale={new_scale!r}"
            )
        if self.dynamic and self._isfinite is not None:
            self._update_scale(self._isfinite)
        self._isfinite = None
        self._sum_squares = None
        self._stages.clear()

    # --------------------------------------------------------------------- checkpoints

    def state_dict(self) -> dict[str, Tensor]:
        """The scaler's state: the scale and, when dynamic, its two counters."""
        state = {"loss_scale": self._loss_scale.detach().clone()}
        if self.dynamic:
            state["steps_since_rescale"] = self._steps_since_rescale.detach().clone()
            state["overflows_since_rescale"] = self._overflows_since_rescale.detach().clone()
            state["num_skipped_steps"] = self._num_skipped_steps.detach().clone()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state saved by `state_dict` (in place; missing keys are kept).

        Args:
            state_dict: A dict from `state_dict()`.
        """
        for key, target in (
            ("loss_scale", self._loss_scale),
            ("steps_since_rescale", self._steps_since_rescale),
            ("overflows_since_rescale", self._overflows_since_rescale),
            ("num_skipped_steps", self._num_skipped_steps),
        ):
            if key in state_dict:
                target.copy_(torch.as_tensor(state_dict[key], dtype=target.dtype))
        if not self.dynamic and "loss_scale" in state_dict:
            self._static_scale = float(state_dict["loss_scale"])

    # ------------------------------------------------------------------------ internals

    def _to_device(self, device: torch.device) -> None:
        if self._loss_scale.device != device:
            self._loss_scale = self._loss_scale.to(device)
            self._steps_since_rescale = self._steps_since_rescale.to(device)
            self._overflows_since_rescale = self._overflows_since_rescale.to(device)
            self._num_skipped_steps = self._num_skipped_steps.to(device)

    def _record_finite(self, grads: list[Tensor]) -> None:
        device = self._loss_scale.device
        # Squares in the gradient's dtype, as cstorch: a float16 gradient above ~256 overflows.
        squares = torch.stack([torch.sum(g * g).float().to(device) for g in grads]).sum()
        self._sum_squares = squares if self._sum_squares is None else self._sum_squares + squares

    def _update_scale(self, isfinite: Tensor) -> None:
        steps, overflows, scale = (
            self._steps_since_rescale,
            self._overflows_since_rescale,
            self._loss_scale,
        )
        steps.add_(1)
        overflows.add_((~isfinite).long())
        # Too many overflows since the last rescale: halve and restart the counts.
        exceeded = overflows.float() / steps.float() > self.overflow_tolerance
        scale.copy_(torch.where(exceeded, scale / 2, scale))
        _reset_where(exceeded, steps, overflows)
        # More than `steps_per_increase` steps since the last rescale (checked after a possible
        # reset): double. cstorch compares strictly, so the first doubling is on step n + 1.
        grow = steps > self.steps_per_increase
        scale.copy_(torch.where(grow, scale * 2, scale))
        _reset_where(grow, steps, overflows)
        scale.clamp_(max=self.max_loss_scale)
        self._non_clamped_loss_scale = scale.detach().clone()
        scale.clamp_(min=self.min_loss_scale)


def _reset_where(condition: Tensor, *counters: Tensor) -> None:
    for counter in counters:
        counter.copy_(torch.where(condition, torch.zeros_like(counter), counter))


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value


def _static_scale(loss_scale: Any) -> float:
    if loss_scale == "dynamic":
        return 1.0
    if loss_scale is None:
        return 1.0
    if isinstance(loss_scale, bool) or not isinstance(loss_scale, (int, float)):
        raise ValueError(
            "Argument `loss_scale` must be 'dynamic', a number >= 0 or None. "
            f"Received: loss_scale={loss_scale!r}"
        )
    if loss_scale < 0:
        raise ValueError(
            f"Argument `loss_scale` must be 'dynamic', a number >= 0 or None. "
            f"Received: loss_scale={loss_scale!r}"
        )
    return float(loss_scale) or 1.0  # cstorch: 0.0 means no loss scaling


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"Argument `{name}` must be a number > 0. Received: {name}={value!r}")
    return float(value)


def _fraction(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(
            f"Argument `{name}` must be a number in [0, 1]. Received: {name}={value!r}"
        )
    return float(value)
