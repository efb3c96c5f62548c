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
                # the wrapper's `forward` passes the base metric's step sync on
                "running": library.wrappers.Running(
                    library.MeanMetric(dist_sync_on_step=synced), window=2
                ),
            }
            for key, metric in metrics.items():
                steps = []
                for preds, target in _batches(rank):
                    one = key in ("mean", "running")
                    value = metric(preds) if one else metric(preds, target)
                    steps.append(float(value))
                out[f"{name}/{key}/{synced}"] = (steps, float(metric.compute()))
    return out


def gathered_tensors(rank: int, world: int) -> dict[str, Any]:
    """`gather_all_tensors` of the drop-in and of TorchMetrics on tensors whose shapes differ
    by rank (and a 0-d one)."""
    from torchmetrics.utilities.distributed import gather_all_tensors as theirs

    from torchtally.compat.torchmetrics.utilities.distributed import gather_all_tensors as ours

    generator = torch.Generator().manual_seed(rank)
    cases = {
        "scalar": torch.tensor(float(rank + 1)),
        "ragged": torch.randn(3 + rank, 2 + 2 * rank, generator=generator),
        "same": torch.arange(4) * (rank + 1),
    }
    return {
        name: ([t.tolist() for t in ours(value)], [t.tolist() for t in theirs(value)])
        for name, value in cases.items()
    }


def _user_metric(base: Any) -> Any:
    class Stats(base):  # type: ignore[misc, valid-type]
        full_state_update = False

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.add_state("total", torch.tensor(0.0), dist_reduce_fx="sum")
            self.add_state("high", torch.tensor(float("-inf")), dist_reduce_fx="max")
            self.add_state("rows", [], dist_reduce_fx="cat")

        def update(self, x: torch.Tensor) -> None:
            self.total += x.sum()
            self.high = torch.maximum(self.high, x.max())
            self.rows.append(x)

        def compute(self) -> torch.Tensor:
            rows = torch.cat(self.rows) if isinstance(self.rows, list) else self.rows
            return torch.stack([self.total, self.high, rows.numel() * torch.ones(()), rows.sum()])

    return Stats


def user_metric_synced(rank: int, world: int) -> dict[str, Any]:
    """A metric written TorchMetrics' way (sum, max and cat states), on the drop-in and on
    TorchMetrics: per-step `forward` values with and without `dist_sync_on_step`, `compute`."""
    out: dict[str, Any] = {}
    for name, library in (("ours", ttm), ("theirs", tm)):
        for synced in (True, False):
            metric = _user_metric(library.Metric)(dist_sync_on_step=synced)
            generator = torch.Generator().manual_seed(rank)
            steps = [metric(torch.rand(3 + rank, generator=generator)).tolist() for _ in range(3)]
            out[f"{name}/{synced}"] = (steps, metric.compute().tolist())
    return out
