"""PSNR and SSIM on image batches (TorchMetrics' definitions).

PSNR over everything seen: `10 * log10(R^2 / MSE)` with R the `data_range`, or, when it is
None, `max(target) - min(target)` over all targets seen (kept as max / min states, so it stays
exactly mergeable). SSIM per image (Wang et al. 2004): a Gaussian window (sigma 1.5, size
`2 * int(3.5 * sigma + 0.5) + 1`) over the reflect-padded images, the SSIM map (one value per
pixel) averaged per image; the metric averages over images.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor

from torchtally.functional._checks import check_same_shape, check_tensor

__all__ = ["psnr", "psnr_compute", "psnr_update", "ssim", "ssim_per_image"]


def _check_images(preds: Tensor, target: Tensor, dims: int | None = None) -> None:
    check_tensor("preds", preds)
    check_tensor("target", target)
    check_same_shape("preds", preds, "target", target)
    if not preds.is_floating_point():
        raise TypeError(f"Argument `preds` must be floating point. Received: {preds.dtype}")
    if dims is not None and preds.dim() != dims:
        raise ValueError(
            "Arguments `preds` and `target` must be (N, C, H, W) images. "
            f"Received: preds.shape={tuple(preds.shape)}"
        )


def psnr_update(preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """`(sum of squared errors, count, target min, target max)` of a batch (float64, 0-d)."""
    _check_images(preds, target)
    diff = preds.to(torch.float64) - target.to(torch.float64)
    t = target.to(torch.float64)
    empty = t.numel() == 0
    # new_full, not new_tensor: a fill from a host number is a kernel argument, where a copy
    # of a host tensor to a GPU synchronizes (and cannot be captured in a CUDA graph).
    low = t.new_full((), math.inf) if empty else t.amin()
    high = t.new_full((), -math.inf) if empty else t.amax()
    return diff.square().sum(), t.new_full((), float(t.numel())), low, high


def psnr_compute(
    squared_error: Tensor,
    count: Tensor,
    low: Tensor,
    high: Tensor,
    data_range: float | None = None,
    base: float = 10.0,
) -> Tensor:
    """PSNR in dB (base 10) from the accumulated statistics; NaN before any pixel."""
    span = high - low if data_range is None else torch.full_like(high, float(data_range))
    mse = squared_error / count
    return 10.0 * torch.log(span.square() / mse) / math.log(base)


def psnr(
    preds: Tensor, target: Tensor, data_range: float | None = None, base: float = 10.0
) -> Tensor:
    """PSNR of one batch.

    Example:
        >>> psnr(torch.tensor([[0.0, 1.0], [2.0, 3.0]]), torch.tensor([[3.0, 2.0], [1.0, 0.0]]))
        tensor(2.5527, dtype=torch.float64)
    """
    return psnr_compute(*psnr_update(preds, target), data_range=data_range, base=base)


def _gaussian_window(
    sigma: float, channels: int, dtype: torch.dtype, device: torch.device
) -> Tensor:
    size = int(3.5 * sigma + 0.5) * 2 + 1
    offsets = torch.arange(size, dtype=dtype, device=device) - (size - 1) / 2
    line = torch.exp(-0.5 * (offsets / sigma) ** 2)
    line = line / line.sum()
    return torch.outer(line, line).expand(channels, 1, size, size)


def ssim_per_image(
    preds: Tensor,
    target: Tensor,
    data_range: float,
    sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> Tensor:
    """SSIM of each image: `(N,)` in the input's floating dtype.

    Args:
        preds: `(N, C, H, W)` images.
        target: `(N, C, H, W)` reference images.
        data_range: The value range of the images (e.g. 1.0 or 255.0).
        sigma: Standard deviation of the Gaussian window.
        k1, k2: SSIM's stabilising constants.
    """
    _check_images(preds, target, 4)
    if not data_range > 0:
        raise ValueError(f"Argument `data_range` must be > 0. Received: data_range={data_range!r}")
    channels = preds.shape[1]
    window = _gaussian_window(sigma, channels, preds.dtype, preds.device)
    pad = (window.shape[-1] - 1) // 2
    if preds.shape[-1] <= pad or preds.shape[-2] <= pad:
        raise ValueError(
            f"Arguments `preds` and `target` must be larger than {pad} pixels per side for "
            f"sigma={sigma}. Received: preds.shape={tuple(preds.shape)}"
        )
    if preds.shape[0] == 0:  # a shape, not a value: no sync
        return preds.new_zeros(0)
    p = F.pad(preds, (pad, pad, pad, pad), mode="reflect")
    t = F.pad(target.to(preds.dtype), (pad, pad, pad, pad), mode="reflect")
    moments = F.conv2d(torch.cat([p, t, p * p, t * t, p * t]), window, groups=channels)
    mu_p, mu_t, p2, t2, pt = moments.split(preds.shape[0])
    var_p = (p2 - mu_p.square()).clamp(min=0.0)
    var_t = (t2 - mu_t.square()).clamp(min=0.0)
    cov = pt - mu_p * mu_t
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    index = ((2 * mu_p * mu_t + c1) * (2 * cov + c2)) / (
        (mu_p.square() + mu_t.square() + c1) * (var_p + var_t + c2)
    )
    return cast(Tensor, index.reshape(index.shape[0], -1).mean(-1))


def ssim(preds: Tensor, target: Tensor, data_range: float, sigma: float = 1.5) -> Tensor:
    """Mean SSIM over a batch of `(N, C, H, W)` images (float64)."""
    return ssim_per_image(preds, target, data_range, sigma).to(torch.float64).mean()
