"""`torchmetrics.image.psnr`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.image import (
    PeakSignalNoiseRatio,
)

__all__ = ["PeakSignalNoiseRatio"]
