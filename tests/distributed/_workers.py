"""What each rank runs in the distributed tests (importable by spawned processes)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import torch

from torchtally.metrics import (
    AccuracyMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    MSEMetric,
    R2ScoreMetric,
)

NUM_CLASSES = 5
CLASSIFICATION: dict[str, Callable[[], Metric]] = {
    "accuracy": AccuracyMetric,
    "macro_f1": lambda: F1ScoreMetric(NUM_CLASSES, average_type="macro"),
    "confusion_matrix": lambda: ConfusionMatrixMetric(NUM_CLASSES),
    "auroc_ovr": lambda: AUROCMetric(NUM_CLASSES, capacity=256),
    "binary_auroc": lambda: AUROCMetric(capacity=256),
    "binary_auroc_binned": lambda: AUROCMetric(num_bins=64),
}
REGRESSION: dict[str, Callable[[], Metric]] = {"r2": R2ScoreMetric, "mse": MSEMetric}


def dataset(total: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """The global data every rank can regenerate; ranks take uneven shards of it."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, NUM_CLASSES, (total,), generator=g)
    scores = torch.randn(total, NUM_CLASSES, generator=g, dtype=torch.float64)
    scores[torch.arange(total), labels] += 1.0
    binary = (labels % 2).long()
    probability = torch.sigmoid(scores[:, 1] - scores[:, 0] + (binary * 2 - 1) * 0.5)
    target = torch.randn(total, generator=g, dtype=torch.float64)
    return {
        "labels": labels,
        "scores": scores,
        "binary": binary,
        "probability": probability,
        "target": target,
        "prediction": target + 0.3 * torch.randn(total, generator=g, dtype=torch.float64),
    }


def shard_bounds(total: int, world: int) -> list[tuple[int, int]]:
    """Uneven shards; rank 1 gets nothing."""
    weights = [3, 0, 1, 2][:world] if world > 1 else [1]
    weights = [w if i != 1 else 0 for i, w in enumerate(weights)]
    cuts = [0]
    for w in weights:
        cuts.append(cuts[-1] + total * w // sum(weights))
    cuts[-1] = total
    return list(itertools.pairwise(cuts))


def _batches(start: int, stop: int, size: int = 17) -> list[slice]:
    return [slice(a, min(a + size, stop)) for a in range(start, stop, size)] or [
        slice(start, start)
    ]


def metrics_on_shard(rank: int, world: int, total: int) -> dict[str, Any]:
    """Each rank updates the catalog on its shard; compute() gives the global values."""
    data = dataset(total)
    start, stop = shard_bounds(total, world)[rank]
    metrics = {name: make() for name, make in {**CLASSIFICATION, **REGRESSION}.items()}
    mean = MeanMetric()
    for part in _batches(start, stop):
        for name, metric in metrics.items():
            if name in REGRESSION:
                metric.update(data["target"][part], data["prediction"][part])
            elif name.startswith("binary_"):
                metric.update(data["binary"][part], data["probability"][part])
            elif name == "auroc_ovr":  # scikit-learn's multiclass AUROC takes probabilities
                metric.update(data["labels"][part], torch.softmax(data["scores"][part], -1))
            else:
                metric.update(data["labels"][part], data["scores"][part])
        mean.update(data["target"][part])
    results = {name: metric.compute().tolist() for name, metric in metrics.items()}
    results["mean"] = float(mean.compute())
    results["local_accuracy_count"] = float(metrics["accuracy"].total)
    results["binned_error_bound"] = float(metrics["binary_auroc_binned"].error_bound())
    return results


def collection_on_shard(rank: int, world: int, total: int) -> dict[str, Any]:
    """A collection computes to the same global values, and its local state survives."""
    data = dataset(total)
    start, stop = shard_bounds(total, world)[rank]
    collection = MetricCollection({"r2": R2ScoreMetric(), "mse": MSEMetric()}, prefix="valid/")
    for part in _batches(start, stop):
        collection.update(data["target"][part], data["prediction"][part])
    results = {k: float(v) for k, v in collection.compute().items()}
    results["local_count_after"] = float(collection["mse"].count)
    return results


def everything_on_shard(rank: int, world: int, total: int) -> dict[str, Any]:
    """One spawn per world size runs both checks (process start-up dominates the cost)."""
    return {
        "metrics": metrics_on_shard(rank, world, total),
        "collection": collection_on_shard(rank, world, total),
    }
