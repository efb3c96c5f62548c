"""Metrics inside a compiled training step (issues 16, 26): an MLP and a CNN step with six
torchtally metrics in a collection, and with five separate metrics (no collection: no shared
statistic), updated inside `torch.compile(fullgraph=True)` against the same step with no
metrics, interleaved in one process, with the graphs compiled and the recompiles after warmup
counted (target: overhead <= 3% of the bare step, one graph per step variant, no recompiles).
TorchMetrics updated eagerly after the step (it cannot be compiled) is shown for reference.

    python -m benchmarks.bench_step_overhead [--quick] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import torch
import torchmetrics
import torchmetrics.classification as tm
from torch import Tensor, nn

import torchtally.metrics as tt
from benchmarks._timing import interleaved, paired_ratio

CLASSES = 10


def mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, CLASSES)
    )


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(4),
        nn.Flatten(),
        nn.Linear(32 * 16, CLASSES),
    )


def six_torchtally() -> tt.MetricCollection:
    return tt.MetricCollection(
        {
            "accuracy": tt.AccuracyMetric(),
            "precision": tt.PrecisionMetric(CLASSES, average_type="macro"),
            "f1": tt.F1ScoreMetric(CLASSES, average_type="macro"),
            "top3": tt.TopKAccuracyMetric(3),
            "auroc": tt.AUROCMetric(CLASSES, num_bins=128),
            "confusion": tt.ConfusionMatrixMetric(CLASSES),
        }
    )


def five_separate() -> list[tt.Metric]:
    """Five metrics updated one by one: each keeps and updates its own state (in a
    collection, accuracy, precision and F1 read one confusion statistic)."""
    return [
        tt.AccuracyMetric(),
        tt.F1ScoreMetric(CLASSES, average_type="macro"),
        tt.TopKAccuracyMetric(3),
        tt.AUROCMetric(CLASSES, num_bins=128),
        tt.ConfusionMatrixMetric(CLASSES),
    ]


def six_torchmetrics() -> torchmetrics.MetricCollection:
    return torchmetrics.MetricCollection(
        {
            "accuracy": tm.MulticlassAccuracy(CLASSES, average="micro"),
            "precision": tm.MulticlassPrecision(CLASSES, average="macro"),
            "f1": tm.MulticlassF1Score(CLASSES, average="macro"),
            "top3": tm.MulticlassAccuracy(CLASSES, top_k=3, average="micro"),
            "auroc": tm.MulticlassAUROC(CLASSES, thresholds=128),
            "confusion": tm.MulticlassConfusionMatrix(CLASSES),
        }
    )


class GraphCounter:
    """A torch.compile backend that counts the graphs it is handed, then runs inductor; with
    `guard_filter`, it also counts the guards Dynamo installs (every one kept)."""

    def __init__(self) -> None:
        self.graphs = 0
        self.guards = 0

    def guard_filter(self, entries: list[Any]) -> list[bool]:
        # One entry per guard Dynamo built for the frame (before it merges repeats into the
        # guard tree): a count that does not depend on timing, for tracking what the traced
        # update reads.
        self.guards = len(entries)
        return [True] * len(entries)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Tensor]) -> Any:
        from torch._inductor.compile_fx import compile_fx

        self.graphs += 1
        return compile_fx(gm, example_inputs)


def make_step(
    model_factory: Callable[[], nn.Module], kind: str, counter: GraphCounter
) -> Callable[[Tensor, Tensor], None]:
    torch.manual_seed(0)
    model = model_factory()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    metrics: Any = {
        "torchtally": six_torchtally,
        "five separate": five_separate,
    }.get(kind, six_torchmetrics)()

    def forward(inputs: Tensor, labels: Tensor) -> Tensor:
        logits = model(inputs)
        if kind == "torchtally":
            metrics.update(labels, torch.softmax(logits.detach(), -1))
        elif kind == "five separate":
            probabilities = torch.softmax(logits.detach(), -1)
            for metric in metrics:
                metric.update(labels, probabilities)
        return nn.functional.cross_entropy(logits, labels)

    compiled = torch.compile(
        forward, backend=counter, fullgraph=True, options={"guard_filter_fn": counter.guard_filter}
    )

    def step(inputs: Tensor, labels: Tensor) -> None:
        loss = compiled(inputs, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        if kind == "TorchMetrics":
            with torch.no_grad():
                metrics.update(torch.softmax(model(inputs), -1), labels)

    return step


def metrics_alone(counter: GraphCounter) -> Callable[[Tensor, Tensor], None]:
    """The six metrics' update on their own, compiled: the work they add to a step, measured
    without the step around it (a difference of two step times is noisier than the work)."""
    metrics = six_torchtally()

    def update(logits: Tensor, labels: Tensor) -> None:
        metrics.update(labels, torch.softmax(logits, -1))

    return torch.compile(update, backend=counter, fullgraph=True)


def guard_evaluation_us(call: Callable[[], object], steps: int = 20) -> float:
    """Mean µs per step that Dynamo spends checking the compiled step's guards (the profiler's
    "TorchDynamo Cache Lookup"), profiled apart from the timed rounds: the part of a step's
    cost that grows with the Python objects the traced code read (a metric's attributes,
    state dicts and functions), paid before the graph runs and with caches cold from the
    previous step's backward and optimizer."""
    from torch.profiler import profile

    with profile() as prof:
        for _ in range(steps):
            call()
    lookups = [e for e in prof.key_averages() if e.key == "TorchDynamo Cache Lookup"]
    return round(lookups[0].cpu_time_total / lookups[0].count, 1) if lookups else float("nan")


