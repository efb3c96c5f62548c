"""`MetricCollection.compile_update()`: six classification metrics updated eagerly, through one
compiled graph, by TorchMetrics' MetricCollection and by six torcheval metrics (issue 16).

The six metrics of bench_step_overhead (accuracy, macro precision, macro F1, top-3 accuracy,
binned AUROC with 128 thresholds, confusion matrix), 10 classes, batch 64 / 1024 / 16384.
Contenders are interleaved round-robin on the thread-CPU clock (one intra-op thread, so the
clock counts the work done, not other processes' use of the cores); medians of per-call times.
Every contender is reset (untimed) before each sample, so torcheval's binned AUROC, which keeps
its batches until compute, never grows past `inner` batches.

Per row: microseconds per update, the ratios, the wall seconds of the compiled collection's first
update at that batch size (a cold compile: torch's compile caches are off), and the break-even
call count (that compile over the per-call saving against the eager collection). A last row
times four cheap regression metrics (MSE, MAE, SMAPE, R2) at the smallest batch: one compiled
collection against the same four metrics each with its own `compile_update()`.

    python -m benchmarks.bench_collection_compile [--rounds N] [--batches 64 1024 16384]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from typing import Any

import torch

import torchtally.metrics as tt
from benchmarks._timing import interleaved, paired_ratio
from benchmarks.bench_step_overhead import CLASSES, six_torchmetrics, six_torchtally

EAGER, COMPILED = "torchtally eager", "torchtally compile_update"
TORCHMETRICS, TORCHEVAL = "TorchMetrics MetricCollection", "torcheval (six metrics)"


def six_torcheval(classes: int = CLASSES) -> list[Any]:
    import torcheval.metrics as te

    return [
        te.MulticlassAccuracy(),
        te.MulticlassPrecision(num_classes=classes, average="macro"),
        te.MulticlassF1Score(num_classes=classes, average="macro"),
        te.MulticlassAccuracy(k=3),
        te.MulticlassBinnedAUROC(num_classes=classes, threshold=128),
        te.MulticlassConfusionMatrix(classes),
    ]


def measure(batch: int, rounds: int, inner: int) -> dict[str, Any]:
    g = torch.Generator().manual_seed(batch)
    labels = torch.randint(0, CLASSES, (batch,), generator=g)
    scores = torch.randn(batch, CLASSES, generator=g).softmax(-1)
    eager, compiled = six_torchtally(), six_torchtally().compile_update()
    start = time.perf_counter()
    compiled.update(labels, scores)
    compile_s = time.perf_counter() - start
    peers, separate = six_torchmetrics(), six_torcheval()

    def torcheval_update() -> None:
        for metric in separate:
            metric.update(scores, labels)

    def torcheval_reset() -> None:
        for metric in separate:
            metric.reset()

    contenders: dict[str, Callable[[], object]] = {
        EAGER: lambda: eager.update(labels, scores),
        COMPILED: lambda: compiled.update(labels, scores),
        TORCHMETRICS: lambda: peers.update(scores, labels),
        TORCHEVAL: torcheval_update,
    }
    timings = interleaved(
        contenders,
        rounds=rounds,
        inner=inner,
        prepare={
            EAGER: eager.reset,
            COMPILED: compiled.reset,
            TORCHMETRICS: peers.reset,
            TORCHEVAL: torcheval_reset,
        },
        clock=time.thread_time,
    )
    # The compiled update must be the eager one: same values after the same batches.
    for collection in (eager, compiled):
        collection.reset()
        collection.update(labels, scores)
    want, got = eager.compute(), compiled.compute()
    for key in want:
        torch.testing.assert_close(torch.as_tensor(got[key]), torch.as_tensor(want[key]))

    us = {name: t.median_us for name, t in timings.items()}
    saving_s = (us[EAGER] - us[COMPILED]) * 1e-6
    row: dict[str, Any] = {"batch": batch, "classes": CLASSES}
    row.update({f"{name} µs": round(value, 1) for name, value in us.items()})
    row["compiled / eager"] = round(paired_ratio(timings[COMPILED], timings[EAGER])[1], 2)
    row["compiled / TorchMetrics"] = round(
        paired_ratio(timings[COMPILED], timings[TORCHMETRICS])[1], 2
    )
    row["compiled / torcheval"] = round(paired_ratio(timings[COMPILED], timings[TORCHEVAL])[1], 2)
    row["eager / TorchMetrics"] = round(paired_ratio(timings[EAGER], timings[TORCHMETRICS])[1], 2)
    row["eager / torcheval"] = round(paired_ratio(timings[EAGER], timings[TORCHEVAL])[1], 2)
    row["first call s"] = round(compile_s, 2)
    row["break-even calls"] = math.ceil(compile_s / saving_s) if saving_s > 0 else "never"
    row["updates per collection update"] = len(eager.groups)
    return row


def four_regression() -> tt.MetricCollection:
    return tt.MetricCollection(
        [tt.MSEMetric(), tt.MAEMetric(), tt.SMAPEMetric(), tt.R2ScoreMetric()]
    )


def measure_regression(batch: int, rounds: int, inner: int) -> dict[str, Any]:
    """Four cheap regression metrics: one compiled collection against four metrics compiled
    one by one (`Metric.compile_update`), against eager and TorchMetrics' collection."""
    import torchmetrics
    import torchmetrics.regression as tr

    g = torch.Generator().manual_seed(batch)
    labels = torch.randn(batch, generator=g)
    predictions = labels + 0.3 * torch.randn(batch, generator=g)
    eager, compiled = four_regression(), four_regression().compile_update()
    singles = [metric.compile_update() for metric in four_regression().values()]
    peers = torchmetrics.MetricCollection(
        [
            tr.MeanSquaredError(),
            tr.MeanAbsoluteError(),
            tr.SymmetricMeanAbsolutePercentageError(),
            tr.R2Score(),
        ]
    )
    start = time.perf_counter()
    compiled.update(labels, predictions)
    compile_s = time.perf_counter() - start

    def each_compiled() -> None:
        for metric in singles:
            metric.update(labels, predictions)

    each_compiled()
    timings = interleaved(
        {
            EAGER: lambda: eager.update(labels, predictions),
            COMPILED: lambda: compiled.update(labels, predictions),
            "four metrics each compile_update": each_compiled,
            TORCHMETRICS: lambda: peers.update(predictions, labels),
        },
        rounds=rounds,
        inner=inner,
        clock=time.thread_time,
    )
    us = {name: t.median_us for name, t in timings.items()}
    row: dict[str, Any] = {"collection": "MSE+MAE+SMAPE+R2", "batch": batch}
    row.update({f"{name} µs": round(value, 1) for name, value in us.items()})
    row["compiled / eager"] = round(paired_ratio(timings[COMPILED], timings[EAGER])[1], 2)
    row["compiled / each compiled"] = round(
        paired_ratio(timings[COMPILED], timings["four metrics each compile_update"])[1], 2
    )
    row["compiled / TorchMetrics"] = round(
        paired_ratio(timings[COMPILED], timings[TORCHMETRICS])[1], 2
    )
    row["first call s"] = round(compile_s, 2)
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--inner", type=int, default=10)
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 1024, 16384])
    parser.add_argument(
        "--compile-cache", action="store_true", help="keep torch's compile caches on"
    )
    args = parser.parse_args(argv)
    if not args.compile_cache:
        # Every first call a cold compile, as a user's first run.
        import torch._functorch.config
        import torch._inductor.config

        torch._inductor.config.fx_graph_cache = False
        torch._functorch.config.enable_autograd_cache = False
    torch.set_num_threads(1)  # fair to every contender and stable on a shared machine
    # Dynamo and inductor imported and warmed on a throwaway collection, so that the first
    # row's compile time is the compile, not the import.
    six_torchtally().compile_update().update(torch.tensor([0, 1]), torch.eye(CLASSES)[:2])
    rows = [measure(batch, args.rounds, args.inner) for batch in args.batches]
    rows.append(measure_regression(min(args.batches), args.rounds, args.inner))
    for row in rows:
        print(json.dumps(row))
    return rows


if __name__ == "__main__":
    main()
