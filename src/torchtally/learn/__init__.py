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
from torchtally.learn._dash_renderer import make_renderer
from torchtally.learn._dashboard import Dashboard
from torchtally.learn._learner import Learner
from torchtally.learn._learner_curves import curve_data, pr_curve, roc_curve, write_curves
from torchtally.learn._learner_loop import NonFiniteLossError
from torchtally.learn._learner_select import EarlyStopping
from torchtally.learn._learner_steps import classification_step
from torchtally.learn._log_tensorboard import TensorBoardLogger
from torchtally.learn._loggers import FileLogger, read_records
from torchtally.learn._outputs import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    RegressionOutput,
    SequenceOutput,
)
from torchtally.learn._plain import PlainRenderer
from torchtally.learn._plots import plot_logdir
from torchtally.learn._summary import SummaryRow, SummaryTable

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
