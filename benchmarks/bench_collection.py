"""A collection of Accuracy + Precision + Recall + F1 + ConfusionMatrix against a single metric,
and against TorchMetrics' compute groups (issue 3 target: the collection costs at most 1.3× one
of its metrics).

    python -m benchmarks.bench_collection [--rounds N]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
import torchmetrics
import torchmetrics.classification as tm

from benchmarks._timing import interleaved
from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MetricCollection,
    PrecisionMetric,
    RecallMetric,
)


def torchtally_collection(classes: int, share: bool = True) -> MetricCollection:
    return MetricCollection(
        {
            "accuracy": AccuracyMetric(),
            "precision": PrecisionMetric(classes, average_type="macro"),
            "recall": RecallMetric(classes, average_type="macro"),
            "f1": F1ScoreMetric(classes, average_type="macro"),
            "confusion_matrix": ConfusionMatrixMetric(classes),
        },
        share_statistics=share,
    )


def torchmetrics_collection(classes: int) -> torchmetrics.MetricCollection:
    return torchmetrics.MetricCollection(
        {
            "accuracy": tm.MulticlassAccuracy(classes, average="micro"),
            "precision": tm.MulticlassPrecision(classes, average="macro"),
            "recall": tm.MulticlassRecall(classes, average="macro"),
            "f1": tm.MulticlassF1Score(classes, average="macro"),
            "confusion_matrix": tm.MulticlassConfusionMatrix(classes),
        },
        compute_groups=True,
    )


def measure(batch: int, classes: int, rounds: int) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, classes, (batch,), generator=g)
    scores = torch.randn(batch, classes, generator=g)
    single, shared = F1ScoreMetric(classes, average_type="macro"), torchtally_collection(classes)
    unshared, tm_single = torchtally_collection(classes, False), tm.MulticlassF1Score(classes)
    tm_groups = torchmetrics_collection(classes)
    tm_groups.update(scores, labels)  # TorchMetrics finds its compute groups on the first update
    timings = interleaved(
        {
            "torchtally F1": lambda: single.update(labels, scores),
            "torchtally collection": lambda: shared.update(labels, scores),
            "torchtally collection (no sharing)": lambda: unshared.update(labels, scores),
            "TorchMetrics F1": lambda: tm_single.update(scores, labels),
            "TorchMetrics collection (compute groups)": lambda: tm_groups.update(scores, labels),
        },
        rounds=rounds,
        inner=20,
    )
    row: dict[str, Any] = {"batch": batch, "classes": classes}
    row.update({name: round(t.median_us, 1) for name, t in timings.items()})
    row["torchtally collection / single"] = round(
        timings["torchtally collection"].median_s / timings["torchtally F1"].median_s, 2
    )
    row["TorchMetrics collection / single"] = round(
        timings["TorchMetrics collection (compute groups)"].median_s
        / timings["TorchMetrics F1"].median_s,
        2,
    )
    row["torchtally / TorchMetrics (collections)"] = round(
        timings["torchtally collection"].median_s
        / timings["TorchMetrics collection (compute groups)"].median_s,
        2,
    )
    row["torchtally updates per collection update"] = len(shared.groups)
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args(argv)
    rows = [measure(b, c, args.rounds) for b, c in ((256, 10), (4096, 10), (4096, 1000))]
    for row in rows:
        print(json.dumps(row))
    return rows


if __name__ == "__main__":
    main()
