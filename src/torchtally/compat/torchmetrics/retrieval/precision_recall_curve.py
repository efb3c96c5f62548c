"""`torchmetrics.retrieval.precision_recall_curve`: TorchMetrics' module path for these
classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalPrecisionRecallCurve,
    RetrievalRecallAtFixedPrecision,
)

__all__ = ["RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"]
