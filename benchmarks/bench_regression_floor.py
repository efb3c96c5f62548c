"""Floors of the exact eager MSE / R² / mean update on CPU (issue 16), interleaved in one process.

torchtally keeps float64 sums of float32 inputs (the exactness contract: 1e-12 against float64
oracles, where the peers sum float32) and counts non-finite labels and predictions per kind with
value checks on by default. This times, per batch size, the shortest hand-written formulations of
those pieces next to torchtally's update and the peers', so that the gap to TorchMetrics and
torcheval splits into what the contract costs and what torchtally adds:

- `raw float32`: (p - y)² summed in float32 (the peers' arithmetic);
- `float64 stat`: both inputs copied into reused float64 buffers, subtracted, one dot (the least
  eager torch needs for a float64 Σ(p - y)²; R²: plus Σy and Σy²);
- `+ float32 counts`: that plus `1 + 0·x` and a nansum per input (two passes each);
- `+ marks`: that with the counts taken from the sums instead (non-finite entries of the float64
  copies overwritten in place by finite marks, Σy counting the label marks: torchtally's way);
- `float64 stat, 64K blocks` and `+ marks, 64K blocks`: the same two in blocks of 2^16 elements
  through reused cache-sized buffers (the form torchtally's eager CPU MSE takes): the least an
  exact float64 update costs on a CPU, per block one float32 -> float64 conversion per input,
  the subtraction and the reductions;
- mean: the float32 sum alone, and with the count; `float64 sum, 64K blocks` (the conversion
  and the sum, in blocks: the floor of an exact mean) and `+ marks` (torchtally's way of
  counting for a large float32 batch);
- `torchtally unchecked`: torchtally's update with `check_values=False` (its arithmetic alone,
  float64 sums for MSE and R², without the value checks).

`python -m benchmarks.bench_regression_floor [--rounds R] [--sizes N ...]`; thread CPU time,
one intra-op thread, medians in µs per update. torchtally's metrics run with coalescing off
here: each call is timed as the update of that batch size, not as a copy into a staging buffer.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable

import torch

from benchmarks._timing import interleaved

MARK_P, MARK_Y = 2.0**480, -(2.0**300)
#: Elements per block of the blocked floors (torchtally's eager CPU MSE and mean blocks).
BLOCK = 1 << 16


def _cases(n: int) -> dict[str, dict[str, Callable[[], object]]]:
    import torcheval.metrics as te
    import torchmetrics.aggregation as tma
    import torchmetrics.regression as tmr

    import torchtally.metrics as tt

    g = torch.Generator().manual_seed(0)
    scores = torch.rand(n, 2, generator=g)
    y, p = scores[:, 0].contiguous(), scores[:, 0] + 0.1 * scores[:, 1]
    p64, y64 = torch.empty(n, dtype=torch.float64), torch.empty(n, dtype=torch.float64)
    one = torch.ones(())

    def count(x: torch.Tensor) -> torch.Tensor:
        return n - torch.nansum(one.add(x, alpha=0))

    def stat(r2: bool) -> list[torch.Tensor]:
        y64.copy_(y)
        d = p64.copy_(p).sub_(y64)
        return [y64.sum(), torch.dot(y64, y64), torch.dot(d, d)] if r2 else [torch.dot(d, d)]

    def counted(r2: bool) -> tuple[object, ...]:
        return stat(r2), count(y), count(p)

    def marked(r2: bool) -> list[torch.Tensor]:
        y64.copy_(y).nan_to_num_(MARK_Y, MARK_Y, MARK_Y)
        d = p64.copy_(p).nan_to_num_(MARK_P, MARK_P, MARK_P).sub_(y64)
        sums = [y64.sum(), torch.dot(y64, y64)] if r2 else [y64.sum()]
        return [*sums, torch.dot(d, d)]

    block = min(n, BLOCK)
    a64, b64 = torch.empty(block, dtype=torch.float64), torch.empty(block, dtype=torch.float64)

    def blocked(r2: bool, marks: bool) -> list[torch.Tensor]:
        out: list[torch.Tensor] = []
        for start in range(0, n, block):
            labels = a64[: min(block, n - start)].copy_(y[start : start + block])
            d = b64[: labels.shape[0]].copy_(p[start : start + block])
            if marks:
                labels.nan_to_num_(MARK_Y, MARK_Y, MARK_Y)
                d.nan_to_num_(MARK_P, MARK_P, MARK_P)
            d.sub_(labels)
            if r2:
                out += [labels.sum(), torch.dot(labels, labels), torch.dot(d, d)]
            else:
                out += [labels.sum(), torch.dot(d, d)] if marks else [torch.dot(d, d)]
        return out

    def blocked_sum(marks: bool) -> list[torch.Tensor]:
        out = []
        for start in range(0, n, block):
            values = a64[: min(block, n - start)].copy_(y[start : start + block])
            if marks:
                values.nan_to_num_(MARK_Y, MARK_Y, MARK_Y)
            out.append(values.sum())
        return out

    def library(metric: object, *inputs: torch.Tensor) -> Callable[[], object]:
        return lambda: metric.update(*inputs)  # type: ignore[attr-defined]

    groups: dict[str, dict[str, Callable[[], object]]] = {}
    for family, r2 in (("MSE", False), ("R2", True)):
        ours = (tt.R2ScoreMetric if r2 else tt.MSEMetric)().coalesce_updates(False)
        peers = (
            (tmr.R2Score(), te.R2Score()) if r2 else (tmr.MeanSquaredError(), te.MeanSquaredError())
        )
        groups[family] = {
            "raw float32": (
                (lambda: (y.sum(), y.square().sum(), (y - p).square().sum()))
                if r2
                else (lambda: (p - y).square().sum())
            ),
            "float64 stat": functools.partial(stat, r2),
            "+ float32 counts": functools.partial(counted, r2),
            "+ marks": functools.partial(marked, r2),
            "float64 stat, 64K blocks": functools.partial(blocked, r2, False),
            "+ marks, 64K blocks": functools.partial(blocked, r2, True),
            "torchtally": library(ours, y, p),
            "torchtally unchecked": library(
                (tt.R2ScoreMetric if r2 else tt.MSEMetric)(check_values=False).coalesce_updates(
                    False
                ),
                y,
                p,
            ),
            "TorchMetrics": library(peers[0], p, y),
            "torcheval": library(peers[1], p, y),
        }
    mean = tt.MeanMetric().coalesce_updates(False)
    groups["mean"] = {
        "float32 sum": lambda: y.sum(),
        "+ float32 count": lambda: (y.sum(), count(y)),
        "float64 sum, 64K blocks": functools.partial(blocked_sum, False),
        "+ marks, 64K blocks": functools.partial(blocked_sum, True),
        "torchtally": library(mean, y),
        "torchtally unchecked": library(
            tt.MeanMetric(check_values=False).coalesce_updates(False), y
        ),
        "TorchMetrics": library(tma.MeanMetric(), y),
        "torcheval": library(te.Mean(), y),
    }
    return groups


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sizes", type=int, nargs="+", default=[65536, 262144])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for n in args.sizes:
        for family, group in _cases(n).items():
            timings = interleaved(group, rounds=args.rounds, clock=time.thread_time)
            us = {name: round(t.median_us, 1) for name, t in timings.items()}
            best = min(us["TorchMetrics"], us["torcheval"])
            ratios = {f"{name} / best peer": round(v / best, 2) for name, v in us.items()}
            print(json.dumps({"family": family, "batch": n, **us, **ratios}), flush=True)


if __name__ == "__main__":
    main()
