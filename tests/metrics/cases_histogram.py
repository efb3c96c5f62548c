"""Registry cases for streaming quantiles."""

from __future__ import annotations

import torch
from cases import Args, Case

from torchtally.metrics.histogram import QuantileMetric


def _values(g: torch.Generator, n: int) -> Args:
    return (torch.rand(n, generator=g) * 4 - 2,), {"weights": torch.rand(n, generator=g)}


CASES = [
    Case(
        "quantile-histogram",
        lambda: QuantileMetric(-2.0, 2.0, (0.0, 0.25, 0.5, 1.0), num_bins=32),
        _values,
        bad=[
            ((torch.tensor([3.0, float("nan")]),), {}, "or NaN (2 values)"),
            ((torch.tensor([0.5]),), {"weights": torch.tensor([-1.0])}, "negative weights"),
        ],
    ),
]
