"""Catalog metrics against TorchMetrics, interleaved medians (issue 15):

* retrieval NDCG@10 on 8,000 queries x 40 candidates per step (update + compute): torchtally's
  grouped `(B, K)` form, its flat `(preds, target, indexes)` form, TorchMetrics'
  `RetrievalNormalizedDCG` (flat, a Python loop over queries at compute);
* bootstrap with 100 replicas (one update of 10,000 samples): torchtally's `BootStrapper`
  (one vmapped update; `MeanMetric` of correctness) vs TorchMetrics' `BootStrapper`
  (`MulticlassAccuracy`, Poisson sampling: 100 deep copies fed resampled batches);
* multiclass ECE (15 bins, 10 classes): an epoch of 20 updates of 10,000 samples + compute.

    python -m benchmarks.bench_catalog [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
import torchmetrics.classification as tmc
import torchmetrics.retrieval as tmr
from torchmetrics.wrappers import BootStrapper as TMBootStrapper

from benchmarks._timing import interleaved
from torchtally.metrics import MeanMetric
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.retrieval import RetrievalNDCGMetric
from torchtally.metrics.wrappers import BootStrapper


def _row(section: str, timings: dict[str, Any], baseline: str, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"section": section, **extra}
    row.update({f"{name} (ms)": round(t.median_s * 1e3, 2) for name, t in timings.items()})
    ours = [n for n in timings if n.startswith("torchtally")]
    for name in ours:
        row[f"{baseline} / {name}"] = round(timings[baseline].median_s / timings[name].median_s, 1)
    return row


def retrieval(queries: int, candidates: int, rounds: int) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    preds = torch.rand(queries, candidates, generator=g)
    target = (torch.rand(queries, candidates, generator=g) < 0.1).long()
    indexes = torch.arange(queries).repeat_interleave(candidates)
    flat_preds, flat_target = preds.reshape(-1), target.reshape(-1)
    grouped = RetrievalNDCGMetric(top_k=10)
    flat = RetrievalNDCGMetric(top_k=10, capacity=queries * candidates)
    theirs = tmr.RetrievalNormalizedDCG(top_k=10)

    def step(metric: Any, *args: Any) -> None:
        metric.reset()
        metric.update(*args)
        metric.compute()

    values = (
        float(grouped(preds, target)),
        float(flat(flat_preds, flat_target, indexes)),
        float(theirs(flat_preds, flat_target, indexes=indexes)),
    )
    assert abs(values[0] - values[2]) < 1e-5 and abs(values[1] - values[2]) < 1e-5, values
    timings = interleaved(
        {
            "torchtally grouped": lambda: step(grouped, preds, target),
            "torchtally flat": lambda: step(flat, flat_preds, flat_target, indexes),
            "TorchMetrics": lambda: step(theirs, flat_preds, flat_target, indexes),
        },
        rounds=rounds,
        warmup=1,
    )
    return _row(
        "retrieval NDCG@10", timings, "TorchMetrics", queries=queries, candidates=candidates
    )


def bootstrap(samples: int, replicas: int, rounds: int) -> dict[str, Any]:
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 10, (samples,), generator=g)
    scores = torch.randn(samples, 10, generator=g)
    scores[torch.arange(samples), labels] += 1.0
    correct = (scores.argmax(1) == labels).double()
    ours = BootStrapper(MeanMetric(), replicas, weight_arg="weight")
    theirs = TMBootStrapper(
        tmc.MulticlassAccuracy(10, average="micro"), replicas, sampling_strategy="poisson"
    )
    timings = interleaved(
        {
            "torchtally BootStrapper": lambda: ours.update(correct),
            "TorchMetrics BootStrapper": lambda: theirs.update(scores, labels),
        },
        rounds=rounds,
        prepare={"torchtally BootStrapper": ours.reset, "TorchMetrics BootStrapper": theirs.reset},
    )
    return _row(
        "bootstrap update", timings, "TorchMetrics BootStrapper", samples=samples, replicas=replicas
    )


def calibration(samples: int, steps: int, rounds: int) -> dict[str, Any]:
    g = torch.Generator().manual_seed(2)
    labels = torch.randint(0, 10, (samples,), generator=g)
    probabilities = torch.softmax(torch.randn(samples, 10, generator=g) * 2, 1)
    ours = CalibrationErrorMetric(10, n_bins=15)
    theirs = tmc.MulticlassCalibrationError(10, n_bins=15)

    def epoch_ours() -> None:
        ours.reset()
        for _ in range(steps):
            ours.update(probabilities, labels)
        ours.compute()

    def epoch_theirs() -> None:
        theirs.reset()
        for _ in range(steps):
            theirs.update(probabilities, labels)
        theirs.compute()

    timings = interleaved(
        {"torchtally ECE": epoch_ours, "TorchMetrics ECE": epoch_theirs}, rounds=rounds
    )
    return _row("ECE epoch", timings, "TorchMetrics ECE", samples=samples, steps=steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    if args.quick:
        rows = [retrieval(800, 40, 2), bootstrap(2000, 100, 3), calibration(2000, 5, 3)]
    else:
        rounds = args.rounds
        rows = [
            retrieval(8000, 40, max(3, rounds // 2)),
            bootstrap(10_000, 100, rounds),
            calibration(10_000, 20, rounds),
        ]
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
