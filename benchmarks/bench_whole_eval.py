"""Whole evaluations on the CPU grid (issue 26): per case, each contender's `reset`, `UPDATES`
updates and `compute`, timed together, contenders interleaved round-robin.

The per-update grid (`bench_eager_grid`) times updates, with held batches applied inside the
window; this one times what a user waits for at the end of an evaluation loop: every update,
the held batches, the compute and its host reads, and the reset before the next evaluation.
Same cases and inputs as the grid (its `contenders`); raw torch is left out (it has no
compute worth the name). Times are this thread's CPU time, one intra-op thread.

    python -m benchmarks.bench_whole_eval [--quick] [--rounds R] [--only FAMILY ...]
        [--updates N] [--repeated] [--distinct] [--max-batch N] [--all]

Every family but exact AUROC updates with one batch, repeated: their work per update does not
depend on the values. Exact AUROC's compute sorts every stored score, and a comparison sort
(the peers') runs several times faster over one batch repeated (the same run of keys, over
and over) than over the distinct scores of a real evaluation set, where torchtally's radix
sort takes the same time either way; so the exact-AUROC families go through `updates`
distinct batches (drawn alike, the same list for every contender). `--repeated` times them
over the one repeated batch too; `--distinct` runs the exact-AUROC families alone.

`SKIPPED` cases are left out unless `--all`: there a peer's compute takes minutes, or asks for
more memory than the machine has.

Prints one JSON row per case and a summary: geomean of torchtally / best peer (the fewer
milliseconds of TorchMetrics and torcheval), the worst case and the cases above 1.2x.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from collections.abc import Callable
from typing import Any

import torch

from benchmarks import bench_eager_grid as grid
from benchmarks._timing import interleaved

#: Updates per evaluation.
UPDATES = 200
#: Most elements one evaluation streams through (batch x classes x updates): keeps the
#: largest cases to about a second per contender and round on this machine; past it a case
#: runs fewer updates (the row says how many).
MAX_STREAMED = 1 << 27


#: Cases a peer cannot finish on this machine within a run: (family, batch, classes) -> why.
SKIPPED = {
    ("multiclass AUROC", 16384, 100): "the peers' per-class compute takes minutes",
    ("multiclass AUROC", 262144, 10): "the peers' per-class compute takes minutes",
    ("binned AUROC", 262144, 1): "torcheval's compute asks for 84 GB",
}


def updates_for(n: int, classes: int, wanted: int) -> int:
    return max(5, min(wanted, MAX_STREAMED // (n * max(classes, 2))))


def distinct_contenders(
    family: str, n: int, classes: int, updates: int
) -> dict[str, grid.Contender]:
    """torchtally, TorchMetrics and torcheval for an exact-AUROC family, each updated with the
    same `updates` distinct batches in turn (one evaluation goes through them all once)."""
    import torcheval.metrics as te
    import torchmetrics.classification as tm

    import torchtally.metrics as tt

    if family not in grid.CAT_FAMILIES:
        raise ValueError(
            f"Argument `family` must be one of {sorted(grid.CAT_FAMILIES)} with distinct "
            f"batches. Received: family={family!r}"
        )
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, max(classes, 2), (updates, n), generator=g)
    scores = torch.randn(updates, n, max(classes, 2), generator=g)
    if family == "binary AUROC":
        labels, probs = labels % 2, torch.sigmoid(scores[..., 0])
        metrics: dict[str, Any] = {
            "torchtally": tt.AUROCMetric(capacity=n * updates),
            "TorchMetrics": tm.BinaryAUROC(),
            "torcheval": te.BinaryAUROC(),
        }
    else:
        probs = scores.softmax(-1)
        metrics = {
            "torchtally": tt.AUROCMetric(classes, capacity=n * updates),
            "TorchMetrics": tm.MulticlassAUROC(classes),
            "torcheval": te.MulticlassAUROC(num_classes=classes),
        }
    batches = [(labels[i], probs[i]) for i in range(updates)]

    def contender(name: str, metric: Any) -> grid.Contender:
        # torchtally takes (labels, scores), the peers (scores, labels); the next batch per call
        ordered = batches if name == "torchtally" else [(p, y) for y, p in batches]
        position = itertools.cycle(ordered)
        return grid.Contender(lambda: metric.update(*next(position)), metric.reset, metric.compute)

    return {name: contender(name, metric) for name, metric in metrics.items()}


def measure(
    family: str, n: int, classes: int, rounds: int, wanted: int, distinct: bool = False
) -> dict[str, Any]:
    updates = updates_for(n, classes, wanted)
    if distinct:
        group = distinct_contenders(family, n, classes, updates)
    else:
        group = grid.contenders(family, n, classes, capacity=n * updates)
    for floor in ("raw torch", "raw copy"):
        group.pop(floor, None)

    def evaluation(contender: grid.Contender) -> Callable[[], object]:
        def run() -> object:
            contender.reset()
            for _ in range(updates):
                contender.update()
            assert contender.compute is not None
            return contender.compute()

        return run

    timings = interleaved(
        {name: evaluation(c) for name, c in group.items()},
        rounds=rounds,
        warmup=1,
        clock=time.thread_time,
    )
    ms = {name: t.median_s * 1e3 for name, t in timings.items()}
    best = min(ms["TorchMetrics"], ms["torcheval"])
    row: dict[str, Any] = {"metric": family, "batch": n, "classes": classes, "updates": updates}
    if distinct:
        row["batches"] = "distinct"
    row.update({f"{name} ms": round(value, 3) for name, value in ms.items()})
    row["tt / best peer"] = float(f"{ms['torchtally'] / best:.3g}")
    return row


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ratios = [r["tt / best peer"] for r in rows]
    worst = max(rows, key=lambda r: r["tt / best peer"])
    return {
        "summary": "whole evaluations",
        "cases": len(rows),
        "geomean tt / best peer": round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3),
        "worst tt / best peer": worst["tt / best peer"],
        "worst case": f"{worst['metric']} n={worst['batch']} C={worst['classes']}",
        "cases > 1.2x best peer": sum(r > 1.2 for r in ratios),
    }


def plan(
    quick: bool,
    only: list[str] | None,
    max_batch: int | None = None,
    repeated: bool = False,
    run_skipped: bool = False,
) -> tuple[list[tuple[str, int, int, bool]], list[str]]:
    """The cases to run, as (family, batch, classes, over distinct batches), and the skipped
    ones with why."""
    planned, skipped = [], []
    for family, n, classes in grid.cases(quick, only):
        if max_batch is not None and n > max_batch:
            continue
        if (family, n, classes) in SKIPPED and not run_skipped:
            skipped.append(f"{family} n={n} C={classes}: {SKIPPED[family, n, classes]}")
            continue
        planned.append((family, n, classes, family in grid.CAT_FAMILIES and not repeated))
    return planned, skipped


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 64/1024, classes 10/100")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", nargs="+", choices=grid.FAMILIES)
    parser.add_argument("--updates", type=int, default=UPDATES)
    parser.add_argument(
        "--repeated",
        action="store_true",
        help="exact-AUROC families over one batch repeated, as every other family",
    )
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="the exact-AUROC families alone (over distinct batches unless --repeated)",
    )
    parser.add_argument("--max-batch", type=int, default=None, help="skip larger batches")
    parser.add_argument("--all", action="store_true", help="run the SKIPPED cases too")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # fair to every contender and stable on a shared machine
    rounds = args.rounds or (5 if args.quick else 7)
    only = args.only or (sorted(grid.CAT_FAMILIES) if args.distinct else None)
    planned, skipped = plan(args.quick, only, args.max_batch, args.repeated, args.all)
    rows = []
    for family, n, classes, distinct in planned:
        row = measure(family, n, classes, rounds, args.updates, distinct=distinct)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if rows:
        summary = summarize(rows)
        if skipped:
            summary["skipped"] = skipped
        print(json.dumps(summary), flush=True)
    return rows


if __name__ == "__main__":
    main()
