"""`backends`, `pol` and `current_pol`: cstorch's Cerebras-system settings, readable off one.

Model-zoo models read `cstorch.backends.csx.precision.optimization_level` (or `current_pol()`)
to choose numerics, and flows set performance and debug flags. A CPU/GPU cstorch run keeps
these values and its own Cerebras compiler is never involved; the same holds here: the values
are stored and validated with cstorch's defaults and ranges, and only user code reads them.
Unknown flag names raise AttributeError, so a typo is not silently accepted.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["backends", "current_pol", "pol"]


def _level(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value not in range(3):
        raise ValueError(
            f"Argument `{name}` must be an integer in range [0, 3). Received: {name}={value!r}"
        )
    return value


@dataclass(slots=True)
class _Precision:
    _optimization_level: int = 1

    @property
    def optimization_level(self) -> int:
        """The precision optimization level (POL), 0, 1 or 2; cstorch's default is 1."""
        return self._optimization_level

    @optimization_level.setter
    def optimization_level(self, value: int) -> None:
        self._optimization_level = _level("optimization_level", value)


@dataclass(slots=True)
class _Performance:
    micro_batch_size: Any = "auto"
    transfer_processes: int = 5
    compress_weights: bool = False
    use_speculative_optimizers: bool = True


@dataclass(slots=True)
class _Cluster:
    auto_taint: bool = False


@dataclass(slots=True)
class _Debug:
    retrace_every_iteration: bool = False
    lazy_initialization: bool = True
    drop_data: bool = False
    skip_weight_init: bool = False
    log_initialization: bool = True


@dataclass(slots=True)
class _Csx:
    precision: _Precision = field(default_factory=_Precision)
    performance: _Performance = field(default_factory=_Performance)
    cluster: _Cluster = field(default_factory=_Cluster)
    debug: _Debug = field(default_factory=_Debug)


@dataclass(slots=True)
class _Backends:
    """cstorch's `backends` flags (`backends.csx.precision.optimization_level`, ...)."""

    csx: _Csx = field(default_factory=_Csx)

    def reset(self) -> None:
        """Restore every flag to its default."""
        self.csx = _Csx()


backends = _Backends()
_pol_stack: list[int | None] = []


def current_pol() -> int:
    """The POL in effect: the innermost `pol(level=...)`, else the backends flag (as cstorch).

    Example:
        >>> current_pol()
        1
    """
    for level in reversed(_pol_stack):
        if level is not None:
            return level
    return backends.csx.precision.optimization_level


class pol(contextlib.ContextDecorator):
    """Run a block or function at a precision optimization level, as cstorch's `pol`.

    Inside it `current_pol()` returns `level` (None keeps the enclosing level). Only user code
    reads it: there is no Cerebras compiler here to lower precision.

    Args:
        level: The forward POL, 0, 1 or 2, or None.
        bwd_level: The backward POL, validated and recorded (torch has no separate backward
            annotation to apply it to).
        enable_fwd: Apply to the forward pass.
        enable_bwd: Apply to the backward pass.

    Example:
        >>> with pol(level=0):
        ...     current_pol()
        0
    """

    def __init__(
        self,
        level: int | None = None,
        bwd_level: int | None = None,
        enable_fwd: bool = True,
        enable_bwd: bool = True,
    ) -> None:
        self.level = None if level is None else _level("level", level)
        self.bwd_level = None if bwd_level is None else _level("bwd_level", bwd_level)
        self.enable_fwd = enable_fwd
        self.enable_bwd = enable_bwd

    def __enter__(self) -> pol:
        _pol_stack.append(self.level if self.enable_fwd else None)
        return self

    def __exit__(self, *exc: object) -> None:
        _pol_stack.pop()
