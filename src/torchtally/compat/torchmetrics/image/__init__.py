"""`torchmetrics.image` on torchtally: PSNR and SSIM on additive float64 sums (one summed
sync, traceable; the SSIM maths is `torchtally.functional.image`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional.image import psnr_update, ssim_per_image

__all__ = ["PeakSignalNoiseRatio", "StructuralSimilarityIndexMeasure"]


def _data_range(data_range: Any, required: bool) -> tuple[float, float] | float | None:
    if data_range is None and not required:
        return None
    if isinstance(data_range, tuple) and len(data_range) == 2:
        low, high = (float(v) for v in data_range)
        if high > low:
            return low, high
    elif (
        isinstance(data_range, (int, float)) and not isinstance(data_range, bool) and data_range > 0
    ):
        return float(data_range)
    expected = "a float > 0 or a (min, max) tuple" + ("" if required else " or None")
    raise ValueError(
        f"Argument `data_range` must be {expected}. Received: data_range={data_range!r}"
    )


def _reduction(reduction: Any, dim: Any = None) -> None:
    if reduction not in ("elementwise_mean", "sum") or dim is not None:
        raise ValueError(
            "Arguments `reduction` must be 'elementwise_mean' or 'sum' and `dim` None here "
            "(per-image values need a growing state). "
            f"Received: reduction={reduction!r}, dim={dim!r}"
        )


class PeakSignalNoiseRatio(Metric):
    """TorchMetrics' `PeakSignalNoiseRatio` over everything seen: `base`-log of
    `data_range^2 / MSE`, times 10. A `(min, max)` data range clamps both images to it."""

    higher_is_better = True
    is_differentiable = True

    def __init__(
        self,
        data_range: float | tuple[float, float],
        base: float = 10.0,
        reduction: str | None = "elementwise_mean",
        dim: int | tuple[int, ...] | None = None,
        **kwargs: Any,
    ) -> None:
        span = _data_range(data_range, required=True)
        if reduction is not None and reduction not in ("elementwise_mean", "sum", "none"):
            raise ValueError(
                "Argument `reduction` must be 'elementwise_mean', 'sum', 'none' or None. "
                f"Received: reduction={reduction!r}"
            )
        if dim is not None and not (
            (isinstance(dim, int) and not isinstance(dim, bool))
            or (isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim))
        ):
            raise ValueError(
                f"Argument `dim` must be None, an int or a tuple of ints. Received: dim={dim!r}"
            )
        if dim is not None and reduction not in ("elementwise_mean", "sum"):
            raise ValueError(
                "Argument `reduction` must be 'elementwise_mean' or 'sum' when `dim` is set "
                "(one PSNR per remaining element would need a state that grows with the data). "
                f"Received: reduction={reduction!r}, dim={dim!r}"
            )
        super().__init__(**kwargs)
        assert span is not None  # required=True
        self.clamp = span if isinstance(span, tuple) else None
        self.data_range: float = span[1] - span[0] if isinstance(span, tuple) else span
        self.base, self.reduction = base, reduction
        self.dim = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        # With `dim`: the PSNR of each element left after reducing `dim`, summed, and a count.
        names = ("sum_squared_error", "total") if self.dim is None else ("psnr_sum", "psnr_count")
        for name in names:
            self.register_state(name, torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if self.clamp is not None:
            preds, target = preds.clamp(*self.clamp), target.clamp(*self.clamp)
        if self.dim is None:
            squared_error, count, _, _ = psnr_update(preds, target)
            return {"sum_squared_error": squared_error, "total": count}
        diff = preds.double() - target.double()
        reduced = [self.dim] if isinstance(self.dim, int) else list(self.dim)
        squared_error = (diff * diff).sum(dim=self.dim)
        elements = target.numel()
        if reduced:
            elements = 1
            for d in reduced:
                elements *= int(target.shape[d])
        mse = squared_error / elements
        psnr = 10.0 * torch.log(self.data_range**2 / mse) / math.log(self.base)
        return {
            "psnr_sum": psnr.sum(),
            "psnr_count": torch.tensor(
                float(psnr.numel()), dtype=torch.float64, device=psnr.device
            ),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        if self.dim is not None:
            total = state["psnr_sum"]
            value = total / state["psnr_count"] if self.reduction == "elementwise_mean" else total
            return value.to(torch.get_default_dtype())
        mse = state["sum_squared_error"] / state["total"]
        value = 10.0 * torch.log(self.data_range**2 / mse) / math.log(self.base)
        return value.to(torch.get_default_dtype())


class StructuralSimilarityIndexMeasure(Metric):
    """TorchMetrics' `StructuralSimilarityIndexMeasure` with its Gaussian window on
    `(N, C, H, W)` images: the mean (or sum) of the per-image SSIM.

    `data_range=None` uses each batch's `max(range(preds), range(target))`, as TorchMetrics,
    as a tensor (no host sync): SSIM with range R equals SSIM of the images divided by R with
    range 1.
    """

    higher_is_better = True
    is_differentiable = True

    def __init__(
        self,
        gaussian_kernel: bool = True,
        sigma: float = 1.5,
        kernel_size: int = 11,
        reduction: str | None = "elementwise_mean",
        data_range: float | tuple[float, float] | None = None,
        k1: float = 0.01,
        k2: float = 0.03,
        return_full_image: bool = False,
        return_contrast_sensitivity: bool = False,
        **kwargs: Any,
    ) -> None:
        if not gaussian_kernel or return_full_image or return_contrast_sensitivity:
            raise ValueError(
                "Arguments `gaussian_kernel` must be True and `return_full_image`, "
                "`return_contrast_sensitivity` False here. Received: gaussian_kernel="
                f"{gaussian_kernel!r}, return_full_image={return_full_image!r}, "
                f"return_contrast_sensitivity={return_contrast_sensitivity!r}"
            )
        if not isinstance(sigma, (int, float)) or isinstance(sigma, bool) or sigma <= 0:
            raise ValueError(f"Argument `sigma` must be a float > 0. Received: sigma={sigma!r}")
        _reduction(reduction)
        span = _data_range(data_range, required=False)
        super().__init__(**kwargs)
        # TorchMetrics sizes the Gaussian window from sigma (kernel_size is for uniform ones).
        self.sigma, self.kernel_size, self.k1, self.k2 = float(sigma), kernel_size, k1, k2
        self.reduction = reduction
        self.clamp = span if isinstance(span, tuple) else None
        self.data_range = span[1] - span[0] if isinstance(span, tuple) else span
        self.register_state("similarity", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("total", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if not isinstance(preds, Tensor) or not isinstance(target, Tensor) or preds.dim() != 4:
            raise ValueError(
                "Arguments `preds` and `target` must be (N, C, H, W) image tensors. Received: "
                f"{getattr(preds, 'shape', type(preds).__name__)}"
            )
        if self.clamp is not None:
            preds, target = preds.clamp(*self.clamp), target.clamp(*self.clamp)
        target = target.to(preds.dtype)
        if self.data_range is None:
            span = torch.maximum(preds.max() - preds.min(), target.max() - target.min())
            preds, target = preds / span, target / span
        else:
            preds, target = preds / self.data_range, target / self.data_range
        per_image = ssim_per_image(preds, target, 1.0, self.sigma, self.k1, self.k2)
        return {
            "similarity": per_image.double().sum(),
            "total": torch.full((), float(per_image.shape[0]), dtype=torch.float64),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        total = state["similarity"]
        value = total if self.reduction == "sum" else total / state["total"]
        return value.to(torch.get_default_dtype())
