"""Distributed sync of a collection on 2 and 4 gloo processes: collectives issued and time,
torchtally vs TorchMetrics vs torcheval (issue 7, case 6).

Each rank holds an equal shard; every library syncs Accuracy + Precision + Recall + F1 +
ConfusionMatrix (+ exact binary AUROC) and computes. Collectives are counted by wrapping the
`torch.distributed` calls (and the functional collectives torchtally uses) in each rank.

    python -m benchmarks.bench_distributed [--worlds 2 4] [--repeats 7]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections import Counter
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

CLASSES, SHARD = 10, 4096
_COUNTED = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "broadcast",
    "broadcast_object_list",
    "gather",
    "gather_object",
    "reduce",
    "reduce_scatter",
    "all_to_all",
    "barrier",
)


def _count_collectives(counter: Counter) -> None:
    for module, names in ((dist, _COUNTED), (funcol, ("all_reduce", "all_gather_tensor"))):
        for name in names:
            original = getattr(module, name, None)
            if original is None:
                continue

            def wrapped(*args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
                counter[_name] += 1
                return _original(*args, **kw)

            setattr(module, name, functools.wraps(original)(wrapped))


def _libraries(auroc_capacity: int) -> dict[str, Any]:
    import torcheval.metrics as te
    import torchmetrics
    import torchmetrics.classification as tm

    import torchtally.metrics as tt

    return {
        "torchtally": tt.MetricCollection(
            {
                "accuracy": tt.AccuracyMetric(),
                "precision": tt.PrecisionMetric(CLASSES, average_type="macro"),
                "recall": tt.RecallMetric(CLASSES, average_type="macro"),
                "f1": tt.F1ScoreMetric(CLASSES, average_type="macro"),
                "confusion": tt.ConfusionMatrixMetric(CLASSES),
            }
        ),
        "torchtally_auroc": tt.AUROCMetric(capacity=auroc_capacity),
        "TorchMetrics": torchmetrics.MetricCollection(
            {
                "accuracy": tm.MulticlassAccuracy(CLASSES, average="micro"),
                "precision": tm.MulticlassPrecision(CLASSES, average="macro"),
                "recall": tm.MulticlassRecall(CLASSES, average="macro"),
                "f1": tm.MulticlassF1Score(CLASSES, average="macro"),
                "confusion": tm.MulticlassConfusionMatrix(CLASSES),
            }
        ),
        "TorchMetrics_auroc": tm.BinaryAUROC(),
        "torcheval": {
            "accuracy": te.MulticlassAccuracy(),
            "precision": te.MulticlassPrecision(num_classes=CLASSES, average="macro"),
            "recall": te.MulticlassRecall(num_classes=CLASSES, average="macro"),
            "f1": te.MulticlassF1Score(num_classes=CLASSES, average="macro"),
            "confusion": te.MulticlassConfusionMatrix(CLASSES),
        },
        "torcheval_auroc": te.BinaryAUROC(),
    }


def rank_main(rank: int, world: int, repeats: int) -> dict[str, Any]:
    from torcheval.metrics.toolkit import sync_and_compute, sync_and_compute_collection

    g = torch.Generator().manual_seed(rank)
    labels = torch.randint(0, CLASSES, (SHARD,), generator=g)
    scores = torch.randn(SHARD, CLASSES, generator=g)
    binary, probability = labels % 2, torch.rand(SHARD, generator=g)
    counter: Counter = Counter()
    _count_collectives(counter)
    out: dict[str, Any] = {}
    for library in ("torchtally", "TorchMetrics", "torcheval"):
        times, counts = [], []
        for _ in range(repeats):
            libs = _libraries(SHARD * world)
            main, auroc = libs[library], libs[f"{library}_auroc"]
            if library == "torchtally":
                main.update(labels, scores)
                auroc.update(binary, probability)
                run = lambda m=main, a=auroc: (m.compute(), a.compute())  # noqa: E731
            elif library == "TorchMetrics":
                main.update(scores, labels)
                auroc.update(probability, binary)
                run = lambda m=main, a=auroc: (m.compute(), a.compute())  # noqa: E731
            else:
                for metric in main.values():
                    metric.update(scores, labels)
                auroc.update(probability, binary)
                run = lambda m=main, a=auroc: (  # noqa: E731
                    sync_and_compute_collection(m),
                    sync_and_compute(a),
                )
            dist.barrier()
            counter.clear()
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
            counts.append(sum(v for k, v in counter.items() if k != "barrier"))
        out[library] = {"median_ms": statistics.median(times) * 1e3, "collectives": counts[-1]}
    return out


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    from torchtally.distributed import run_local_ranks

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worlds", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    rows = []
    for world in args.worlds:
        per_rank = run_local_ranks(rank_main, world, args.repeats, timeout=600)
        for library in ("torchtally", "TorchMetrics", "torcheval"):
            row = {
                "world": world,
                "library": library,
                "collectives per sync (rank 0)": per_rank[0][library]["collectives"],
                "sync+compute ms (median over ranks)": round(
                    statistics.median(r[library]["median_ms"] for r in per_rank), 2
                ),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
