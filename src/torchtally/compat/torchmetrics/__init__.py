"""TorchMetrics 1.9's API on torchtally: change one import, keep the script.

    from torchtally.compat import torchmetrics
    acc = torchmetrics.Accuracy(task="multiclass", num_classes=10)
    acc(preds, target)            # batch value; compiles with fullgraph=True, no host sync

Module layout, class names, constructor arguments and defaults follow TorchMetrics; the
intentional differences are listed in the README ("Migrating from TorchMetrics").
"""

from torchtally.compat.torchmetrics import classification, functional
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.classification import *  # noqa: F403
from torchtally.compat.torchmetrics.classification import __all__ as _classification_all

__all__ = ["Metric", "classification", "functional", *_classification_all]
