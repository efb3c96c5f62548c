"""`torchmetrics.regression.tweedie_deviance`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    TweedieDevianceScore,
)

__all__ = ["TweedieDevianceScore"]
