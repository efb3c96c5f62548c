"""Per-rank functions of the compat layer's distributed tests (importable by spawned ranks)."""

from __future__ import annotations

from typing import Any

import torch
import torchmetrics as tm

from torchtally.compat import torchmetrics as ttm


def _batches(rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(100 + rank)
    return [
        (
            torch.rand(8 + 3 * rank, generator=generator),
            torch.randint(0, 2, (8 + 3 * rank,), generator=generator),
        )
        for _ in range(3)
    ]


def forward_synced_on_step(rank: int, world: int) -> dict[str, Any]:
    """`forward` of each step with `dist_sync_on_step=True` and False, on the drop-in and on
    TorchMetrics, and `compute` at the end, on this rank's batches."""
    out: dict[str, Any] = {}
    for name, library in (("ours", ttm), ("theirs", tm)):
        for synced in (True, False):
            metrics = {
                "f1": library.classification.BinaryF1Score(dist_sync_on_step=synced),
                "auroc": library.classification.BinaryAUROC(dist_sync_on_step=synced),
                "mean": library.MeanMetric(dist_sync_on_step=synced),
            }
            for key, metric in metrics.items():
                steps = []
                for preds, target in _batches(rank):
                    value = metric(preds) if key == "mean" else metric(preds, target)
                    steps.append(float(value))
                out[f"{name}/{key}/{synced}"] = (steps, float(metric.compute()))
    return out
