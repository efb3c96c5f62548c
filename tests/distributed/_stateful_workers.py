"""What each rank runs in test_stateful_sync.py (importable by the spawned gloo processes).

Ranks take part unevenly: rank 0 updates at every step, rank 1 stops after step 2, rank 2
updates at even steps only; every rank calls `compute()` at every step, on every metric and on a
collection, as a training loop logging each step does. Batches are small, held back by
coalescing, so held batches meet the per-step syncs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    PrecisionMetric,
    R2ScoreMetric,
    RecallMetric,
)
from torchtally.metrics.ranking import AUROCMetric

NUM_CLASSES = 5
STEPS = 8
#: Seconds a collective may wait: a rank that skips a sync the others entered shows as an error
#: within this, not as a hang (the launcher's default group waits 60 s).
SYNC_TIMEOUT_S = 10

#: Each metric, and the name of the inputs it takes from a batch.
METRICS: dict[str, tuple[Callable[[], Metric], str]] = {
    "mean": (MeanMetric, "values"),
    "accuracy": (AccuracyMetric, "classification"),
    "macro_f1": (lambda: F1ScoreMetric(NUM_CLASSES, "macro"), "classification"),
    "confusion_matrix": (lambda: ConfusionMatrixMetric(NUM_CLASSES), "classification"),
    "auroc": (lambda: AUROCMetric(NUM_CLASSES, capacity=8192), "classification"),
    "r2": (R2ScoreMetric, "regression"),
}


def collection_members() -> dict[str, Metric]:
    """Members sharing one statistic (precision, recall) and one derived (accuracy)."""
    return {
        "precision": PrecisionMetric(NUM_CLASSES, "macro"),
        "recall": RecallMetric(NUM_CLASSES, "macro"),
        "matrix": ConfusionMatrixMetric(NUM_CLASSES),
        "accuracy": AccuracyMetric(num_classes=NUM_CLASSES),
    }


def updates_at(rank: int, step: int) -> bool:
    """Uneven participation: which ranks feed a batch at which step."""
    return rank == 0 or (rank == 1 and step <= 2) or (rank == 2 and step % 2 == 0)


def batch(rank: int, step: int) -> dict[str, tuple[torch.Tensor, ...]]:
    """The inputs rank `rank` feeds at `step`, the same wherever they are made."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    size = (0, 1, 3, 8, 40, 200)[int(torch.randint(0, 6, (), generator=g))]
    labels = torch.randint(0, NUM_CLASSES, (size,), generator=g)
    scores = torch.randn(size, NUM_CLASSES, generator=g)
    scores[torch.arange(size), labels] += 1.0
    target = torch.randn(size, generator=g, dtype=torch.float64)
    return {
        "values": (torch.randn(size, generator=g),),
        "classification": (labels, scores),
        "regression": (target, target + 0.3 * torch.randn(size, generator=g, dtype=torch.float64)),
    }


def _outcome(call: Callable[[], Any]) -> Any:
    """The value, or the error as text (an exception of a spawned rank may not unpickle)."""
    try:
        return call()
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def uneven_updates_compute_every_step(rank: int, world: int) -> list[dict[str, Any]]:
    """Every rank's computed values (or error) at every step, until the first error."""
    group = dist.new_group(list(range(world)), timeout=timedelta(seconds=SYNC_TIMEOUT_S))
    metrics = {name: make() for name, (make, _) in METRICS.items()}
    for metric in metrics.values():
        metric.process_group = group
    collection = MetricCollection(collection_members(), process_group=group)
    results: list[dict[str, Any]] = []
    for step in range(STEPS):
        if updates_at(rank, step):
            inputs = batch(rank, step)
            for name, metric in metrics.items():
                metric.update(*inputs[METRICS[name][1]])
            collection.update(*inputs["classification"])
        values: dict[str, Any] = {}
        for name, compute in [
            *((n, m.compute) for n, m in metrics.items()),
            ("collection", collection.compute),
        ]:
            values[name] = _outcome(compute)
            if isinstance(values[name], str):
                # A failed collective leaves the group unusable (each further one would wait
                # out the timeout): report what was seen so far.
                results.append(values)
                return results
        results.append(values)
    return results
