"""Argument checks shared by the optimizers and the learning-rate schedulers.

Each check raises a `ValueError` that names the argument, what it must be and what it received,
so a bad hyperparameter fails at construction instead of producing a silently wrong step.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from torch import Tensor

__all__ = ["check_betas", "check_bool", "check_float", "check_lr"]


def _bounds_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "finite"


def _in_bounds(
    value: float, low: float | None, high: float | None, low_open: bool, high_open: bool
) -> bool:
    if math.isnan(value):
        return False
    above_low = low is None or (value > low if low_open else value >= low)
    below_high = high is None or (value < high if high_open else value <= high)
    return above_low and below_high


def check_float(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return `value` as a float, or raise unless it is a real number within the bounds.

    Args:
        name: The argument's name, used in the message.
        value: What the caller passed.
        low: Smallest allowed value (None: unbounded).
        high: Largest allowed value (None: unbounded).
        low_open: Exclude `low` itself.
        high_open: Exclude `high` itself.

    Returns:
        The value as a Python float.

    Example:
        >>> check_float("lr", 0.1, 0.0)
        0.1
    """
    if isinstance(value, Real) and not isinstance(value, bool):
        number = float(value)
        if _in_bounds(number, low, high, low_open, high_open):
            return number
    bounds = _bounds_text(low, high, low_open, high_open)
    raise ValueError(f"Argument `{name}` must be a float {bounds}. Received: {name}={value!r}")


def check_lr(value: Any, name: str = "lr") -> float:
    """Return a learning rate as a float, or raise unless it is a number or 1-element tensor >= 0.

    Reading a tensor's value is a host sync, so call this at construction, never in a step.

    Args:
        value: A float, or a tensor holding one value.
        name: The argument's name, used in the message.

    Returns:
        The learning rate as a Python float.

    Example:
        >>> import torch
        >>> check_lr(torch.tensor(0.5))
        0.5
    """
    if isinstance(value, Tensor):
        if value.numel() != 1 or not value.dtype.is_floating_point:
            raise ValueError(
                f"Argument `{name}` must be a float >= 0 or a 1-element floating-point tensor. "
                f"Received: a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
            )
        return check_float(name, float(value.detach().reshape(())), 0.0)
    return check_float(name, value, 0.0)


def check_betas(name: str, value: Any, count: int = 2) -> tuple[float, ...]:
    """Return `count` decay rates as floats, or raise unless each lies in [0, 1).

    Args:
        name: The argument's name, used in the message.
        value: A tuple or list of numbers.
        count: How many rates are expected.

    Returns:
        The rates as a tuple of floats.

    Example:
        >>> check_betas("betas", (0.9, 0.999))
        (0.9, 0.999)
    """
    if isinstance(value, (tuple, list)) and len(value) == count:
        numbers = [float(v) for v in value if isinstance(v, Real) and not isinstance(v, bool)]
        if len(numbers) == count and all(0 <= v < 1 for v in numbers):
            return tuple(numbers)
    what = "a pair" if count == 2 else f"a tuple of {count}"
    raise ValueError(
        f"Argument `{name}` must be {what} of floats in [0, 1). Received: {name}={value!r}"
    )


def check_bool(name: str, value: Any) -> bool:
    """Return `value`, or raise unless it is a bool.

    Args:
        name: The argument's name, used in the message.
        value: What the caller passed.

    Returns:
        The bool.

    Example:
        >>> check_bool("nesterov", True)
        True
    """
    if not isinstance(value, bool):
        raise ValueError(f"Argument `{name}` must be a bool. Received: {name}={value!r}")
    return value
