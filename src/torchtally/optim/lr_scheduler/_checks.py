"""Argument checks shared by the schedulers."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from torchtally._errors import check_int
from torchtally.optim._checks import check_float

__all__ = ["check_milestones", "check_rate"]


def check_rate(name: str, value: Any) -> float:
    """Return a learning rate given as a number >= 0, or raise naming `name`.

    Args:
        name: The argument's name.
        value: What the caller passed.

    Returns:
        The rate as a float.

    Example:
        >>> check_rate("initial_learning_rate", 0.1)
        0.1
    """
    return check_float(name, value, 0.0)


def check_milestones(name: str, value: Any, *, strict: bool) -> list[int]:
    """Return a list of step counts >= 0 in increasing order, or raise naming `name`.

    Args:
        name: The argument's name.
        value: A list or tuple of ints.
        strict: Require strictly increasing values (repeats are then an error).

    Returns:
        The milestones as a list.

    Example:
        >>> check_milestones("milestones", [10, 20], strict=True)
        [10, 20]
    """
    if not isinstance(value, (list, tuple)):
        raise ValueError(
            f"Argument `{name}` must be a list of integers >= 0. Received: {name}={value!r}"
        )
    for index, item in enumerate(value):
        check_int(f"{name}[{index}]", item, 0)
    if any(b < a or (strict and b == a) for a, b in pairwise(value)):
        order = "strictly increasing" if strict else "non-decreasing"
        raise ValueError(f"Argument `{name}` must be {order}. Received: {name}={value!r}")
    return list(value)
