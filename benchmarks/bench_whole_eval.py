"""Whole evaluations on the CPU grid (issue 26): per case, each contender's `reset`, `UPDATES`
updates of one batch and `compute`, timed together, contenders interleaved round-robin.

The per-update grid (`bench_eager_grid`) times updates, with held batches applied inside the
window; this one times what a user waits for at the end of an evaluation loop: every update,
the held batches, the compute and its host reads, and the reset before the next evaluation.
Same cases and inputs as the grid (its `contenders`); raw torch is left out (it has no
compute worth the name). Times are this thread's CPU time, one intra-op thread.

    python -m benchmarks.bench_whole_eval [--quick] [--rounds R] [--only FAMILY ...]
        [--updates N]

Prints one JSON row per case and a summary: geomean of torchtally / best peer (the fewer
milliseconds of TorchMetrics and torcheval), the worst case and the cases above 1.2x.
"""

from __future__ import annotations

import argparse
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


def updates_for(n: int, classes: int, wanted: int) -> int:
    return max(5, min(wanted, MAX_STREAMED // (n * max(classes, 2))))


def measure(family: str, n: int, classes: int, rounds: int, wanted: int) -> dict[str, Any]:
    updates = updates_for(n, classes, wanted)
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


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 64/1024, classes 10/100")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", nargs="+", choices=grid.FAMILIES)
    parser.add_argument("--updates", type=int, default=UPDATES)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # fair to every contender and stable on a shared machine
    rounds = args.rounds or (5 if args.quick else 7)
    rows = []
    for family, n, classes in grid.cases(args.quick, args.only):
        row = measure(family, n, classes, rounds, args.updates)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if rows:
        print(json.dumps(summarize(rows)), flush=True)
    return rows


if __name__ == "__main__":
    main()
