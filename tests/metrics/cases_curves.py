"""Registry cases for the curve family: average precision (exact, binned), PR curve, ROC."""

from __future__ import annotations

import torch
from cases import Args, Case, labels_and_scores

from torchtally.metrics.curves import AveragePrecisionMetric, PrecisionRecallCurveMetric, ROCMetric

NAN = float("nan")
CAPACITY = 64


def _binary(g: torch.Generator, n: int) -> Args:
    scores = (torch.rand(n, generator=g) * 10).round() / 10  # ties
    target = torch.randint(0, 2, (n,), generator=g)
    return (scores, target), {"weights": torch.randint(0, 3, (n,), generator=g).float()}


def _multiclass(g: torch.Generator, n: int) -> Args:
    labels, scores = labels_and_scores(g, n, 3)
    return (torch.softmax(scores, 1), labels), {}


def _multilabel(g: torch.Generator, n: int) -> Args:
    return (torch.rand(n, 3, generator=g), torch.randint(0, 2, (n, 3), generator=g)), {}


_BAD = [
    ((torch.tensor([NAN, 0.5]), torch.tensor([0, 1])), {}, "non-finite predictions (1 value)"),
    ((torch.tensor([0.2, 0.5]), torch.tensor([0, 2])), {}, "invalid targets (1 value)"),
    (
        (torch.tensor([0.2, 0.5]), torch.tensor([0, 1])),
        {"weights": torch.tensor([1.0, -2.0])},
        "negative weights (1 value)",
    ),
]

CASES = [
    Case(
        "ap-exact-binary-weighted",
        lambda: AveragePrecisionMetric(capacity=CAPACITY),
        _binary,
        bad=[
            *_BAD,
            ((torch.rand(70), torch.ones(70, dtype=torch.long)), {}, "6 samples were dropped"),
        ],
    ),
    Case(
        "ap-binned-binary",
        lambda: AveragePrecisionMetric(thresholds=11),
        _binary,
        bad=[((torch.tensor([-0.2, 1.5]), torch.tensor([0, 1])), {}, "binned mode) (2 values)")],
    ),
    Case(
        "ap-exact-multiclass-weighted",
        lambda: AveragePrecisionMetric("multiclass", 3, capacity=CAPACITY, average="weighted"),
        _multiclass,
        bad=[((torch.rand(2, 3), torch.tensor([0, 3])), {}, "invalid targets (1 value)")],
    ),
    Case(
        "ap-binned-multilabel-none",
        lambda: AveragePrecisionMetric("multilabel", 3, thresholds=9, average="none"),
        _multilabel,
    ),
    Case(
        "ap-exact-multilabel-micro",
        lambda: AveragePrecisionMetric("multilabel", 3, capacity=CAPACITY, average="micro"),
        _multilabel,
    ),
    Case(
        "pr-curve-binned-binary",
        lambda: PrecisionRecallCurveMetric(thresholds=7),
        _binary,
        bad=_BAD,
    ),
    Case(
        "roc-binned-multiclass",
        lambda: ROCMetric("multiclass", 3, thresholds=7),
        _multiclass,
        bad=[((torch.rand(2, 3), torch.tensor([0, 3])), {}, "invalid targets (1 value)")],
    ),
    Case(
        "roc-binned-multilabel-micro",
        lambda: ROCMetric("multilabel", 3, thresholds=5, average="micro"),
        _multilabel,
    ),
]