def measure(name: str, factory: Callable[[], nn.Module], inputs: Tensor, rounds: int) -> dict:
    labels = torch.randint(
        0, CLASSES, (inputs.shape[0],), generator=torch.Generator().manual_seed(1)
    )
    logits = torch.randn(inputs.shape[0], CLASSES, generator=torch.Generator().manual_seed(2))
    kinds = ("bare step", "torchtally", "five separate", "TorchMetrics", "metrics alone")
    counters = {kind: GraphCounter() for kind in kinds}
    steps = {kind: make_step(factory, kind, counters[kind]) for kind in kinds[:4]}
    alone = metrics_alone(counters["metrics alone"])
    calls: dict[str, Callable[[], object]] = {
        kind: (lambda s=s: s(inputs, labels)) for kind, s in steps.items()
    }
    calls["metrics alone"] = lambda: alone(logits, labels)
    for call in calls.values():  # compile outside the clock
        call()
    after_warmup = {kind: c.graphs for kind, c in counters.items()}
    timings = interleaved(
        calls,
        rounds=rounds,
        inner=5,
        warmup=2,
        clock=time.thread_time,  # CPU time: stable on a loaded machine (one intra-op thread)
    )
    base = timings["bare step"].median_s
    q1, paired, q3 = paired_ratio(timings["torchtally"], timings["bare step"])
    s1, separate, s3 = paired_ratio(timings["five separate"], timings["bare step"])
    guards = {
        kind: guard_evaluation_us(calls[kind])
        for kind in ("bare step", "torchtally", "five separate")
    }
    row = {
        "model": name,
        "batch": inputs.shape[0],
        "bare step ms": round(base * 1e3, 3),
        "torchtally step ms": round(timings["torchtally"].median_s * 1e3, 3),
        "TorchMetrics step ms": round(timings["TorchMetrics"].median_s * 1e3, 3),
        "torchtally overhead %": round((timings["torchtally"].median_s / base - 1) * 100, 2),
        "TorchMetrics overhead %": round((timings["TorchMetrics"].median_s / base - 1) * 100, 2),
        "torchtally overhead % (paired rounds, median)": round((paired - 1) * 100, 2),
        "torchtally overhead % (paired rounds, IQR)": (
            f"{(q1 - 1) * 100:.2f} .. {(q3 - 1) * 100:.2f}"
        ),
        "five separate step ms": round(timings["five separate"].median_s * 1e3, 3),
        "five separate overhead % (paired rounds, median)": round((separate - 1) * 100, 2),
        "five separate overhead % (paired rounds, IQR)": (
            f"{(s1 - 1) * 100:.2f} .. {(s3 - 1) * 100:.2f}"
        ),
        "guard evaluation µs (bare step)": guards["bare step"],
        "guard evaluation µs (torchtally step)": guards["torchtally"],
        "guard evaluation µs (five separate step)": guards["five separate"],
        "metrics alone ms": round(timings["metrics alone"].median_s * 1e3, 3),
        "metrics alone % of bare step": round(timings["metrics alone"].median_s / base * 100, 2),
        "guards built (bare / collection / five separate step)": " / ".join(
            str(counters[kind].guards) for kind in ("bare step", "torchtally", "five separate")
        ),
        "graphs (torchtally step)": after_warmup["torchtally"],
        "graphs (five separate step)": after_warmup["five separate"],
        "recompiles after warmup": sum(c.graphs - after_warmup[k] for k, c in counters.items()),
        "rounds": rounds,
    }
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rounds = args.rounds or (5 if args.quick else 21)
    g = torch.Generator().manual_seed(0)
    rows = [
        measure("MLP", mlp, torch.randn(args.batch, 256, generator=g), rounds),
        measure("CNN", cnn, torch.randn(args.batch // 4, 3, 32, 32, generator=g), rounds),
    ]
    return rows


if __name__ == "__main__":
    main()
