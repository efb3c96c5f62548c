"""The read guard: inside a traced step, no tensor may be turned into a Python value.

A traced step is one graph that runs on the device; a value read in the middle of it (`.item()`,
`float(t)`, `if t > 0:`, `print(t)`) would stall the device until everything before it has run,
and under cstorch's lazy tracing there is no value to read at all. cstorch raises an error
for such reads, and so do we: a `TorchFunctionMode` is active while a step runs and rejects
every tensor method that hands data to Python. The cure is a step closure, which receives the
tensor's value once the step has finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

import torch
from torch.overrides import TorchFunctionMode

from torchtally._errors import register_read_guard

__all__ = ["NoTensorReads", "TensorReadError", "reads_forbidden"]


@final
class TensorReadError(RuntimeError):
    """Raised when a traced step reads a tensor's value (`.item()`, `float(t)`, `print(t)`, ...).

    Example:
        >>> from torchtally.runtime import trace
        >>> @trace
        ... def step(x):
        ...     return x.sum().item()
        >>> step(torch.ones(3))
        Traceback (most recent call last):
            ...
        torchtally.runtime._guard.TensorReadError: Reading a tensor's value inside the traced step `step` is not allowed (...)...
    """


# The tensor methods and functions that copy a tensor's data into Python objects. Reads of
# shape, dtype or device are metadata and stay allowed.
_READS: dict[Callable[..., Any], str] = {
    torch.Tensor.item: "Tensor.item()",
    torch.Tensor.tolist: "Tensor.tolist()",
    torch.Tensor.numpy: "Tensor.numpy()",
    torch.Tensor.__array__: "numpy.asarray(tensor)",
    torch.Tensor.__bool__: "bool(tensor) (a tensor in an `if`, `while`, `and`/`or` or `assert`)",
    torch.Tensor.__float__: "float(tensor)",
    torch.Tensor.__int__: "int(tensor)",
    torch.Tensor.__index__: "using a tensor as an index or in range()",
    torch.Tensor.__complex__: "complex(tensor)",
    torch.Tensor.__repr__: "printing a tensor (repr/str/print)",
    torch.Tensor.__format__: "formatting a tensor (f-string or str.format)",
    torch.Tensor.__contains__: "`value in tensor`",
    torch.Tensor.equal: "Tensor.equal()",
    torch.equal: "torch.equal()",
    torch.Tensor.allclose: "Tensor.allclose()",
    torch.allclose: "torch.allclose()",
    torch.Tensor.is_nonzero: "Tensor.is_nonzero()",
    torch.is_nonzero: "torch.is_nonzero()",
}
# Moving a device tensor to the host is a read too; on a CPU tensor it is a no-op.
_TRANSFERS: dict[Callable[..., Any], str] = {
    torch.Tensor.cpu: "Tensor.cpu()",
    torch.Tensor.to: "Tensor.to('cpu')",
}

_depth = 0  # how many guards are active (nested steps share the outermost one)


def reads_forbidden() -> bool:
    """True while a traced step runs, i.e. while reading a tensor's value is an error.

    Library code that would read a value eagerly (a metric's data checks) asks this and defers
    the read instead, as it does under `torch.compile`.

    Returns:
        Whether a `NoTensorReads` guard is active.

    Example:
        >>> reads_forbidden()
        False
    """
    return _depth > 0


# Metric updates ask `torchtally._errors.tracing` whether to defer their value checks; inside a
# traced step they must, so the guard tells the neutral module, which cannot import the runtime.
register_read_guard(reads_forbidden)


@final
class NoTensorReads(TorchFunctionMode):
    """A torch function mode under which reading a tensor's value raises `TensorReadError`.

    Args:
        step_name: The step's name, used in the error message.

    Example:
        >>> with NoTensorReads("train_step"):
        ...     float(torch.ones(()))
        Traceback (most recent call last):
            ...
        torchtally.runtime._guard.TensorReadError: Reading a tensor's value inside the traced step `train_step` is not allowed (float(tensor))...
    """

    def __init__(self, step_name: str) -> None:
        super().__init__()
        self.step_name = step_name

    def __enter__(self) -> NoTensorReads:
        global _depth
        _depth += 1
        try:
            super().__enter__()  # type: ignore[no-untyped-call]
        except BaseException:
            _depth -= 1
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        global _depth
        try:
            super().__exit__(*exc)  # type: ignore[no-untyped-call]
        finally:
            _depth -= 1

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        what = _READS.get(func)
        if what is None and func in _TRANSFERS and _moves_to_host(func, args, kwargs):
            what = _TRANSFERS[func]
        if what is not None:
            raise TensorReadError(_message(self.step_name, what))
        return func(*args, **kwargs)


def _moves_to_host(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a `.cpu()` / `.to(...)` call copies a non-CPU tensor to the host."""
    if not args or not isinstance(args[0], torch.Tensor) or args[0].device.type == "cpu":
        return False
    if func is torch.Tensor.cpu:
        return True
    # `.to(...)` names its target positionally (a device, a string or another tensor) or by
    # keyword; a dtype-only conversion stays on the device.
    targets = [*args[1:], kwargs.get("device")]
    return any(_is_cpu(t.device if isinstance(t, torch.Tensor) else t) for t in targets)


def _is_cpu(target: Any) -> bool:
    if isinstance(target, torch.device):
        return target.type == "cpu"
    return isinstance(target, str) and target.split(":")[0] == "cpu"


def _message(step_name: str, what: str) -> str:
    return (
        f"Reading a tensor's value inside the traced step `{step_name}` is not allowed "
        f"({what}). A traced step runs as one graph on the device, so its tensors have no "
        "value until the step has finished. Pass the tensor to a function decorated with "
        "`@torchtally.step_closure` (or `@torchtally.checkpoint_closure`) and read it there: "
        "the closure runs after the step with the tensor's final value."
    )
