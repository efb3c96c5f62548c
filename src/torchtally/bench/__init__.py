"""NeuroBench-compatible benchmark harness: static and workload metrics over a dataloader.

`Benchmark(model, dataloader, preprocessors, postprocessors, [[static], [workload]]).run()`
returns results keyed by metric class name, with NeuroBench 2.3.0's definitions and values,
without its silent failures (a failing metric raises `MetricFailedError`) and with recurrent
layers counted. Any `torchtally.metrics.Metric` subclass is also accepted as a workload metric.
"""

from torchtally.bench._harness.benchmark import Benchmark
from torchtally.bench._harness.failure import MetricFailedError
from torchtally.bench._harness.hooks import ActivationHook, ConnectionHook
from torchtally.bench._harness.model import BenchModel, TorchModel, as_bench_model
from torchtally.bench._harness.results_io import save_results
from torchtally.bench._harness.snntorch_model import SNNTorchModel
from torchtally.bench._metrics.activation_sparsity import (
    ActivationSparsity,
    ActivationSparsityByLayer,
)
from torchtally.bench._metrics.metric_types import (
    AccumulatedMetric,
    DeviceAccumulatedMetric,
    DeviceWorkloadMetric,
    StaticMetric,
    WorkloadMetric,
)
from torchtally.bench._metrics.neuron import (
    NEURON_RESET_OPERATIONS,
    MembraneUpdates,
    NeuronOperations,
)
from torchtally.bench._metrics.static import ConnectionSparsity, Footprint, ParameterCount
from torchtally.bench._metrics.synaptic_operations import SynapticOperations
from torchtally.bench._metrics.task import MSE, R2, SMAPE, ClassificationAccuracy
from torchtally.bench._processing.audio import MelSpectrogram, MFCCPreProcessor, S2SPreProcessor
from torchtally.bench._processing.processors import (
    Aggregate,
    ChooseMaxCount,
    PostProcessor,
    PreProcessor,
)

__all__ = [
    "MSE",
    "NEURON_RESET_OPERATIONS",
    "R2",
    "SMAPE",
    "AccumulatedMetric",
    "ActivationHook",
    "ActivationSparsity",
    "ActivationSparsityByLayer",
    "Aggregate",
    "BenchModel",
    "Benchmark",
    "ChooseMaxCount",
    "ClassificationAccuracy",
    "ConnectionHook",
    "ConnectionSparsity",
    "DeviceAccumulatedMetric",
    "DeviceWorkloadMetric",
    "Footprint",
    "MFCCPreProcessor",
    "MelSpectrogram",
    "MembraneUpdates",
    "MetricFailedError",
    "NeuronOperations",
    "ParameterCount",
    "PostProcessor",
    "PreProcessor",
    "S2SPreProcessor",
    "SNNTorchModel",
    "StaticMetric",
    "SynapticOperations",
    "TorchModel",
    "WorkloadMetric",
    "as_bench_model",
    "builtin_metric_class",
    "save_results",
]


_STATIC_BUILTINS = ("ParameterCount", "Footprint", "ConnectionSparsity")
_WORKLOAD_BUILTINS = (
    "MembraneUpdates",
    "ActivationSparsity",
    "SynapticOperations",
    "ClassificationAccuracy",
    "ActivationSparsityByLayer",
    "MSE",
    "SMAPE",
    "R2",
    "NeuronOperations",
)


def builtin_metric_class(class_name: str, static: bool) -> type | None:
    """The built-in metric class NeuroBench's deprecated string names resolve to.

    Args:
        class_name: The class name, e.g. ``"Footprint"``.
        static: Look among the static metrics (else among the workload metrics).

    Returns:
        The class, or None when there is no such built-in.

    Example:
        >>> builtin_metric_class("MSE", static=False).__name__
        'MSE'
    """
    names = _STATIC_BUILTINS if static else _WORKLOAD_BUILTINS
    found: type | None = globals()[class_name] if class_name in names else None
    return found
