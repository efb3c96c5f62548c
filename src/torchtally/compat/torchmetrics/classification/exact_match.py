"""`torchmetrics.classification.exact_match`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    ExactMatch,
    MulticlassExactMatch,
    MultilabelExactMatch,
)

__all__ = ["ExactMatch", "MulticlassExactMatch", "MultilabelExactMatch"]
