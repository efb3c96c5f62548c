"""Registry cases for the retrieval family: grouped `(B, K)` lists and the flat form."""

from __future__ import annotations

import torch
from cases import Args, Case

from torchtally.metrics.retrieval import (
    RetrievalHitRateMetric,
    RetrievalMAPMetric,
    RetrievalMRRMetric,
    RetrievalNDCGMetric,
    RetrievalPrecisionMetric,
    RetrievalRecallMetric,
    RetrievalRPrecisionMetric,
)

NAN = float("nan")
WIDTH = 6


def _grouped(g: torch.Generator, n: int, graded: bool = False) -> Args:
    # Scores on a coarse grid (ties), some empty queries, some padding.
    preds = torch.randint(0, 5, (n, WIDTH), generator=g).float() / 4
    target = torch.randint(0, 3 if graded else 2, (n, WIDTH), generator=g)
    target = target * (torch.rand(n, 1, generator=g) < 0.8)
    mask = torch.rand(n, WIDTH, generator=g) < 0.85
    weights = torch.randint(0, 3, (n,), generator=g).float()
    return (preds, target), {"mask": mask, "weights": weights}


def _never_empty(g: torch.Generator, n: int) -> Args:
    (preds, target), kwargs = _grouped(g, n)
    return (preds, target.clamp(min=1)), kwargs


def _flat(g: torch.Generator, n: int) -> Args:
    preds = torch.randint(0, 5, (n,), generator=g).float() / 4
    target = torch.randint(0, 2, (n,), generator=g)
    indexes = torch.randint(0, 5, (n,), generator=g)
    return (preds, target, indexes), {}


_BAD = [
    (
        (torch.tensor([[NAN, 0.1]]), torch.tensor([[1, 0]])),
        {},
        "non-finite predictions (1 value)",
    ),
    ((torch.rand(1, 3), torch.tensor([[1, 2, 0]])), {}, "invalid targets (1 value)"),
    (
        (torch.rand(2, 3), torch.ones(2, 3, dtype=torch.long)),
        {"weights": torch.tensor([1.0, -1.0])},
        "negative weights (1 value)",
    ),
]

CASES = [
    Case(
        "retrieval-ndcg-at-3",
        lambda: RetrievalNDCGMetric(top_k=3),
        lambda g, n: _grouped(g, n, graded=True),
        bad=[((torch.rand(1, 2), torch.tensor([[-1, 2]])), {}, "invalid targets (1 value)")],
    ),
    Case(
        "retrieval-mrr-skip",
        lambda: RetrievalMRRMetric(empty_target_action="skip"),
        _grouped,
        bad=_BAD,
    ),
    Case(
        "retrieval-map-error",
        lambda: RetrievalMAPMetric(top_k=4, empty_target_action="error"),
        _never_empty,
        bad=[
            *_BAD,
            (
                (torch.rand(2, 3), torch.tensor([[0, 0, 0], [1, 0, 0]])),
                {},
                "no relevant target (empty_target_action='error') (1 value)",
            ),
        ],
    ),
    Case("retrieval-hit-rate-at-2", lambda: RetrievalHitRateMetric(top_k=2), _grouped, bad=_BAD),
    Case(
        "retrieval-precision-at-4-pos-max",
        lambda: RetrievalPrecisionMetric(top_k=4, empty_target_action="pos", aggregation="max"),
        _grouped,
        bad=_BAD,
    ),
    Case(
        "retrieval-recall-min", lambda: RetrievalRecallMetric(aggregation="min"), _grouped, bad=_BAD
    ),
    Case("retrieval-r-precision", lambda: RetrievalRPrecisionMetric(), _grouped, bad=_BAD),
    Case(
        "retrieval-ndcg-flat",
        lambda: RetrievalNDCGMetric(top_k=3, capacity=64),
        _flat,
        bad=[
            (
                (torch.tensor([NAN, 0.5]), torch.tensor([1, 0]), torch.tensor([0, 0])),
                {},
                "non-finite predictions (1 value)",
            ),
            (
                (
                    torch.rand(70),
                    torch.ones(70, dtype=torch.long),
                    torch.zeros(70, dtype=torch.long),
                ),
                {},
                "6 samples were dropped",
            ),
        ],
    ),
    Case("retrieval-map-flat", lambda: RetrievalMAPMetric(capacity=64), _flat),
]
