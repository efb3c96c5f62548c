"""A TorchMetrics-style training script (no Lightning) running on torchtally.

The only change from a TorchMetrics script is the import line below. The metric updates run
inside `torch.compile(fullgraph=True)` (TorchMetrics' own classes cannot), and under
`torchrun --nproc_per_node=2` each rank sees half of every batch while `compute()` returns the
global values, equal to a single-process run:

    python examples/torchmetrics_train.py
    torchrun --nproc_per_node=2 examples/torchmetrics_train.py

It prints one JSON line of final metric values (rank 0 only).
"""

from __future__ import annotations

import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from torchtally.compat import torchmetrics  # was: import torchmetrics

NUM_CLASSES, FEATURES = 4, 16


def make_data(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    centers = torch.randn(NUM_CLASSES, FEATURES, generator=torch.Generator().manual_seed(0)) * 0.6
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, NUM_CLASSES, (n,), generator=g)
    return centers[y] + torch.randn(n, FEATURES, generator=g), y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--no-compile", action="store_true", help="run the steps eagerly")
    args = parser.parse_args()

    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1

    torch.manual_seed(0)  # every rank trains the same replica; metrics see only its shard
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, NUM_CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x_train, y_train = make_data(512, seed=1)
    x_valid, y_valid = make_data(256, seed=2)

    train_metrics = torchmetrics.MetricCollection(
        {
            "acc": torchmetrics.Accuracy(task="multiclass", num_classes=NUM_CLASSES),
            "loss": torchmetrics.MeanMetric(),
        },
        prefix="train/",
    )
    valid_metrics = torchmetrics.MetricCollection(
        [
            torchmetrics.Accuracy(task="multiclass", num_classes=NUM_CLASSES),
            torchmetrics.F1Score(task="multiclass", num_classes=NUM_CLASSES, average="macro"),
            torchmetrics.Precision(task="multiclass", num_classes=NUM_CLASSES, average="weighted"),
            torchmetrics.classification.MulticlassConfusionMatrix(NUM_CLASSES),
            torchmetrics.CohenKappa(task="multiclass", num_classes=NUM_CLASSES),
            torchmetrics.HammingDistance(task="multiclass", num_classes=NUM_CLASSES),
            torchmetrics.AUROC(task="multiclass", num_classes=NUM_CLASSES),
            torchmetrics.AveragePrecision(
                task="multiclass", num_classes=NUM_CLASSES, thresholds=64
            ),
            torchmetrics.CalibrationError(task="multiclass", num_classes=NUM_CLASSES),
        ],
        prefix="valid/",
    )
    valid_auxiliary = torchmetrics.MeanSquaredError()

    def train_metric_step(logits: torch.Tensor, y: torch.Tensor) -> None:
        shard = slice(rank, None, world)
        train_metrics["acc"].update(logits[shard], y[shard])
        train_metrics["loss"].update(F.cross_entropy(logits[shard], y[shard], reduction="none"))

    def valid_step(x: torch.Tensor, y: torch.Tensor) -> None:
        logits = model(x)
        valid_metrics.update(logits, y)
        probs = logits.softmax(-1)
        valid_auxiliary.update(probs, F.one_hot(y, NUM_CLASSES).to(probs.dtype))

    if not args.no_compile:
        train_metric_step = torch.compile(train_metric_step, fullgraph=True)
        valid_step = torch.compile(valid_step, fullgraph=True)

    results: dict[str, object] = {}
    for epoch in range(args.epochs):
        model.train()
        for start in range(0, len(x_train), 64):
            x, y = x_train[start : start + 64], y_train[start : start + 64]
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                train_metric_step(logits.detach(), y)
        model.eval()
        with torch.no_grad():
            for start in range(rank * 32, len(x_valid), 32 * world):  # this rank's batches
                valid_step(x_valid[start : start + 32], y_valid[start : start + 32])
        epoch_values = {**train_metrics.compute(), **valid_metrics.compute()}
        epoch_values["valid/mse"] = valid_auxiliary.compute()
        results[f"epoch{epoch}"] = {k: v.tolist() for k, v in epoch_values.items()}
        train_metrics.reset()
        valid_metrics.reset()
        valid_auxiliary.reset()

    if rank == 0:
        print(json.dumps(results))
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
