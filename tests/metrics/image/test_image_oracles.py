"""PSNR and SSIM against TorchMetrics 1.9 and hand computations."""

from __future__ import annotations

import doctest
import importlib
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure

from torchtally.metrics import MetricValueError
from torchtally.metrics.image import PSNRMetric, SSIMMetric


def _images(
    seed: int, n: int, size: tuple[int, int] = (20, 18)
) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    target = torch.rand(n, 3, *size, generator=g, dtype=torch.float64)
    preds = (target + 0.1 * torch.randn(n, 3, *size, generator=g, dtype=torch.float64)).clamp(0, 1)
    return preds, target


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5), data_range=st.sampled_from([1.0, 2.0]))
def test_psnr_and_ssim_match_torchmetrics(seed: int, n: int, data_range: float) -> None:
    preds, target = _images(seed, n)
    psnr, their_psnr = PSNRMetric(data_range), PeakSignalNoiseRatio(data_range=data_range)
    ssim = SSIMMetric(data_range)
    their_ssim = StructuralSimilarityIndexMeasure(data_range=data_range)
    for lo, hi in ((0, 1), (1, n)):
        psnr.update(preds[lo:hi], target[lo:hi])
        their_psnr.update(preds[lo:hi], target[lo:hi])
        ssim.update(preds[lo:hi], target[lo:hi])
        their_ssim.update(preds[lo:hi], target[lo:hi])
    # TorchMetrics keeps float32 states.
    assert float(psnr.compute()) == pytest.approx(float(their_psnr.compute()), rel=1e-6)
    assert float(ssim.compute()) == pytest.approx(float(their_ssim.compute()), rel=1e-6)


def test_psnr_by_hand_and_data_range_from_targets() -> None:
    preds, target = torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([3.0, 2.0, 1.0, 0.0])
    mse = (9 + 1 + 1 + 9) / 4
    metric = PSNRMetric()  # range from the targets: 3 - 0
    metric.update(preds[:2], target[:2])
    metric.update(preds[2:], target[2:])
    assert float(metric.compute()) == pytest.approx(10 * math.log10(9 / mse))
    assert float(PSNRMetric(3.0, base=2.0)(preds, target)) == pytest.approx(10 * math.log2(9 / mse))


def test_ssim_of_identical_images_is_one_and_errors() -> None:
    image = torch.rand(2, 1, 16, 16, dtype=torch.float64)
    assert float(SSIMMetric(1.0)(image, image)) == pytest.approx(1.0)
    bad = image.clone()
    bad[0, 0, 0, 0] = float("nan")
    metric = SSIMMetric(1.0)
    metric.update(bad, image)
    with pytest.raises(MetricValueError, match="non-finite values"):
        metric.compute()
    with pytest.raises(ValueError, match="`data_range` must be a number > 0"):
        SSIMMetric(0.0)
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        SSIMMetric(1.0).update(torch.rand(4, 4), torch.rand(4, 4))


def test_docstring_examples() -> None:
    for name in ("torchtally.functional.image._image", "torchtally.metrics.image._image"):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
