"""Registry cases for the multilabel family: Hamming score."""

from __future__ import annotations

import torch
from cases import Args, Case

from torchtally.metrics.multilabel import HammingScoreMetric


def _batch(g: torch.Generator, n: int) -> Args:
    preds, target = torch.rand(n, 4, generator=g), torch.randint(0, 2, (n, 4), generator=g)
    return (preds, target), {"weights": torch.randint(0, 3, (n,), generator=g).float()}


CASES = [
    Case(
        "hamming-score",
        lambda: HammingScoreMetric(),
        _batch,
        bad=[
            ((torch.tensor([[float("nan"), 0.2]]), torch.tensor([[1, 0]])), {}, "non-finite"),
            ((torch.rand(1, 2), torch.tensor([[2, 0]])), {}, "labels not 0 or 1 (1 value)"),
            (
                (torch.rand(2, 2), torch.ones(2, 2)),
                {"weights": torch.tensor([1.0, -1.0])},
                "negative weights (1 value)",
            ),
        ],
    ),
]
