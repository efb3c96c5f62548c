"""Per-rank function of the samplewise distributed test (importable by spawned ranks)."""

from __future__ import annotations

from typing import Any

import torch
import torchmetrics as tm

from torchtally.compat import torchmetrics as ttm


def samplewise_synced(rank: int, world: int) -> dict[str, Any]:
    """Samplewise F1 and exact match on this rank's batches (7 samples on rank 0, 9 on rank 1),
    on the drop-in and on TorchMetrics: each step's `forward` and the synced `compute`."""
    generator = torch.Generator().manual_seed(10 + rank)
    sizes = (3, 4) if rank == 0 else (4, 5)
    batches = [
        (
            torch.randn(n, 3, 4, generator=generator),
            torch.randint(0, 3, (n, 4), generator=generator),
        )
        for n in sizes
    ]
    out: dict[str, Any] = {}
    for name, library in (("ours", ttm), ("theirs", tm)):
        metrics = {
            "f1": library.classification.MulticlassF1Score(3, multidim_average="samplewise"),
            "exact": library.classification.MulticlassExactMatch(3, multidim_average="samplewise"),
        }
        for key, metric in metrics.items():
            out[f"{name}/{key}/steps"] = [metric(p, t).tolist() for p, t in batches]
            out[f"{name}/{key}/compute"] = metric.compute().tolist()
    return out
