"""torchtally: metrics that live inside the compiled step.

`import torchtally as cstorch` gives the Cerebras PyTorch programming model on stock PyTorch
(`backend`, `compile`, `trace`, step closures, `save`/`load`, `optim`, `amp`, `utils.data`);
`torchtally.metrics` holds the metric catalog and `torchtally.functional` its pure functions.
"""

from torchtally import (
    amp,
    bench,
    distributed,
    functional,
    learn,
    metrics,
    optim,
    runtime,
    testing,
    utils,
)
from torchtally.runtime import (
    Backend,
    CheckpointError,
    CompiledModel,
    TensorReadError,
    backend,
    checkpoint_closure,
    compile,
    compile_step,
    current_backend,
    in_step,
    load,
    save,
    step_closure,
    summarize_scalar,
    trace,
)

__version__ = "0.1.0"
__all__ = [
    "Backend",
    "CheckpointError",
    "CompiledModel",
    "TensorReadError",
    "__version__",
    "amp",
    "backend",
    "bench",
    "checkpoint_closure",
    "compile",
    "compile_step",
    "current_backend",
    "distributed",
    "functional",
    "in_step",
    "learn",
    "load",
    "metrics",
    "optim",
    "runtime",
    "save",
    "step_closure",
    "summarize_scalar",
    "testing",
    "trace",
    "utils",
]
