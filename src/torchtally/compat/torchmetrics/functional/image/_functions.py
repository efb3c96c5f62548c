"""TorchMetrics 1.9's image functions that have a compatible class: each is that class's value
on one batch (`one_batch`), so a function and its class cannot disagree."""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor

from torchtally.compat.torchmetrics.functional._one_batch import compat_class, one_batch

__all__ = ["peak_signal_noise_ratio", "structural_similarity_index_measure"]


def peak_signal_noise_ratio(
    preds: Tensor,
    target: Tensor,
    data_range: float | tuple[float, float],
    base: float = 10.0,
    reduction: str | None = "elementwise_mean",
    dim: int | tuple[int, ...] | None = None,
) -> Tensor:
    """Peak signal-to-noise ratio over `data_range` (in dB for `base=10`)."""
    metric = compat_class("PeakSignalNoiseRatio", "image")(
        data_range=data_range, base=base, reduction=reduction, dim=dim
    )
    return one_batch(metric, preds, target)  # type: ignore[no-any-return]


def structural_similarity_index_measure(
    preds: Tensor,
    target: Tensor,
    gaussian_kernel: bool = True,
    sigma: float | Sequence[float] = 1.5,
    kernel_size: int | Sequence[int] = 11,
    reduction: str | None = "elementwise_mean",
    data_range: float | tuple[float, float] | None = None,
    k1: float = 0.01,
    k2: float = 0.03,
    return_full_image: bool = False,
    return_contrast_sensitivity: bool = False,
) -> Tensor:
    """Mean (or sum) SSIM of `(N, C, H, W)` images."""
    metric = compat_class("StructuralSimilarityIndexMeasure", "image")(
        gaussian_kernel=gaussian_kernel,
        sigma=sigma,
        kernel_size=kernel_size,
        reduction=reduction,
        data_range=data_range,
        k1=k1,
        k2=k2,
        return_full_image=return_full_image,
        return_contrast_sensitivity=return_contrast_sensitivity,
    )
    return one_batch(metric, preds, target)  # type: ignore[no-any-return]
