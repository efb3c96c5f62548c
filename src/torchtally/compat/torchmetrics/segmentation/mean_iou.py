"""`torchmetrics.segmentation.mean_iou`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.segmentation import (
    MeanIoU,
)

__all__ = ["MeanIoU"]
