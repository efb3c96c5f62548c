"""`torchmetrics.wrappers` on torchtally: the wrappers with TorchMetrics' names, arguments and
outputs, over the compatible metrics (each in TorchMetrics' module: `wrappers.classwise`, ...).

`Running` keeps the window in torchtally's fixed-size ring (`torchtally.metrics.Running`):
fixed shapes, one summed state per slot, traceable, instead of TorchMetrics' `window` deep
copies of the metric. `MetricTracker` keeps each finished step's computed value (host-side
bookkeeping between epochs) instead of a deep copy of the metric per step. `BootStrapper`
stacks its replicas' states in one metric.
"""

from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric
from torchtally.compat.torchmetrics.wrappers.bootstrapping import BootStrapper
from torchtally.compat.torchmetrics.wrappers.classwise import ClasswiseWrapper
from torchtally.compat.torchmetrics.wrappers.minmax import MinMaxMetric
from torchtally.compat.torchmetrics.wrappers.multioutput import MultioutputWrapper
from torchtally.compat.torchmetrics.wrappers.multitask import MultitaskWrapper
from torchtally.compat.torchmetrics.wrappers.running import Running
from torchtally.compat.torchmetrics.wrappers.tracker import MetricTracker
from torchtally.compat.torchmetrics.wrappers.transformations import (
    BinaryTargetTransformer,
    LambdaInputTransformer,
    MetricInputTransformer,
)

__all__ = [
    "BinaryTargetTransformer",
    "BootStrapper",
    "ClasswiseWrapper",
    "LambdaInputTransformer",
    "MetricInputTransformer",
    "MetricTracker",
    "MinMaxMetric",
    "MultioutputWrapper",
    "MultitaskWrapper",
    "Running",
    "WrapperMetric",
]
