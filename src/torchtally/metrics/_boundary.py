"""The input boundary of `update`: what every argument goes through before any tensor work.

Tensors are detached, so a state never joins an autograd graph (`update(loss)` without
`.detach()` would otherwise keep every step's graph alive through the state). Meta tensors
given to a metric with real state, and tensors of a layout no metric reads (sparse, mkldnn),
are refused with the argument's name. Array data (numpy arrays, and Python numbers and lists
for the arguments a metric declares as array data) is converted to tensors on the state's
device.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

__all__ = ["WEIGHT_ARGUMENTS", "convert_inputs"]

#: `update` arguments that hold per-sample weights in every metric: array data by definition.
WEIGHT_ARGUMENTS = frozenset({"weight", "weights", "sample_weight"})


def convert_inputs(
    names: tuple[str, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    device: torch.device,
    array_inputs: tuple[str, ...],
    autograd_inputs: tuple[str, ...],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`update`'s arguments checked and normalised (`names`: its positional names)."""
    # The common call, plain strided tensors that need nothing, without a call per argument.
    for v in (*args, *kwargs.values()) if kwargs else args:
        if type(v) is not Tensor or v.requires_grad or v.is_meta or v.layout is not torch.strided:
            break
    else:
        return args, kwargs
    positional = tuple(
        _convert(
            names[i] if i < len(names) else f"args[{i}]", v, device, array_inputs, autograd_inputs
        )
        for i, v in enumerate(args)
    )
    keyword = {k: _convert(k, v, device, array_inputs, autograd_inputs) for k, v in kwargs.items()}
    return positional, keyword


def _convert(
    name: str,
    value: Any,
    device: torch.device,
    array_inputs: tuple[str, ...],
    autograd_inputs: tuple[str, ...],
) -> Any:
    if isinstance(value, Tensor):
        if value.layout is not torch.strided or value.is_mkldnn:
            raise TypeError(
                f"Argument `{name}` must be a dense (strided) tensor. Received: a tensor of "
                f"layout {str(value.layout).removeprefix('torch.')}"
                f"{' (mkldnn)' if value.is_mkldnn else ''}; convert it with `.to_dense()`"
            )
        if value.device.type == "meta" and device.type != "meta":
            raise ValueError(
                f"Argument `{name}` must hold data on the metric's device ({device}). "
                f"Received: a meta tensor of shape {tuple(value.shape)}"
            )
        if value.requires_grad and name not in autograd_inputs:
            return value.detach()
        return value
    if value is None or isinstance(value, str | bytes):
        return value  # the metric's own checks name what it accepts
    # A numpy array is array data whatever the metric; lists and numbers only where the
    # metric declares the argument as array data (a text metric takes lists of strings).
    declared = name in array_inputs or name in WEIGHT_ARGUMENTS
    if not (is_numpy(value) or (declared and _is_array_like(value))):
        return value
    if torch.compiler.is_compiling() and not isinstance(value, int | float | bool):
        raise TypeError(
            f"Argument `{name}` must be a torch.Tensor inside a compiled step (a "
            f"{type(value).__name__} would be baked into the graph as a constant). "
            f"Received: {type(value).__name__}"
        )
    # A Python float weight keeps its float64 value (float32 would round it, and flush 1e-200 to zero).
    exact = torch.float64 if name in WEIGHT_ARGUMENTS and type(value) is float else None
    try:
        if type(value) in (int, float, bool):
            # A fill on the metric's device: the number travels as a kernel argument, where a
            # host tensor copied to a GPU synchronizes (`weight=batch_size`).
            return torch.full((), value, dtype=exact, device=device)
        return torch.as_tensor(value, dtype=exact, device=device)
    except (TypeError, ValueError, RuntimeError, OverflowError) as error:
        raise TypeError(
            f"Argument `{name}` must be a tensor or convertible to one (a number, a "
            f"rectangular list of numbers or a numpy array). Received: "
            f"{type(value).__name__} ({error})"
        ) from None


def is_numpy(value: Any) -> bool:
    """A numpy array or scalar (checked without importing numpy)."""
    return type(value).__module__ == "numpy" and hasattr(value, "__array__")


def _is_array_like(value: Any) -> bool:
    """Python numbers, lists/tuples and numpy arrays."""
    return isinstance(value, int | float | bool | list | tuple) or is_numpy(value)
