"""Floor of the eager exact-AUROC append on CPU (issue 16), interleaved in one process.

The issue bounds each exact-AUROC `update` by 1.2× one raw copy of the batch into a buffer.
torchtally stores a float32 key per score and a one-byte label code per sample, and with value
checks on (the default) counts invalid labels and non-finite scores. This times, per case, the
shortest hand-written eager formulations of those pieces next to torchtally's update, so that
the ratio to the raw copy splits into what storing and checking cost at least (the floor) and
what torchtally adds on top of it:

- `raw copy`: one slice copy of the scores and of the int64 labels into preallocated buffers
  (the eager grid's `raw copy`);
- `store`: the scores' slice copy, the labels copied into one-byte codes plus one (`copy_`,
  `add_`) and the fill count advanced (one `add_`): torchtally's layout, no checks;
- `+ label check`: plus the count of invalid labels (binary: `labels & -2`, one pass; 10
  classes: clamp, compare, count);
- `+ non-finite count`: plus the count of NaN or infinite scores (`x - x` counted below 4096
  scores, else `1 + 0·x` and a NaN-skipping sum): what value checks on need at least;
- `torchtally`, `torchtally unchecked` (`check_values=False`), `torchtally direct` (coalescing
  off: every call an update of that size).

`python -m benchmarks.bench_cat_floor [--rounds R]`; thread CPU time, one intra-op thread,
medians in µs per update (held batches applied inside each timed window, as in the eager grid);
one JSON line per case, ratios to `raw copy`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import torch

from benchmarks._timing import interleaved

#: (classes, batch): binary (None) and 10-class cases of the eager grid.
CASES = ((None, 64), (None, 1024), (None, 16384), (None, 262144), (10, 64), (10, 1024), (10, 16384))
#: Below this many scores the non-finite count is `count_nonzero(x - x)` (two dispatches).
SMALL = 4096


class _Appender:
    """One hand-written append variant: slices of preallocated buffers, an offset reset per
    timed window."""

    def __init__(self, labels: torch.Tensor, scores: torch.Tensor, capacity: int) -> None:
        self.labels, self.scores = labels, scores
        self.keys = torch.empty(capacity, *scores.shape[1:])
        self.raw_labels = torch.empty(capacity, dtype=labels.dtype)
        self.codes = torch.zeros(capacity, dtype=torch.uint8)
        self.fill = torch.zeros(1, dtype=torch.int64)
        self.one = torch.ones(())
        self.offset = 0

    def reset(self) -> None:
        self.offset = 0

    def raw_copy(self) -> None:
        start, n = self.offset, self.labels.shape[0]
        self.keys[start : start + n].copy_(self.scores)
        self.raw_labels[start : start + n].copy_(self.labels)
        self.offset += n

    def store(self) -> None:
        start, n = self.offset, self.labels.shape[0]
        self.keys[start : start + n].copy_(self.scores)
        self.codes[start : start + n].copy_(self.labels).add_(1)
        self.fill.add_(n)
        self.offset += n

    def invalid_labels(self, classes: int | None) -> torch.Tensor:
        if classes is None:
            return torch.count_nonzero(self.labels & -2)
        return torch.count_nonzero(self.labels.clamp(0, classes - 1) != self.labels)

    def nonfinite_scores(self) -> torch.Tensor:
        scores = self.scores
        if scores.numel() < SMALL:
            return torch.count_nonzero(scores - scores)
        return scores.numel() - torch.nansum(self.one.add(scores, alpha=0.0))

    def checked(self, classes: int | None, nonfinite: bool) -> tuple[torch.Tensor, ...]:
        self.store()
        invalid = self.invalid_labels(classes)
        return (invalid, self.nonfinite_scores()) if nonfinite else (invalid,)


def _group(
    classes: int | None, n: int, inner: int
) -> tuple[dict[str, Callable[[], object]], dict[str, Callable[[], object]], dict[str, Callable]]:
    import torchtally.metrics as tt

    g = torch.Generator().manual_seed(0)
    if classes is None:
        labels = torch.randint(0, 2, (n,), generator=g)
        scores = torch.rand(n, generator=g)
    else:
        labels = torch.randint(0, classes, (n,), generator=g)
        scores = torch.randn(n, classes, generator=g).softmax(-1)
    capacity = n * inner
    hand = _Appender(labels, scores, capacity)
    ours = tt.AUROCMetric(classes, capacity=capacity)
    unchecked = tt.AUROCMetric(classes, capacity=capacity, check_values=False)
    direct = tt.AUROCMetric(classes, capacity=capacity).coalesce_updates(False)
    group: dict[str, Callable[[], object]] = {
        "raw copy": hand.raw_copy,
        "store": hand.store,
        "+ label check": lambda: hand.checked(classes, nonfinite=False),
        "+ non-finite count": lambda: hand.checked(classes, nonfinite=True),
        "torchtally": lambda: ours.update(labels, scores),
        "torchtally unchecked": lambda: unchecked.update(labels, scores),
        "torchtally direct": lambda: direct.update(labels, scores),
    }
    prepare: dict[str, Callable[[], object]] = {
        name: hand.reset for name in ("raw copy", "store", "+ label check", "+ non-finite count")
    }
    prepare.update(
        {
            "torchtally": ours.reset,
            "torchtally unchecked": unchecked.reset,
            "torchtally direct": direct.reset,
        }
    )
    finish = {"torchtally": ours.flush, "torchtally unchecked": unchecked.flush}
    return group, prepare, finish


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for classes, n in CASES:
        # the grid's calls per timed window
        inner = max(1, min(50, 200_000 // (n * max(1, (classes or 1) // 10))))
        group, prepare, finish = _group(classes, n, inner)
        timings = interleaved(
            group,
            rounds=args.rounds,
            inner=inner,
            clock=time.thread_time,
            prepare=prepare,
            finish=finish,
        )
        us = {name: round(t.median_us, 1) for name, t in timings.items()}
        ratios = {f"{name} / raw copy": round(v / us["raw copy"], 2) for name, v in us.items()}
        print(json.dumps({"classes": classes, "batch": n, **us, **ratios}), flush=True)


if __name__ == "__main__":
    main()
