"""The half-precision dtype of automatic mixed precision: float16 (default) or bfloat16."""

from __future__ import annotations

import torch

__all__ = ["autocast", "get_half_dtype", "use_bfloat16"]

_half_dtype: list[torch.dtype] = [torch.float16]


def use_bfloat16(use: bool) -> None:
    """Choose bfloat16 (True) or float16 (False) as the half dtype of mixed precision.

    Args:
        use: Whether to use bfloat16.

    Example:
        >>> use_bfloat16(True)
        >>> get_half_dtype()
        torch.bfloat16
        >>> use_bfloat16(False)
    """
    if not isinstance(use, bool):
        raise TypeError(f"Argument `use` must be a bool. Received: use={use!r}")
    _half_dtype[0] = torch.bfloat16 if use else torch.float16


def get_half_dtype() -> torch.dtype:
    """The half dtype mixed precision computes in.

    Returns:
        torch.float16, or torch.bfloat16 after `use_bfloat16(True)`.

    Example:
        >>> get_half_dtype()
        torch.float16
    """
    return _half_dtype[0]


def autocast(enabled: bool = True, device_type: str | None = None) -> torch.autocast:
    """A `torch.autocast` context in the chosen half dtype.

    Args:
        enabled: Whether autocast is on.
        device_type: "cpu" or "cuda". Default: the current backend's device type ("cpu"
            when there is no backend).

    Returns:
        The autocast context manager.

    Example:
        >>> with autocast(device_type="cpu"):
        ...     y = torch.nn.Linear(4, 2)(torch.ones(1, 4))
        >>> y.dtype
        torch.float16
    """
    if device_type is None:
        from torchtally.runtime._backend import current_backend

        current = current_backend()
        device_type = current.device.type if current is not None else "cpu"
    return torch.autocast(device_type=device_type, dtype=get_half_dtype(), enabled=enabled)
