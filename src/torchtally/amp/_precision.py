"""The half-precision dtype of automatic mixed precision: float16 (default), bfloat16, or
Cerebras' cbfloat16 (which has no torch dtype: float16 stands in for it, as in cstorch)."""

from __future__ import annotations

from typing import Any

import torch

__all__ = [
    "autocast",
    "enable_mixed_precision",
    "get_floating_point_dtype",
    "get_floating_point_dtype_str",
    "get_half_dtype",
    "get_half_dtype_str",
    "is_cbfloat16_tensor",
    "mixed_precision",
    "set_half_dtype",
    "use_bfloat16",
]

_HALF_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "cbfloat16": torch.float16}
# [dtype string, mixed precision enabled]: module state, as cstorch's `_amp_state`.
_state: list[Any] = ["float16", False]
_half_dtype: list[torch.dtype] = [torch.float16]


def set_half_dtype(value: str | torch.dtype) -> torch.dtype:
    """Set the 16-bit dtype mixed precision uses, and turn mixed precision on (as cstorch).

    Args:
        value: torch.float16, torch.bfloat16, or "float16", "bfloat16", "cbfloat16".

    Returns:
        The torch dtype the model should use (float16 stands in for cbfloat16).

    Example:
        >>> set_half_dtype("bfloat16")
        torch.bfloat16
        >>> get_floating_point_dtype_str()
        'bfloat16'
        >>> _ = set_half_dtype(torch.float16); enable_mixed_precision(False)
        False
    """
    if value is torch.float16 or value is torch.bfloat16:
        name = "float16" if value is torch.float16 else "bfloat16"
    elif isinstance(value, str) and value in _HALF_DTYPES:
        name = value
    else:
        raise ValueError(
            'Argument `value` must be torch.float16, torch.bfloat16, "float16", "bfloat16" or '
            f'"cbfloat16". Received: value={value!r}'
        )
    _state[0] = name
    _half_dtype[0] = _HALF_DTYPES[name]
    _state[1] = True
    return _half_dtype[0]


def get_half_dtype_str() -> str:
    """The name of the half dtype: "float16", "bfloat16" or "cbfloat16".

    Example:
        >>> get_half_dtype_str()
        'float16'
    """
    return str(_state[0])


def is_cbfloat16_tensor(tensor: torch.Tensor) -> bool:
    """Whether `tensor` holds cbfloat16 values: its dtype is the half dtype's stand-in and the
    half dtype is "cbfloat16".

    Args:
        tensor: Any tensor.

    Example:
        >>> is_cbfloat16_tensor(torch.zeros(1, dtype=torch.float16))
        False
    """
    return tensor.dtype == _half_dtype[0] and _state[0] == "cbfloat16"


def mixed_precision() -> bool:
    """Whether mixed precision is on (`set_half_dtype` or `enable_mixed_precision`)."""
    return bool(_state[1])


def enable_mixed_precision(enable: bool = True) -> bool:
    """Turn mixed precision on or off; return the new setting.

    Args:
        enable: On (True) or off.
    """
    if not isinstance(enable, bool):
        raise ValueError(f"Argument `enable` must be a bool. Received: enable={enable!r}")
    _state[1] = enable
    return enable


def get_floating_point_dtype(default: torch.dtype = torch.float32) -> torch.dtype:
    """The half dtype when mixed precision is on, else `default`.

    Args:
        default: What to return when mixed precision is off.
    """
    return _half_dtype[0] if _state[1] else default


def get_floating_point_dtype_str(default: str = "float32") -> str:
    """The half dtype's name when mixed precision is on, else `default`.

    Args:
        default: What to return when mixed precision is off.

    Example:
        >>> get_floating_point_dtype_str()
        'float32'
    """
    return str(_state[0]) if _state[1] else default


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
    _state[0] = "bfloat16" if use else "float16"
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
