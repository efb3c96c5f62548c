"""`torchmetrics.functional.image.psnr` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.image._functions import peak_signal_noise_ratio

__all__ = ["peak_signal_noise_ratio"]
