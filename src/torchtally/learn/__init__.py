"""Learner, dashboard, loggers and plots: the Burn-style training loop around the metrics.

The `Learner` runs traced steps (metric updates inside them), hands logged values to its
observers through step closures, and checkpoints; observers render (`make_renderer`: the live
`Dashboard` on a terminal, `PlainRenderer` elsewhere), log (`FileLogger`, `TensorBoardLogger`,
`SummaryTable`) and plot (`plot_logdir`).
"""

from torchtally._records import (
    SYSTEM_SPLIT,
    CurveData,
    MetricRecord,
    Observer,
    Progress,
    RunInfo,
)
from torchtally.learn._adaptor import (
    AdaptorError,
    MetricInput,
    adapt,
    find_adaptor,
    register_adaptor,
)
from torchtally.learn._dashboard.dashboard import Dashboard
from torchtally.learn._dashboard.plain import PlainRenderer
from torchtally.learn._dashboard.renderer import make_renderer
from torchtally.learn._learner.curves import curve_data, pr_curve, roc_curve, write_curves
from torchtally.learn._learner.learner import Learner
from torchtally.learn._learner.loop import NonFiniteLossError
from torchtally.learn._learner.select import EarlyStopping
from torchtally.learn._learner.steps import classification_step
from torchtally.learn._logs.files import FileLogger, read_records
from torchtally.learn._logs.summary_table import SummaryRow, SummaryTable
from torchtally.learn._logs.tensorboard import TensorBoardLogger
from torchtally.learn._outputs import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    RegressionOutput,
    SequenceOutput,
)
from torchtally.learn._plots.plots import plot_logdir

__all__ = [
    "SYSTEM_SPLIT",
    "AdaptorError",
    "ClassificationOutput",
    "CurveData",
    "Dashboard",
    "EarlyStopping",
    "FileLogger",
    "Learner",
    "MetricInput",
    "MetricRecord",
    "MultiLabelClassificationOutput",
    "NonFiniteLossError",
    "Observer",
    "PlainRenderer",
    "Progress",
    "RegressionOutput",
    "RunInfo",
    "SequenceOutput",
    "SummaryRow",
    "SummaryTable",
    "TensorBoardLogger",
    "adapt",
    "classification_step",
    "curve_data",
    "find_adaptor",
    "make_renderer",
    "plot_logdir",
    "pr_curve",
    "read_records",
    "register_adaptor",
    "roc_curve",
    "write_curves",
]
