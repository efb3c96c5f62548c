"""The `torch.compile(fullgraph=True)` matrix: for every metric that torchtally, TorchMetrics and
torcheval share, does `update` compile to one graph, stay one graph over 20 calls with new data,
hide host syncs as unbacked symbols, and match eager? Plus the compiled update time.

    python -m benchmarks.bench_compile [--calls 20] [--backend inductor]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo as dynamo
import torcheval.metrics as te
import torchmetrics.classification as tm
import torchmetrics.regression as tmr

import torchtally.metrics as tt
from benchmarks._timing import interleaved
from torchtally.testing import _GraphRecorder, _trampoline

CLASSES, BATCH = 10, 512
Inputs = Callable[[torch.Generator], tuple[torch.Tensor, torch.Tensor]]


def _classification(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, CLASSES, (BATCH,), generator=g), torch.randn(
        BATCH, CLASSES, generator=g
    )


def _binary(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, 2, (BATCH,), generator=g), torch.rand(BATCH, generator=g)


def _regression(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    y = torch.randn(BATCH, generator=g)
    return y, y + torch.randn(BATCH, generator=g)


# name -> (inputs, {library: (factory, argument order)}); "lt" = labels first, "pt" = preds first
MATRIX: dict[str, tuple[Inputs, dict[str, tuple[Callable[[], Any], str]]]] = {
    "accuracy": (
        _classification,
        {
            "torchtally": (tt.AccuracyMetric, "lt"),
            "TorchMetrics": (lambda: tm.MulticlassAccuracy(CLASSES, average="micro"), "pt"),
            "torcheval": (te.MulticlassAccuracy, "pt"),
        },
    ),
    "macro-F1": (
        _classification,
        {
            "torchtally": (lambda: tt.F1ScoreMetric(CLASSES, average_type="macro"), "lt"),
            "TorchMetrics": (lambda: tm.MulticlassF1Score(CLASSES, average="macro"), "pt"),
            "torcheval": (lambda: te.MulticlassF1Score(num_classes=CLASSES, average="macro"), "pt"),
        },
    ),
    "macro-precision": (
        _classification,
        {
            "torchtally": (lambda: tt.PrecisionMetric(CLASSES, average_type="macro"), "lt"),
            "TorchMetrics": (lambda: tm.MulticlassPrecision(CLASSES, average="macro"), "pt"),
            "torcheval": (
                lambda: te.MulticlassPrecision(num_classes=CLASSES, average="macro"),
                "pt",
            ),
        },
    ),
    "macro-recall": (
        _classification,
        {
            "torchtally": (lambda: tt.RecallMetric(CLASSES, average_type="macro"), "lt"),
            "TorchMetrics": (lambda: tm.MulticlassRecall(CLASSES, average="macro"), "pt"),
            "torcheval": (lambda: te.MulticlassRecall(num_classes=CLASSES, average="macro"), "pt"),
        },
    ),
    "confusion matrix": (
        _classification,
        {
            "torchtally": (lambda: tt.ConfusionMatrixMetric(CLASSES), "lt"),
            "TorchMetrics": (lambda: tm.MulticlassConfusionMatrix(CLASSES), "pt"),
            "torcheval": (lambda: te.MulticlassConfusionMatrix(CLASSES), "pt"),
        },
    ),
    "binary AUROC": (
        _binary,
        {
            "torchtally": (lambda: tt.AUROCMetric(capacity=BATCH * 64), "lt"),
            "TorchMetrics": (tm.BinaryAUROC, "pt"),
            "torcheval": (te.BinaryAUROC, "pt"),
        },
    ),
    "R2": (
        _regression,
        {
            "torchtally": (tt.R2ScoreMetric, "lt"),
            "TorchMetrics": (tmr.R2Score, "pt"),
            "torcheval": (te.R2Score, "pt"),
        },
    ),
    "MSE": (
        _regression,
        {
            "torchtally": (tt.MSEMetric, "lt"),
            "TorchMetrics": (tmr.MeanSquaredError, "pt"),
            "torcheval": (te.MeanSquaredError, "pt"),
        },
    ),
}


def _ordered(order: str, labels: torch.Tensor, predictions: torch.Tensor) -> tuple:
    return (labels, predictions) if order == "lt" else (predictions, labels)


def _same(a: Any, b: Any) -> bool:
    try:
        torch.testing.assert_close(
            torch.as_tensor(a).double(),
            torch.as_tensor(b).double(),
            equal_nan=True,
            rtol=1e-5,
            atol=1e-6,
        )
        return True
    except AssertionError:
        return False


def check(make: Callable[[], Any], order: str, inputs: Inputs, calls: int, backend: str) -> dict:
    """One library's metric through the matrix; never raises (failures are the result)."""
    dynamo.reset()
    eager, compiled = make(), make()
    recorder = _GraphRecorder(backend)
    step = torch.compile(_trampoline(compiled.update), backend=recorder, fullgraph=True)
    g = torch.Generator().manual_seed(0)
    row: dict[str, Any] = {}
    try:
        first_graphs = None
        for call in range(calls):
            batch = _ordered(order, *inputs(g))
            eager.update(*batch)
            step(*batch)
            if call == 0:
                first_graphs = recorder.graphs
        row["one graph"] = first_graphs == 1
        row[f"recompiles in {calls} calls"] = recorder.graphs - (first_graphs or 0)
        row["unbacked symbols"] = len(recorder.unbacked)
        row["matches eager"] = _same(compiled.compute(), eager.compute())
    except Exception as error:  # the failure is what we measure
        row["one graph"] = False
        row["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
        return row
    batch = _ordered(order, *inputs(torch.Generator().manual_seed(1)))
    try:
        timing = interleaved(
            {"c": lambda: step(*batch)}, rounds=15, inner=10, prepare={"c": compiled.reset}
        )
        row["compiled update µs"] = round(timing["c"].median_us, 1)
    except Exception as error:  # e.g. the recompile limit, hit by a per-call Python counter
        row["compiled update µs"] = f"failed: {type(error).__name__}"
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--backend", default="inductor")
    args = parser.parse_args(argv)
    rows = []
    for metric, (inputs, libraries) in MATRIX.items():
        for library, (make, order) in libraries.items():
            row = {"metric": metric, "library": library}
            row.update(check(make, order, inputs, args.calls, args.backend))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
