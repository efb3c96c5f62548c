"""Image metrics: PSNR and SSIM."""

from torchtally.metrics.image._image import PSNRMetric, SSIMMetric

__all__ = ["PSNRMetric", "SSIMMetric"]
