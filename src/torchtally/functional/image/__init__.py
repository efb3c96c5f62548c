"""Image functionals: PSNR and SSIM."""

from torchtally.functional.image._image import (
    psnr,
    psnr_compute,
    psnr_update,
    ssim,
    ssim_per_image,
)

__all__ = ["psnr", "psnr_compute", "psnr_update", "ssim", "ssim_per_image"]
