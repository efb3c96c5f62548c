"""The small cstorch runtime helpers model-zoo code calls, as a CPU/GPU cstorch backend has them.

On a Cerebras cluster these build lazy or constant tensors; on CPU and GPU backends cstorch
itself falls back to plain torch, which is what they do here: `use_cs()` is False,
`make_constant` returns its argument, `zeros`/`ones`/`full` (and `*_like`) are torch's, and
`name_scope` only names a scope (there is no graph compiler to read the name).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import torch

from torchtally._optional import import_numpy
from torchtally.runtime._backend import current_backend

if TYPE_CHECKING:  # numpy is optional: imported where an array is made
    import numpy as np

__all__ = [
    "current_name_scope",
    "current_torch_device",
    "from_numpy",
    "full",
    "full_like",
    "make_constant",
    "name_scope",
    "ones",
    "ones_like",
    "to_numpy",
    "use_cs",
    "zeros",
    "zeros_like",
]

_Shape = int | Sequence[int] | torch.Size
_scopes: list[str] = []


def use_cs() -> bool:
    """Whether the program runs on a Cerebras system: always False here.

    Example:
        >>> use_cs()
        False
    """
    return False


def current_torch_device() -> torch.device:
    """The current backend's device, or CPU when no backend exists (as cstorch).

    Example:
        >>> current_torch_device()
        device(type='cpu')
    """
    found = current_backend()
    return found.device if found is not None else torch.device("cpu")


def make_constant(tensor: torch.Tensor) -> torch.Tensor:
    """Mark `tensor` as a graph constant: the identity off a Cerebras system (as cstorch).

    Args:
        tensor: The tensor.

    Returns:
        `tensor` itself.

    Example:
        >>> t = torch.ones(2)
        >>> make_constant(t) is t
        True
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            f"Argument `tensor` must be a torch.Tensor. Received: {type(tensor).__name__}"
        )
    return tensor


def _shape(shape: _Shape) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ValueError(
            f"Argument `shape` must be a non-negative int or a sequence of them. Received: {shape!r}"
        )
    return dims


def full(shape: _Shape, value: float, dtype: torch.dtype | None = None) -> torch.Tensor:
    """`torch.full(shape, value, dtype=dtype)`, as cstorch's `full` off a Cerebras system.

    Example:
        >>> full((2,), 3.0)
        tensor([3., 3.])
    """
    return torch.full(_shape(shape), value, dtype=dtype)


def zeros(shape: _Shape, dtype: torch.dtype | None = None) -> torch.Tensor:
    """`torch.zeros(shape, dtype=dtype)`, as cstorch's `zeros` off a Cerebras system."""
    return torch.zeros(_shape(shape), dtype=dtype)


def ones(shape: _Shape, dtype: torch.dtype | None = None) -> torch.Tensor:
    """`torch.ones(shape, dtype=dtype)`, as cstorch's `ones` off a Cerebras system."""
    return torch.ones(_shape(shape), dtype=dtype)


def _like(other: Any) -> torch.Tensor:
    if not isinstance(other, torch.Tensor):
        raise TypeError(
            f"Argument `other` must be a torch.Tensor. Received: {type(other).__name__}"
        )
    return other


def full_like(other: torch.Tensor, value: float, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A tensor like `other` (its dtype unless `dtype` is given) filled with `value`.

    Example:
        >>> full_like(torch.zeros(2, dtype=torch.int32), 7)
        tensor([7, 7], dtype=torch.int32)
    """
    return torch.full_like(_like(other), value, dtype=dtype or other.dtype)


def zeros_like(other: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Zeros like `other` (its dtype unless `dtype` is given)."""
    return torch.zeros_like(_like(other), dtype=dtype or other.dtype)


def ones_like(other: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Ones like `other` (its dtype unless `dtype` is given)."""
    return torch.ones_like(_like(other), dtype=dtype or other.dtype)


def to_numpy(tensor: torch.Tensor | np.ndarray) -> np.ndarray:
    """A numpy view of a CPU tensor; bfloat16 becomes its int16 bits, as cstorch stores it.

    A numpy array is returned as it is. Tensors on other devices are copied to the CPU first.

    Example:
        >>> to_numpy(torch.tensor([1.0, 2.0]))
        array([1., 2.], dtype=float32)
    """
    numpy = import_numpy("`to_numpy`")  # Tensor.numpy() needs it too
    if isinstance(tensor, numpy.ndarray):
        return cast("np.ndarray", tensor)
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            f"Argument `tensor` must be a torch.Tensor or numpy array. Received: "
            f"{type(tensor).__name__}"
        )
    cpu = tensor.detach().cpu()
    if cpu.dtype == torch.bfloat16:  # numpy has no bfloat16
        return cpu.view(torch.int16).numpy()
    return cpu.numpy()


def from_numpy(array: np.ndarray | torch.Tensor) -> torch.Tensor:
    """`torch.from_numpy`, copying read-only arrays first; tensors are returned as they are.

    Example:
        >>> import numpy as np
        >>> from_numpy(np.arange(3))
        tensor([0, 1, 2])
    """
    if isinstance(array, torch.Tensor):
        return array
    # Without numpy imported, nothing passed in can be an array: no import is needed to say so.
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(array, numpy.ndarray):
        raise TypeError(f"Argument `array` must be a numpy array. Received: {type(array).__name__}")
    return torch.from_numpy(array if array.flags.writeable else array.copy())


@contextlib.contextmanager
def name_scope(name: str, raw: bool = False) -> Iterator[None]:
    """Name the operations inside the block, for code written against cstorch.

    Cerebras' compiler attaches the name to the ops it traces; stock PyTorch has no such
    annotation, so the scope is only recorded (see `current_name_scope`) and nesting is checked.

    Args:
        name: The scope name.
        raw: cstorch's flag for an unmangled name; accepted and recorded as given.

    Example:
        >>> with name_scope("attention"):
        ...     current_name_scope()
        'attention'
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"Argument `name` must be a non-empty string. Received: name={name!r}")
    _scopes.append(name)
    try:
        yield
    finally:
        _scopes.pop()


def current_name_scope() -> str:
    """The enclosing `name_scope` names joined by ".", or "" outside any scope."""
    return ".".join(_scopes)
