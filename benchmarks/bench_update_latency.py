"""Eager `update` latency: torchtally vs a raw-torch reference, TorchMetrics and torcheval.

The raw-torch reference is the shortest hand-written eager code that keeps the same statistic
(what a user would write without a metrics library), so `torchtally / raw` is the price of the
library: argument checks, data checks (`check_values`), bookkeeping. Contenders run round-robin
and every state is reset between samples, untimed.

    python -m benchmarks.bench_update_latency [--quick]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torcheval.metrics as te
import torchmetrics.classification as tm
import torchmetrics.regression as tmr

from benchmarks._timing import interleaved
from torchtally.metrics import AccuracyMetric, AUROCMetric, F1ScoreMetric, R2ScoreMetric


@dataclass
class Contender:
    update: Callable[[], object]
    reset: Callable[[], object]
    finish: Callable[[], object] | None = None


def _raw_accuracy(labels: torch.Tensor, scores: torch.Tensor) -> Contender:
    state = torch.zeros(2, dtype=torch.float64)

    def update() -> None:
        state[0] += (scores.argmax(-1) == labels).sum()
        state[1] += labels.numel()

    return Contender(update, state.zero_)


def _raw_f1(labels: torch.Tensor, scores: torch.Tensor, classes: int) -> Contender:
    matrix = torch.zeros(classes * classes, dtype=torch.int64)

    def update() -> None:
        matrix.add_(torch.bincount(labels * classes + scores.argmax(-1), minlength=classes**2))

    return Contender(update, matrix.zero_)


def _raw_append(labels: torch.Tensor, scores: torch.Tensor, capacity: int) -> Contender:
    kept_scores = torch.zeros(capacity, *scores.shape[1:])
    kept_labels = torch.zeros(capacity, dtype=labels.dtype)
    offset = [0]

    def update() -> None:
        n = labels.shape[0]
        kept_scores[offset[0] : offset[0] + n] = scores
        kept_labels[offset[0] : offset[0] + n] = labels
        offset[0] += n

    def reset() -> None:
        offset[0] = 0

    return Contender(update, reset)


def _raw_r2(target: torch.Tensor, prediction: torch.Tensor) -> Contender:
    state = torch.zeros(4, dtype=torch.float64)

    def update() -> None:
        y, p = target.double(), prediction.double()
        state[0] += y.sum()
        state[1] += y.square().sum()
        state[2] += (y - p).square().sum()
        state[3] += y.numel()

    return Contender(update, state.zero_)


def _library(metric: Any, *inputs: torch.Tensor) -> Contender:
    return Contender(lambda: metric.update(*inputs), metric.reset)


def _ours(metric: Any, *inputs: torch.Tensor) -> Contender:
    # The small batches a torchtally metric holds back (`coalesce_updates`) are applied inside
    # each timed window, so that their update is paid for.
    return Contender(lambda: metric.update(*inputs), metric.reset, metric.flush)


def contenders(case: str, n: int, classes: int, inner: int) -> dict[str, Contender]:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, classes, (n,), generator=g)
    scores = torch.randn(n, classes, generator=g)
    if case == "accuracy":
        return {
            "raw torch": _raw_accuracy(labels, scores),
            "torchtally": _ours(AccuracyMetric(), labels, scores),
            "torchtally (no checks)": _ours(AccuracyMetric(check_values=False), labels, scores),
            "TorchMetrics": _library(
                tm.MulticlassAccuracy(classes, average="micro"), scores, labels
            ),
            "torcheval": _library(te.MulticlassAccuracy(), scores, labels),
        }
    if case == "macro-F1":
        return {
            "raw torch": _raw_f1(labels, scores, classes),
            "torchtally": _ours(F1ScoreMetric(classes, average_type="macro"), labels, scores),
            "torchtally (no checks)": _ours(
                F1ScoreMetric(classes, average_type="macro", check_values=False), labels, scores
            ),
            "TorchMetrics": _library(
                tm.MulticlassF1Score(classes, average="macro"), scores, labels
            ),
            "torcheval": _library(
                te.MulticlassF1Score(num_classes=classes, average="macro"), scores, labels
            ),
        }
    if case == "AUROC":
        capacity = n * inner
        return {
            "raw torch": _raw_append(labels, scores, capacity),
            "torchtally": _ours(AUROCMetric(classes, capacity=capacity), labels, scores),
            "torchtally (no checks)": _ours(
                AUROCMetric(classes, capacity=capacity, check_values=False), labels, scores
            ),
            "TorchMetrics": _library(tm.MulticlassAUROC(classes), scores, labels),
            "torcheval": _library(te.MulticlassAUROC(num_classes=classes), scores, labels),
        }
    target, prediction = scores[:, 0].double(), scores[:, 1].double()
    return {
        "raw torch": _raw_r2(target, prediction),
        "torchtally": _ours(R2ScoreMetric(), target, prediction),
        "torchtally (no checks)": _ours(R2ScoreMetric(check_values=False), target, prediction),
        "TorchMetrics": _library(tmr.R2Score(), prediction, target),
        "torcheval": _library(te.R2Score(), prediction, target),
    }


def measure(cases: list[tuple[str, int, int]], rounds: int) -> list[dict[str, Any]]:
    rows = []
    for case, n, classes in cases:
        inner = max(1, min(50, 400_000 // (n * max(1, classes // 10))))
        group = contenders(case, n, classes, inner)
        timings = interleaved(
            {name: c.update for name, c in group.items()},
            rounds=rounds,
            inner=inner,
            prepare={name: c.reset for name, c in group.items()},
            finish={name: c.finish for name, c in group.items() if c.finish is not None},
        )
        raw = timings["raw torch"].median_us
        row: dict[str, Any] = {"metric": case, "batch": n, "classes": classes}
        for name, timing in timings.items():
            row[name] = round(timing.median_us, 1)
        row["torchtally / raw"] = round(timings["torchtally"].median_us / raw, 2)
        row["torchtally / TorchMetrics"] = round(
            timings["torchtally"].median_us / timings["TorchMetrics"].median_us, 2
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def default_cases(quick: bool) -> list[tuple[str, int, int]]:
    if quick:
        return [(m, b, 10) for m in ("accuracy", "macro-F1", "AUROC") for b in (256, 4096)]
    sizes = [(256, 10), (4096, 10), (65_536, 10), (256, 1000), (4096, 1000), (65_536, 1000)]
    return [(m, b, c) for m in ("accuracy", "macro-F1", "AUROC", "R2") for b, c in sizes]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="issue-2 cases only, fewer rounds")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(torch.get_num_threads())
    rows = measure(default_cases(args.quick), args.rounds or (15 if args.quick else 25))
    print("\nMedian eager update latency, µs per call (CPU, torch", torch.__version__ + ")\n")
    print(markdown(rows))
    return rows


if __name__ == "__main__":
    main()
