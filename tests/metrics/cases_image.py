"""Registry cases for the image family: PSNR and SSIM."""

from __future__ import annotations

import torch
from cases import Args, Case

from torchtally.metrics.image import PSNRMetric, SSIMMetric

NAN = float("nan")


def _images(g: torch.Generator, n: int) -> Args:
    target = torch.rand(n, 2, 12, 12, generator=g)
    preds = (target + 0.1 * torch.randn(n, 2, 12, 12, generator=g)).clamp(0, 1)
    return (preds, target), {}


_BAD = [((torch.full((1, 1, 12, 12), NAN), torch.rand(1, 1, 12, 12)), {}, "non-finite values")]

CASES = [
    Case("psnr-range", lambda: PSNRMetric(1.0), _images, bad=_BAD),
    Case("psnr-range-from-targets", lambda: PSNRMetric(base=2.0), _images),
    Case("ssim", lambda: SSIMMetric(1.0), _images, bad=_BAD),
]
