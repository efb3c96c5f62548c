"""Registry cases for accuracy, aggregation and regression metrics."""

from __future__ import annotations

import torch
from cases import Case, labels_and_scores

from torchtally.metrics import (
    AccuracyMetric,
    LearningRateMetric,
    MAEMetric,
    MeanMetric,
    MSEMetric,
    PerplexityMetric,
    R2ScoreMetric,
    SMAPEMetric,
)

NAN = float("nan")


def _regression(g: torch.Generator, n: int) -> tuple[tuple[torch.Tensor, ...], dict]:
    labels = torch.randn(n, generator=g, dtype=torch.float64)
    return (labels, labels + 0.5 * torch.randn(n, generator=g, dtype=torch.float64)), {}


def _regression_bad() -> list:
    return [
        ((torch.tensor([1.0, NAN]), torch.tensor([1.0, 2.0])), {}, "non-finite labels (1 value)"),
        ((torch.tensor([1.0, 2.0]), torch.tensor([torch.inf, 2.0])), {}, "non-finite predictions"),
    ]


CASES = [
    Case(
        "accuracy-scores",
        lambda: AccuracyMetric(),
        lambda g, n: (labels_and_scores(g, n, 5), {}),
        bad=[((torch.tensor([0, 1]), torch.tensor([[NAN, 0.0], [0.0, 1.0]])), {}, "non-finite")],
    ),
    Case(
        "accuracy-weighted",
        lambda: AccuracyMetric("acc"),
        lambda g, n: (
            (torch.randint(0, 3, (n,), generator=g), torch.randint(0, 3, (n,), generator=g)),
            {"weights": torch.randint(0, 3, (n,), generator=g).float()},
        ),
        bad=[
            (
                (torch.tensor([0, 1]), torch.tensor([0, 1])),
                {"weights": torch.tensor([1.0, -1.0])},
                "negative weights (1 value)",
            )
        ],
    ),
    Case(
        "mean",
        lambda: MeanMetric(),
        lambda g, n: (
            (torch.randn(n, generator=g),),
            {"weight": torch.rand(n, generator=g)},
        ),
        bad=[((torch.tensor([NAN]),), {}, "non-finite values")],
    ),
    Case(
        "perplexity",
        lambda: PerplexityMetric(),
        lambda g, n: (
            (torch.randint(0, 7, (n, 3), generator=g), torch.rand(n, generator=g) * 3),
            {"weights": torch.randint(0, 2, (n, 3), generator=g).float()},
        ),
        bad=[((torch.zeros(2, dtype=torch.long), torch.tensor([NAN])), {}, "non-finite loss")],
    ),
    Case("mse", lambda: MSEMetric(), _regression, bad=_regression_bad()),
    Case("mae", lambda: MAEMetric(), _regression, bad=_regression_bad()),
    Case("smape", lambda: SMAPEMetric(), _regression, bad=_regression_bad()),
    Case("r2", lambda: R2ScoreMetric(), _regression, bad=_regression_bad()),
    Case(
        "r2-multioutput",
        lambda: R2ScoreMetric(num_outputs=3, multioutput="variance_weighted"),
        lambda g, n: (
            (torch.randn(n, 3, generator=g), torch.randn(n, 3, generator=g)),
            {},
        ),
    ),
]

# The learning rate is a last-value metric: its batches do not concatenate, so it is checked by
# the traceability test only (see test_common.NOT_ACCUMULATING).
LAST_VALUE_CASES = [
    Case("learning-rate", lambda: LearningRateMetric(), lambda g, n: ((torch.rand(1)[0],), {})),
]
