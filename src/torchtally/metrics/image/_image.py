"""`PSNRMetric` and `SSIMMetric`: image quality over every image seen, constant state."""

from __future__ import annotations

import math
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.functional._checks import count_nonfinite
from torchtally.functional.image._image import psnr_compute, psnr_update, ssim_per_image
from torchtally.metrics._base import Metric

__all__ = ["PSNRMetric", "SSIMMetric"]


@final
class PSNRMetric(Metric):
    """Peak signal-to-noise ratio over every pixel seen (TorchMetrics'
    `PeakSignalNoiseRatio` with the default reduction): `10 log10(R^2 / MSE)`.

    Args:
        data_range: R, the value range (e.g. 1.0 or 255.0); None takes
            `max(target) - min(target)` over every target seen (min / max states, mergeable).
        base: Logarithm base (10: decibels).
        name: Metric name; defaults to "psnr".
        check_values: Count non-finite inputs and raise them at compute.

    Example:
        >>> metric = PSNRMetric(data_range=3.0)
        >>> metric(torch.tensor([[0.0, 1.0], [2.0, 3.0]]), torch.tensor([[3.0, 2.0], [1.0, 0.0]]))
        tensor(2.5527, dtype=torch.float64)
    """

    unit = ""
    higher_is_better = True
    input_kind = "image"
    error_kinds = ErrorKinds(nonfinite_values="non-finite values")

    def __init__(
        self,
        data_range: float | None = None,
        base: float = 10.0,
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        if data_range is not None and not (isinstance(data_range, (int, float)) and data_range > 0):
            raise ValueError(
                f"Argument `data_range` must be a number > 0 or None. Received: data_range={data_range!r}"
            )
        if not (isinstance(base, (int, float)) and base > 0 and base != 1):
            raise ValueError(
                f"Argument `base` must be a number > 0 other than 1. Received: base={base!r}"
            )
        super().__init__(name, check_values=check_values)
        self.data_range = None if data_range is None else float(data_range)
        self.base = float(base)
        f64 = torch.float64
        self.register_state("squared_error", torch.zeros((), dtype=f64))
        self.register_state("count", torch.zeros((), dtype=f64))
        self.register_state("low", torch.tensor(math.inf, dtype=f64), reduction="min")
        self.register_state("high", torch.tensor(-math.inf, dtype=f64), reduction="max")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """Add a batch of images (any shape; `preds` and `target` alike)."""
        squared_error, count, low, high = psnr_update(preds, target)
        self.squared_error.add_(squared_error)
        self.count.add_(count)
        torch.minimum(self.low, low, out=self.low)
        torch.maximum(self.high, high, out=self.high)
        if self.check_values:
            self.record_errors(nonfinite_values=count_nonfinite(preds - target.to(preds.dtype)))

    def compute(self) -> Tensor:
        return psnr_compute(
            self.squared_error, self.count, self.low, self.high, self.data_range, self.base
        )


@final
class SSIMMetric(Metric):
    """Mean structural similarity over every image seen (TorchMetrics'
    `StructuralSimilarityIndexMeasure` with a Gaussian window): a float64 sum of per-image SSIM
    and an image count.

    Args:
        data_range: The value range of the images (e.g. 1.0 or 255.0); required (TorchMetrics'
            per-batch guess from the data would make batches disagree).
        sigma: Standard deviation of the Gaussian window (1.5).
        k1, k2: SSIM constants (0.01, 0.03).
        name: Metric name; defaults to "ssim".
        check_values: Count non-finite inputs and raise them at compute.

    Example:
        >>> metric = SSIMMetric(data_range=1.0)
        >>> image = torch.linspace(0, 1, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> metric(image, image)
        tensor(1., dtype=torch.float64)
    """

    unit = ""
    higher_is_better = True
    input_kind = "image"
    similarity: Tensor
    images: Tensor
    error_kinds = ErrorKinds(nonfinite_values="non-finite values")

    def __init__(
        self,
        data_range: float,
        sigma: float = 1.5,
        k1: float = 0.01,
        k2: float = 0.03,
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        if not (isinstance(data_range, (int, float)) and data_range > 0):
            raise ValueError(
                f"Argument `data_range` must be a number > 0. Received: data_range={data_range!r}"
            )
        if not (isinstance(sigma, (int, float)) and sigma > 0):
            raise ValueError(f"Argument `sigma` must be a number > 0. Received: sigma={sigma!r}")
        super().__init__(name, check_values=check_values)
        self.data_range, self.sigma, self.k1, self.k2 = float(data_range), float(sigma), k1, k2
        self.register_state("similarity", torch.zeros((), dtype=torch.float64))
        self.register_state("images", torch.zeros((), dtype=torch.float64))

    def update(self, preds: Tensor, target: Tensor) -> None:
        """Add a batch of `(N, C, H, W)` images."""
        per_image = ssim_per_image(preds, target, self.data_range, self.sigma, self.k1, self.k2)
        self.similarity.add_(per_image.to(torch.float64).sum())
        self.images.add_(float(per_image.shape[0]))
        if self.check_values:
            self.record_errors(nonfinite_values=count_nonfinite(preds - target.to(preds.dtype)))

    def compute(self) -> Tensor:
        return self.similarity / self.images
