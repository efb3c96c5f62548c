"""The cstorch programming model on stock PyTorch: backends, compiled models, traced steps.

A cstorch program creates a `backend`, `compile`s its model, decorates its step function with
`trace` (alias `compile_step`), and reads tensors only in `step_closure`s and
`checkpoint_closure`s, which run after the step. `save` / `load` write and read checkpoints;
`summarize_scalar` logs to TensorBoard through the `DataExecutor`'s writer.

Example:
    >>> import torchtally as cstorch
    >>> model = torch.nn.Linear(4, 2)
    >>> backend = cstorch.backend("CPU")
    >>> compiled_model = cstorch.compile(model, backend)
    >>> @cstorch.trace
    ... def training_step(batch):
    ...     ...
"""

from torchtally.runtime._backend import Backend, BackendType, backend, current_backend
from torchtally.runtime._checkpoint.checkpoint import CheckpointError, load, save
from torchtally.runtime._closures import checkpoint_closure, step_closure
from torchtally.runtime._compile import CompiledModel, compile
from torchtally.runtime._flags import backends, current_pol, pol
from torchtally.runtime._guard import TensorReadError, reads_forbidden
from torchtally.runtime._step import compile_step, in_step, trace
from torchtally.runtime._summary import summarize_scalar
from torchtally.runtime._surface import (
    current_name_scope,
    current_torch_device,
    from_numpy,
    full,
    full_like,
    make_constant,
    name_scope,
    ones,
    ones_like,
    to_numpy,
    use_cs,
    zeros,
    zeros_like,
)

__all__ = [
    "Backend",
    "BackendType",
    "CheckpointError",
    "CompiledModel",
    "TensorReadError",
    "backend",
    "backends",
    "checkpoint_closure",
    "compile",
    "compile_step",
    "current_backend",
    "current_name_scope",
    "current_pol",
    "current_torch_device",
    "from_numpy",
    "full",
    "full_like",
    "in_step",
    "load",
    "make_constant",
    "name_scope",
    "ones",
    "ones_like",
    "pol",
    "reads_forbidden",
    "save",
    "step_closure",
    "summarize_scalar",
    "to_numpy",
    "trace",
    "use_cs",
    "zeros",
    "zeros_like",
]
