"""TorchMetrics 1.9's API on torchtally: change one import, keep the script.

    from torchtally.compat import torchmetrics
    acc = torchmetrics.Accuracy(task="multiclass", num_classes=10)
    acc(preds, target)            # batch value; compiles with fullgraph=True, no host sync

Module layout, class names, constructor arguments and defaults follow TorchMetrics; the
intentional differences are listed in the README ("Migrating from TorchMetrics").
"""

import sys

from torchtally.compat.torchmetrics import (
    _constants,
    aggregation,
    classification,
    clustering,
    functional,
    image,
    regression,
    retrieval,
    segmentation,
    text,
    wrappers,
)
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.aggregation import *  # noqa: F403
from torchtally.compat.torchmetrics.aggregation import __all__ as _aggregation_all
from torchtally.compat.torchmetrics.classification import *  # noqa: F403
from torchtally.compat.torchmetrics.classification import __all__ as _classification_all
from torchtally.compat.torchmetrics.collection import MetricCollection
from torchtally.compat.torchmetrics.image import (
    PeakSignalNoiseRatio,
    StructuralSimilarityIndexMeasure,
)
from torchtally.compat.torchmetrics.regression import *  # noqa: F403
from torchtally.compat.torchmetrics.regression import __all__ as _regression_all
from torchtally.compat.torchmetrics.retrieval import *  # noqa: F403
from torchtally.compat.torchmetrics.retrieval import __all__ as _retrieval_all
from torchtally.compat.torchmetrics.segmentation import DiceScore, MeanIoU
from torchtally.compat.torchmetrics.text import (
    BLEUScore,
    CharErrorRate,
    MatchErrorRate,
    Perplexity,
    WordErrorRate,
    WordInfoLost,
    WordInfoPreserved,
)
from torchtally.compat.torchmetrics.wrappers import (
    BootStrapper,
    ClasswiseWrapper,
    MetricTracker,
    MultitaskWrapper,
)

__all__ = [
    "BLEUScore",
    "BootStrapper",
    "CharErrorRate",
    "ClasswiseWrapper",
    "DiceScore",
    "MeanIoU",
    "Metric",
    "MetricCollection",
    "MetricTracker",
    "MultitaskWrapper",
    "PeakSignalNoiseRatio",
    "Perplexity",
    "StructuralSimilarityIndexMeasure",
    "WordErrorRate",
    "WordInfoLost",
    "WordInfoPreserved",
    "MatchErrorRate",
    "aggregation",
    "classification",
    "clustering",
    "functional",
    "image",
    "regression",
    "retrieval",
    "segmentation",
    "text",
    "wrappers",
    *_aggregation_all,
    *_classification_all,
    *_regression_all,
    *_retrieval_all,
]

# TorchMetrics' class constants where ours differ (set once, on the classes).
_constants.apply(sys.modules[__name__])
