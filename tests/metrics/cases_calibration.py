"""Registry cases for the calibration family: binary and multiclass calibration error."""

from __future__ import annotations

import torch
from cases import Args, Case, labels_and_scores

from torchtally.metrics.calibration import CalibrationErrorMetric

NAN = float("nan")


def _binary(g: torch.Generator, n: int) -> Args:
    preds = torch.rand(n, generator=g)
    preds[::5] = 1.0  # the closed last bin
    target = torch.randint(0, 2, (n,), generator=g)
    return (preds, target), {"weights": torch.randint(0, 3, (n,), generator=g).float()}


def _multiclass(g: torch.Generator, n: int) -> Args:
    labels, scores = labels_and_scores(g, n, 4)
    return (scores, labels), {}


CASES = [
    Case(
        "calibration-ece-binary",
        lambda: CalibrationErrorMetric(n_bins=10),
        _binary,
        bad=[
            ((torch.tensor([NAN, 0.5]), torch.tensor([0, 1])), {}, "non-finite predictions"),
            ((torch.tensor([-0.1, 1.5]), torch.tensor([0, 1])), {}, "0, 1] (2 values)"),
            ((torch.tensor([0.1, 0.5]), torch.tensor([0, 2])), {}, "invalid targets (1 value)"),
            (
                (torch.tensor([0.1, 0.5]), torch.tensor([0, 1])),
                {"weights": torch.tensor([-1.0, 1.0])},
                "negative weights (1 value)",
            ),
        ],
    ),
    Case(
        "calibration-mce-multiclass-logits",
        lambda: CalibrationErrorMetric(4, n_bins=8, norm="max", from_logits=True),
        _multiclass,
        bad=[((torch.randn(2, 4), torch.tensor([0, 4])), {}, "invalid targets (1 value)")],
    ),
    Case(
        "calibration-rms-multiclass-ignore",
        lambda: CalibrationErrorMetric(4, norm="l2", from_logits=True, ignore_index=0),
        _multiclass,
    ),
]
