"""Sums of further per-element regression errors (percentage, log, log-cosh, Minkowski,
Tweedie deviance) and the threshold counts of the critical success index: each a float64 sum
over one batch that adds across batches and ranks."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from torchtally.functional._checks import check_same_shape
from torchtally.functional.regression._errors import per_output_difference

__all__ = [
    "absolute_percentage_error_sum",
    "critical_success_counts",
    "critical_success_index_compute",
    "log_cosh_error_sum",
    "minkowski_sum",
    "squared_log_error_sum",
    "tweedie_deviance_sum",
    "weighted_absolute_percentage_error",
]


def absolute_percentage_error_sum(
    labels: Tensor, predictions: Tensor, epsilon: float = 1.17e-06
) -> Tensor:
    """Σ |p - y| / max(|y|, epsilon) of one batch (0-d float64); the count is `labels.numel()`."""
    check_same_shape("labels", labels, "predictions", predictions)
    p, y = predictions.double(), labels.double()
    return ((p - y).abs() / y.abs().clamp(min=epsilon)).sum()


def weighted_absolute_percentage_error(
    absolute_error_total: Tensor, absolute_label_total: Tensor, epsilon: float = 1.17e-06
) -> Tensor:
    """Σ |p - y| / max(Σ |y|, epsilon), from the two sums."""
    return absolute_error_total / absolute_label_total.clamp(min=epsilon)


def squared_log_error_sum(labels: Tensor, predictions: Tensor) -> Tensor:
    """Σ (log(1 + p) - log(1 + y))² of one batch (0-d float64)."""
    check_same_shape("labels", labels, "predictions", predictions)
    return (predictions.double().log1p() - labels.double().log1p()).square().sum()


def log_cosh_error_sum(labels: Tensor, predictions: Tensor, per_output: bool = False) -> Tensor:
    """Σ log(cosh(p - y)) of one batch, as |d| + log1p(exp(-2|d|)) - log 2 (finite for any
    error, where exp(d) overflows past |d| ~ 710 in float64): 0-d, or `(k,)` per output."""
    check_same_shape("labels", labels, "predictions", predictions)
    d = per_output_difference(labels, predictions).abs()
    log_cosh = d + torch.log1p(torch.exp(-2 * d)) - math.log(2.0)
    return log_cosh.sum(0) if per_output else log_cosh.sum()


def minkowski_sum(labels: Tensor, predictions: Tensor, p: float) -> Tensor:
    """Σ |p - y|^p of one batch (0-d float64); the distance is its `1/p`-th power."""
    check_same_shape("labels", labels, "predictions", predictions)
    return (predictions.double() - labels.double()).abs().pow(p).sum()


def tweedie_deviance_sum(
    labels: Tensor, predictions: Tensor, power: float
) -> tuple[Tensor, Tensor]:
    """Σ of the unit Tweedie deviance at `power` (0: squared error, 1: Poisson, 2: gamma;
    undefined for 0 < power < 1) over one batch, and the number of elements outside the
    power's domain (they add 0; the caller raises): (0-d float64, 0-d int64)."""
    check_same_shape("labels", labels, "predictions", predictions)
    p, t = predictions.double(), labels.double()
    if power == 0:
        return (t - p).square().sum(), torch.zeros((), dtype=torch.int64, device=p.device)
    if power == 1:
        invalid = (p <= 0) | (t < 0)
        safe_p = torch.where(invalid, 1.0, p)
        deviance = 2 * (torch.xlogy(t, t / safe_p) + safe_p - t)
    elif power == 2:
        invalid = (p <= 0) | (t <= 0)
        safe_p, safe_t = torch.where(invalid, 1.0, p), torch.where(invalid, 1.0, t)
        deviance = 2 * (torch.log(safe_p / safe_t) + safe_t / safe_p - 1)
    else:
        if power < 0:
            invalid = p <= 0
        elif power < 2:
            invalid = (p <= 0) | (t < 0)
        else:
            invalid = (p <= 0) | (t <= 0)
        safe_p = torch.where(invalid, 1.0, p)
        term_1 = t.clamp(min=0).pow(2 - power) / ((1 - power) * (2 - power))
        term_2 = t * safe_p.pow(1 - power) / (1 - power)
        term_3 = safe_p.pow(2 - power) / (2 - power)
        deviance = 2 * (term_1 - term_2 + term_3)
    return torch.where(invalid, 0.0, deviance).sum(), invalid.sum()


def critical_success_counts(
    labels: Tensor, predictions: Tensor, threshold: float
) -> tuple[Tensor, Tensor, Tensor]:
    """Hits, misses and false alarms of `predictions >= threshold` against
    `labels >= threshold` over every element (0-d float64 each)."""
    check_same_shape("labels", labels, "predictions", predictions)
    p, t = predictions >= threshold, labels >= threshold
    return (p & t).sum().double(), (~p & t).sum().double(), (p & ~t).sum().double()


def critical_success_index_compute(hits: Tensor, misses: Tensor, false_alarms: Tensor) -> Tensor:
    """hits / (hits + misses + false alarms); 0 when nothing reached the threshold."""
    denominator = hits + misses + false_alarms
    return torch.where(denominator > 0, hits / denominator.clamp(min=1), 0.0)
