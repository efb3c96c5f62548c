"""Registry cases for the ranking family: AUROC (exact, binned), AUC, precision@k, recall@k."""

from __future__ import annotations

import torch
from cases import Args, Case, labels_and_scores

from torchtally.metrics.ranking import (
    AUCMetric,
    AUROCMetric,
    PrecisionAtKMetric,
    RecallAtKMetric,
)

NAN = float("nan")
CAPACITY = 64  # the common tests use at most 40 samples; small buffers keep compute fast


def _binary(g: torch.Generator, n: int, dtype: torch.dtype = torch.float32) -> Args:
    labels = torch.randint(0, 2, (n,), generator=g)
    # Scores on a coarse grid, so that ties (counted as 1/2) occur in every batch.
    scores = (torch.rand(n, generator=g, dtype=dtype) * 10).round() / 10
    return (labels, scores), {}


def _multiclass(g: torch.Generator, n: int, classes: int, dtype: torch.dtype) -> Args:
    labels, scores = labels_and_scores(g, n, classes)
    return (labels, scores.to(dtype).clamp(-4.0, 4.0)), {}


def _weighted_binary(g: torch.Generator, n: int) -> Args:
    (labels, scores), _ = _binary(g, n)
    return (labels, scores), {"weights": torch.randint(0, 3, (n,), generator=g).float()}


def _at_k(g: torch.Generator, n: int) -> Args:
    labels = torch.randint(0, 6, (n, 3), generator=g)
    scores = torch.randn(n, 6, generator=g).round()  # rounded: tied scores
    return (labels, scores), {"weights": torch.randint(0, 3, (n,), generator=g).float()}


_BINARY_BAD = [
    ((torch.tensor([0, 2, 1]), torch.tensor([0.1, 0.2, 0.3])), {}, "invalid labels (1 value)"),
    ((torch.tensor([0, 1]), torch.tensor([NAN, 0.3])), {}, "non-finite predictions (1 value)"),
]
_AT_K_BAD = [
    (
        (torch.tensor([[0, 6], [1, -1]]), torch.randn(2, 6)),
        {},
        "0, num_classes) (2 values)",  # test_common escapes only parentheses, not brackets
    ),
    ((torch.tensor([1, 2]), torch.tensor([[NAN] + [0.0] * 5] * 2)), {}, "non-finite predictions"),
    (
        (torch.tensor([1, 2]), torch.randn(2, 6)),
        {"weights": torch.tensor([1.0, -1.0])},
        "negative weights (1 value)",
    ),
]

CASES = [
    Case(
        "auroc-exact-binary",
        lambda: AUROCMetric(capacity=CAPACITY),
        _binary,
        bad=[
            *_BINARY_BAD,
            (
                (torch.randint(0, 2, (CAPACITY + 6,)), torch.rand(CAPACITY + 6)),
                {},
                "6 samples were dropped",
            ),
        ],
    ),
    Case(
        "auroc-exact-multiclass",
        lambda: AUROCMetric(num_classes=4, capacity=CAPACITY),
        lambda g, n: _multiclass(g, n, 4, torch.float32),
        bad=[((torch.tensor([0, 4]), torch.randn(2, 4)), {}, "invalid labels (1 value)")],
    ),
    Case(
        "auroc-exact-multiclass-none-f64",
        lambda: AUROCMetric(3, CAPACITY, average="none", dtype=torch.float64),
        lambda g, n: _multiclass(g, n, 3, torch.float64),
    ),
    Case(
        "auroc-binned-binary",
        lambda: AUROCMetric(num_bins=16),
        _binary,
        bad=[
            *_BINARY_BAD,
            (
                (torch.tensor([0, 1, 1]), torch.tensor([-0.5, 1.0, 1.5])),
                {},
                "predictions outside score_range (2 values)",
            ),
        ],
    ),
    Case(
        "auroc-binned-multiclass",
        lambda: AUROCMetric(num_classes=3, num_bins=8, score_range=(-4.0, 4.0)),
        lambda g, n: _multiclass(g, n, 3, torch.float32),
    ),
    Case(
        "auc-roc-weighted",
        lambda: AUCMetric(),
        _weighted_binary,
        bad=[
            ((torch.tensor([0, -1]), torch.tensor([0.1, 0.2])), {}, "negative labels (1 value)"),
            ((torch.tensor([0, 1]), torch.tensor([NAN, 0.2])), {}, "non-finite predictions"),
            (
                (torch.tensor([0, 1]), torch.tensor([-0.1, 1.2])),
                {},
                "0, 1] (2 values)",
            ),
            (
                (torch.tensor([0, 1]), torch.tensor([0.1, 0.2])),
                {"weights": torch.tensor([-1.0, 1.0])},
                "negative weights (1 value)",
            ),
        ],
    ),
    Case("auc-pr-interpolation", lambda: AUCMetric(50, "PR"), _binary),
    Case(
        "auc-pr-majoring-thresholds",
        lambda: AUCMetric(curve="PR", summation_method="majoring", thresholds=[0.25, 0.5, 0.75]),
        _weighted_binary,
    ),
    Case("auc-roc-minoring", lambda: AUCMetric(7, summation_method="minoring"), _binary),
    Case("precision-at-k", lambda: PrecisionAtKMetric(2), _at_k, bad=_AT_K_BAD),
    Case("recall-at-k", lambda: RecallAtKMetric(3), _at_k, bad=_AT_K_BAD),
]
