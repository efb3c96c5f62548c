"""Registry cases for the wrappers.

`BootStrapper` draws Poisson weights keyed by the update count and the position in the batch,
and `Running` keeps the last updates, so splitting a batch changes their values: they join the invariants that do not compare split and
whole runs (traceable, reset, device moves); their merge, statistics and windows are tested in
`tests/metrics/wrappers/`.
"""

from __future__ import annotations

import torch
from cases import Args, Case, labels_and_scores

from torchtally.metrics import MeanMetric
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.wrappers import BootStrapper, Running


def _correct(g: torch.Generator, n: int) -> Args:
    return ((torch.rand(n, generator=g) < 0.7).double(),), {}


def _calibration(g: torch.Generator, n: int) -> Args:
    labels, scores = labels_and_scores(g, n, 3)
    return (torch.softmax(scores, 1), labels), {}


ORDER_DEPENDENT_CASES = [
    Case(
        "bootstrap-mean",
        lambda: BootStrapper(MeanMetric(), 8, quantile=(0.1, 0.9), weight_arg="weight"),
        _correct,
    ),
    Case(
        "bootstrap-calibration",
        lambda: BootStrapper(CalibrationErrorMetric(3, n_bins=5), 4, raw=True),
        _calibration,
    ),
    Case(
        "running-calibration", lambda: Running(CalibrationErrorMetric(3, n_bins=5), 3), _calibration
    ),
    Case("running-mean", lambda: Running(MeanMetric(), 2), _correct),
]

__all__ = ["ORDER_DEPENDENT_CASES"]
