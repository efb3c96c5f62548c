"""torchtally: metrics that live inside the compiled step.

`import torchtally as cstorch` gives the Cerebras PyTorch programming model on stock PyTorch
(`backend`, `compile`, `trace`, step closures, `save`/`load`, `optim`, `amp`, `utils.data`);
`torchtally.metrics` holds the metric catalog and `torchtally.functional` its pure functions.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from torchtally import amp, optim, runtime, utils
from torchtally.runtime import (
    Backend,
    BackendType,
    CheckpointError,
    CompiledModel,
    TensorReadError,
    backend,
    backends,
    checkpoint_closure,
    compile,
    compile_step,
    current_backend,
    current_pol,
    current_torch_device,
    from_numpy,
    full,
    full_like,
    in_step,
    load,
    make_constant,
    name_scope,
    ones,
    ones_like,
    pol,
    save,
    step_closure,
    summarize_scalar,
    to_numpy,
    trace,
    use_cs,
    zeros,
    zeros_like,
)
from torchtally.utils.data import current_executor

if TYPE_CHECKING:
    from torchtally import bench, compat, distributed, functional, learn, metrics, testing

__version__ = "0.1.0"  # the single source: pyproject.toml reads it

# Imported on first use: `testing` pulls in torch._dynamo, `learn`/`bench`/`compat` are
# periphery that a metrics-only user never needs, and the metric catalog (`metrics`,
# `functional`, `distributed`: about 140 modules) is not needed by a cstorch script that
# uses none of it (issue 16: `import torchtally` costs little more than `import torch`).
# `import torchtally.metrics` and `from torchtally.metrics import ...` load it as usual.
_LAZY_SUBMODULES = frozenset(
    {"bench", "compat", "distributed", "functional", "learn", "metrics", "testing"}
)


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f"torchtally.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'torchtally' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES)


__all__ = [
    "Backend",
    "BackendType",
    "CheckpointError",
    "CompiledModel",
    "TensorReadError",
    "__version__",
    "amp",
    "backend",
    "backends",
    "bench",
    "checkpoint_closure",
    "compat",
    "compile",
    "compile_step",
    "current_backend",
    "current_executor",
    "current_pol",
    "current_torch_device",
    "distributed",
    "from_numpy",
    "full",
    "full_like",
    "functional",
    "in_step",
    "learn",
    "load",
    "make_constant",
    "metrics",
    "name_scope",
    "ones",
    "ones_like",
    "optim",
    "pol",
    "runtime",
    "save",
    "step_closure",
    "summarize_scalar",
    "testing",
    "to_numpy",
    "trace",
    "use_cs",
    "utils",
    "zeros",
    "zeros_like",
]
