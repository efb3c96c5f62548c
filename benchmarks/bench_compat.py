"""A TorchMetrics validation step, unchanged but for the import: TorchMetrics 1.9 against
`torchtally.compat.torchmetrics`, eager and under `torch.compile(fullgraph=True)`.

Each contender updates a `MetricCollection` ("stat scores": accuracy, macro F1, weighted
precision, confusion matrix, Cohen's kappa; "full": also binned AUROC with 100 thresholds and
calibration error) with one batch of logits, or calls
`forward` (the batch values, which TorchMetrics computes with a second update on a fresh state).
Contenders run round-robin; the collections are reset between samples, untimed.

    python -m benchmarks.bench_compat [--rounds N] [--batch B]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
import torchmetrics as tm

from benchmarks._timing import interleaved
from torchtally.compat import torchmetrics as ttm

CLASSES = 10


def _collection(module: Any, suite: str) -> Any:
    task = {"task": "multiclass", "num_classes": CLASSES}
    metrics = {
        "acc": module.Accuracy(**task),
        "f1": module.F1Score(**task, average="macro"),
        "precision": module.Precision(**task, average="weighted"),
        "confmat": module.ConfusionMatrix(**task),
        "kappa": module.CohenKappa(**task),
    }
    if suite == "full":
        metrics["auroc"] = module.AUROC(**task, thresholds=100)
        metrics["ece"] = module.CalibrationError(**task)
    return module.MetricCollection(metrics)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    rows = []
    for suite in ("stat scores", "full"):
        rows += _suite(suite, args.rounds, args.batch)
    return rows


def _suite(suite: str, rounds: int, batch: int) -> list[dict[str, Any]]:
    torch.manual_seed(0)
    logits = torch.randn(batch, CLASSES)
    target = torch.randint(0, CLASSES, (batch,))
    kind_of = "full" if suite == "full" else "stat"
    theirs, ours_eager = _collection(tm, kind_of), _collection(ttm, kind_of)
    ours_compiled = _collection(ttm, kind_of)

    def compiled_update(preds: torch.Tensor, labels: torch.Tensor) -> None:
        ours_compiled.update(preds, labels)

    step = torch.compile(compiled_update, fullgraph=True)
    rows = []
    for kind in ("update", "forward"):
        if kind == "update":
            contenders = {
                "TorchMetrics eager": lambda: theirs.update(logits, target),
                "compat eager": lambda: ours_eager.update(logits, target),
                "compat compiled": lambda: step(logits, target),
            }
        else:
            contenders = {
                "TorchMetrics eager": lambda: theirs(logits, target),
                "compat eager": lambda: ours_eager(logits, target),
            }
        resets = {
            "TorchMetrics eager": theirs.reset,
            "compat eager": ours_eager.reset,
            "compat compiled": ours_compiled.reset,
        }
        timings = interleaved(contenders, rounds=rounds, inner=5, warmup=3, prepare=resets)
        reference = timings["TorchMetrics eager"].median_us
        for name, timing in timings.items():
            row = {
                "collection": suite,
                "call": kind,
                "contender": name,
                "batch": batch,
                "median_us": round(timing.median_us, 1),
                "vs TorchMetrics": round(timing.median_us / reference, 3),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
