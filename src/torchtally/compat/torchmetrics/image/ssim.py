"""`torchmetrics.image.ssim`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.image import (
    StructuralSimilarityIndexMeasure,
)

__all__ = ["StructuralSimilarityIndexMeasure"]
