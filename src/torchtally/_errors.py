"""Errors, argument checks and the deferred data checks shared by metrics and functionals."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "ErrorKinds",
    "MetricValueError",
    "check_choice",
    "check_int",
    "raise_for_counts",
    "register_read_guard",
    "tracing",
    "user_stacklevel",
]


class MetricValueError(ValueError):
    """Raised by `compute` when `update` saw data the metric cannot count correctly."""


# Predicates that say "reading a tensor's value is an error right now". A layer that forbids reads
# (the runtime's traced steps) registers one; this module knows no such layer, so the metric core
# that calls `tracing` does not depend on it. A tuple: `tracing` reads it on every eager update.
_read_guards: tuple[Callable[[], bool], ...] = ()


def register_read_guard(reads_forbidden: Callable[[], bool]) -> None:
    """Make `tracing` true whenever `reads_forbidden()` is (registering twice is a no-op).

    Args:
        reads_forbidden: Cheap, thread-safe predicate, called on every eager metric update.
    """
    global _read_guards
    if not callable(reads_forbidden):
        raise TypeError(
            "Argument `reads_forbidden` must be callable. "
            f"Received: reads_forbidden={reads_forbidden!r}"
        )
    if reads_forbidden not in _read_guards:
        _read_guards = (*_read_guards, reads_forbidden)


def tracing(*tensors: Tensor) -> bool:
    """True while torch.compile traces, while a registered read guard forbids reads (inside a
    cstorch-style traced step), or when any tensor is fake or meta (no values to read)."""
    if torch.compiler.is_compiling():
        return True
    for reads_forbidden in _read_guards:
        if reads_forbidden():
            return True
    fake = _fake_tensor_type()
    return any(isinstance(t, fake) or t.is_meta for t in tensors)


@functools.cache
def _fake_tensor_type() -> type:
    # Imported on first use (not with torchtally), then cached: an import statement costs
    # about a microsecond per call even when the module is loaded, on every eager update.
    from torch._subclasses.fake_tensor import FakeTensor

    return FakeTensor


def raise_for_counts(owner: str, kinds: Sequence[str], counts: Tensor) -> None:
    """Raise `MetricValueError` naming every kind whose count is non-zero."""
    values = counts.tolist()  # the one host read, at compute time only
    problems = [f"{kind} ({n} value{'s' if n != 1 else ''})" for kind, n in zip(kinds, values) if n]
    if problems:
        raise MetricValueError(
            f"`{owner}` received invalid data: "
            + "; ".join(problems)
            + ". Fix the inputs, or pass check_values=False to skip these checks."
        )


def check_int(name: str, value: Any, minimum: int, *, allow_none: bool = False) -> None:
    """Raise unless `value` is an int >= `minimum` (bools are rejected)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        suffix = " or None" if allow_none else ""
        raise ValueError(
            f"Argument `{name}` must be an integer >= {minimum}{suffix}. Received: {name}={value!r}"
        )


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """Raise unless `value` is one of `choices`."""
    if value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"Argument `{name}` must be one of {options}. Received: {name}={value!r}")


class ErrorKinds(Mapping[str, str]):
    """The data errors a metric counts, by name: `ErrorKinds(nonfinite_values="non-finite
    values", ...)`, read-only (a class attribute shared by every instance).

    `Metric.record_errors(nonfinite_values=count)` adds to a kind by its name; `compute`
    raises `MetricValueError` listing the descriptions of the kinds seen."""

    __slots__ = ("_kinds",)

    def __init__(self, **kinds: str) -> None:
        self._kinds = dict(kinds)

    def __getitem__(self, name: str) -> str:
        return self._kinds[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def __repr__(self) -> str:
        return f"ErrorKinds({', '.join(f'{k}={v!r}' for k, v in self._kinds.items())})"


_PACKAGE_DIR = __file__.rsplit("/", 1)[0] if "/" in __file__ else ""


def user_stacklevel() -> int:
    """The `stacklevel` that makes a warning point at the first caller outside torchtally
    (the user's `update` call), however many of the library's frames lie between."""
    import sys

    frame = sys._getframe(1)
    level = 1
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE_DIR)
        # `metric(...)` reaches `forward` through nn.Module's call machinery
        or frame.f_code.co_filename.endswith(("torch/nn/modules/module.py",))
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
