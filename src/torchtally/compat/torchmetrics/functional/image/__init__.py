"""`torchmetrics.functional.image` on torchtally: PSNR and SSIM, each the compatible class's
value on one batch."""

from torchtally.compat.torchmetrics.functional.image.psnr import peak_signal_noise_ratio
from torchtally.compat.torchmetrics.functional.image.ssim import structural_similarity_index_measure

__all__ = [
    "peak_signal_noise_ratio",
    "structural_similarity_index_measure",
]
