"""One torchtally metric's eager `update` cost in this process (thread-CPU µs, median of 5).

For a before/after comparison of two source trees, alternate processes, for example:

    for i in 1 2 3; do
      PYTHONPATH=/path/to/before/src python -m benchmarks.bench_update_ab mse 262144 1
      PYTHONPATH=/path/to/after/src  python -m benchmarks.bench_update_ab mse 262144 1
    done

and compare the medians. Large batches are bimodal from process to process: a batch-sized
temporary is either reused from the heap or page-faulted in again, depending on heap state.
Families: acc f1 cm top5 mse r2 mean bauroc mcauroc binned.
"""

from __future__ import annotations

import sys
import time

import torch


def main(argv: list[str]) -> float:
    import torchtally.metrics as tt

    torch.set_num_threads(1)
    family, n, classes = argv[0], int(argv[1]), int(argv[2])
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, classes, (n,), generator=g)
    scores = torch.randn(n, classes, generator=g)
    target = torch.randn(n, generator=g)
    prediction = target + 0.1 * torch.randn(n, generator=g)
    binary = labels % 2
    metrics = {
        "acc": lambda: (tt.AccuracyMetric(), (labels, scores)),
        "f1": lambda: (tt.F1ScoreMetric(classes, average_type="macro"), (labels, scores)),
        "cm": lambda: (tt.ConfusionMatrixMetric(classes), (labels, scores)),
        "top5": lambda: (tt.TopKAccuracyMetric(5), (labels, scores)),
        "mse": lambda: (tt.MSEMetric(), (target, prediction)),
        "r2": lambda: (tt.R2ScoreMetric(), (target, prediction)),
        "mean": lambda: (tt.MeanMetric(), (target,)),
        "bauroc": lambda: (
            tt.AUROCMetric(capacity=1 << 22),
            (binary, torch.sigmoid(scores[:, 0])),
        ),
        "mcauroc": lambda: (
            tt.AUROCMetric(num_classes=classes, capacity=1 << 22),
            (labels, torch.softmax(scores, -1)),
        ),
        "binned": lambda: (tt.AUROCMetric(num_bins=200), (binary, torch.sigmoid(scores[:, 0]))),
    }
    metric, inputs = metrics[family]()
    reps = max(3, min(300, int(3e7 // max(n * classes, 1))))
    for _ in range(3):
        metric.update(*inputs)
    metric.reset()
    times = []
    for _ in range(5):
        start = time.thread_time_ns()
        for _ in range(reps):
            metric.update(*inputs)
        times.append((time.thread_time_ns() - start) / reps / 1000)
        metric.reset()
    return sorted(times)[2]


if __name__ == "__main__":
    print(f"{main(sys.argv[1:]):.1f}")
